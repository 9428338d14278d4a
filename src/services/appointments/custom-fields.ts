import type { PageRequest } from '../../db/paging.js';
import { newId } from '../../lib/ids.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound, validationFailed, type ErrorDetail } from '../../platform/errors/app-error.js';
import * as repository from './repository.js';
import type { AppointmentsDb } from './repository.js';
import type { CreateCustomFieldInput, CustomFieldView } from './schemas.js';

/** Workspace definitions of custom fields, and the check of the values resources and assets carry. */
export function createCustomFieldRules(tables: AppointmentsDb) {
  return {
    async createCustomField(ctx: RequestContext, input: CreateCustomFieldInput): Promise<CustomFieldView> {
      if (input.type === 'select' && !input.options) throw invalidField('options', 'required', 'A select field needs options.');
      if (input.type !== 'select' && input.options) throw invalidField('options', 'invalid', 'Only select fields have options.');
      const row = await repository.insertCustomField(tables, ctx, {
        id: newId(),
        applies_to: input.applies_to,
        key: input.key,
        label: input.label.trim(),
        type: input.type,
        options: input.options ? [...new Set(input.options)] : [],
        created_at: ctx.now,
      });
      if (!row) throw new AppError('conflict', `A ${input.applies_to} field with key ${input.key} exists already.`);
      return row;
    },

    async listCustomFields(ctx: RequestContext, filters: { applies_to?: 'resource' | 'asset' }, page: PageRequest) {
      return repository.listCustomFields(tables, ctx, { appliesTo: filters.applies_to }, page);
    },

    async deleteCustomField(ctx: RequestContext, id: string): Promise<{ id: string; deleted: true }> {
      if (!(await repository.deleteCustomField(tables, ctx, id))) throw notFound('Custom field');
      return { id, deleted: true as const };
    },
  };
}

/** The 400 naming every value that no definition of `appliesTo` allows (unknown key, wrong type, not an option); null clears a value. */
export async function checkCustomFields(db: AppointmentsDb, ctx: RequestContext, appliesTo: 'resource' | 'asset', values: Record<string, unknown> | undefined): Promise<void> {
  if (values === undefined || Object.keys(values).length === 0) return;
  const definitions = new Map((await repository.customFieldsFor(db, ctx, appliesTo)).map((field) => [field.key, field]));
  const problems: ErrorDetail[] = [];
  for (const [key, value] of Object.entries(values)) {
    const path = `custom_fields/${key}`;
    const field = definitions.get(key);
    if (!field) {
      problems.push({ path, code: 'unknown_field', message: `No ${appliesTo} custom field ${key} is defined (see /appointments/custom-fields).` });
      continue;
    }
    if (value === null) continue;
    const ok =
      field.type === 'text'
        ? typeof value === 'string'
        : field.type === 'number'
          ? typeof value === 'number'
          : field.type === 'boolean'
            ? typeof value === 'boolean'
            : typeof value === 'string' && field.options.includes(value);
    if (!ok) problems.push({ path, code: 'invalid', message: field.type === 'select' ? `One of: ${field.options.join(', ')}.` : `A ${field.type} value.` });
  }
  if (problems.length > 0) throw validationFailed(problems);
}
