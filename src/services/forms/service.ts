import { Readable } from 'node:stream';
import type { Db } from '../../db/database.js';
import type { PageRequest } from '../../db/paging.js';
import { newId } from '../../lib/ids.js';
import { firstFreeSlug, slugCandidatesPrefix, slugify } from '../../lib/slug.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import type { EventLog } from '../../platform/events/event-log.js';
import { AppError, notFound, validationFailed } from '../../platform/errors/app-error.js';
import { csvRow, headerRow } from './csv.js';
import { validateFieldDefinitions, validateSubmissionData, type FieldDefinition, type FieldInput } from './fields.js';
import * as repository from './repository.js';
import type { ExportCursor, ExportRowValues, FormChanges, FormRow, FormsDb, SubmissionRow } from './repository.js';
import { MAX_METADATA_BYTES, type CreateFormInput, type FormView, type SubmissionView, type SubmitInput, type UpdateFormInput } from './schemas.js';
import type { FormStatus } from './tables.js';

/** Rows fetched per keyset batch of the CSV export. */
export const EXPORT_BATCH_SIZE = 1_000;
/** Size of the Buffers the export writes its lines into and sends. */
const EXPORT_CHUNK_BYTES = 64 * 1024;
const DERIVED_SLUG_ATTEMPTS = 5;

/** Form definitions, submissions to published forms, read/unread marking and CSV export. */
export function createFormsService({ db, events }: { db: Db; events: EventLog }) {
  const forms = repository.formsDb(db);

  function checkedFields(inputs: FieldInput[]): FieldDefinition[] {
    const { fields, details } = validateFieldDefinitions(inputs);
    if (details.length > 0) throw validationFailed(details);
    return fields;
  }

  function slugTaken(slug: string): AppError {
    return new AppError('slug_taken', `Another form already uses the slug "${slug}".`, [
      { path: 'slug', code: 'taken', message: `slug "${slug}" is taken; choose another or leave it out to derive one from the name.` },
    ]);
  }

  /** The form the URL names, locked so submission changes and counter updates are serialised per form. */
  async function lockedForm(tx: FormsDb, ctx: RequestContext, formId: string): Promise<FormRow> {
    const form = await repository.findForm(tx, ctx, formId, { lock: 'noKeyUpdate' });
    if (!form) throw notFound('Form');
    return form;
  }

  return {
    async createForm(ctx: RequestContext, input: CreateFormInput): Promise<FormView> {
      const fields = checkedFields(input.fields ?? []);
      const row = (slug: string) => ({
        id: newId(),
        name: input.name.trim(),
        slug,
        description: input.description ?? null,
        status: input.status ?? 'draft',
        fields: JSON.stringify(fields),
        success_message: input.success_message ?? null,
        redirect_url: input.redirect_url ?? null,
        created_at: ctx.now,
        updated_at: ctx.now,
      });

      if (input.slug !== undefined) {
        const slug = input.slug;
        if (await repository.isSlugTaken(forms, ctx, slug)) throw slugTaken(slug);
        try {
          return presentForm(await repository.insertForm(forms, ctx, row(slug)));
        } catch (error) {
          if (repository.isSlugConflict(error)) throw slugTaken(slug);
          throw error;
        }
      }

      // Derived slugs are numbered past the ones in use; a concurrent create taking the
      // same number between our read and insert just moves us to the next one.
      const base = slugify(input.name);
      for (let attempt = 1; ; attempt += 1) {
        const taken = await repository.slugsStartingWith(forms, ctx, slugCandidatesPrefix(base));
        const slug = await firstFreeSlug(base, async (candidate) => taken.has(candidate));
        try {
          return presentForm(await repository.insertForm(forms, ctx, row(slug)));
        } catch (error) {
          if (!repository.isSlugConflict(error)) throw error;
          if (attempt >= DERIVED_SLUG_ATTEMPTS) throw slugTaken(slug);
        }
      }
    },

    async getForm(ctx: RequestContext, id: string): Promise<FormView> {
      const row = await repository.findForm(forms, ctx, id);
      if (!row) throw notFound('Form');
      return presentForm(row);
    },

    async getFormBySlug(ctx: RequestContext, slug: string): Promise<FormView> {
      const row = await repository.findFormBySlug(forms, ctx, slug);
      if (!row) throw notFound('Form');
      return presentForm(row);
    },

    async listForms(ctx: RequestContext, filters: { status?: FormStatus; search?: string }, page: PageRequest) {
      const { rows, total } = await repository.listForms(forms, ctx, filters, page);
      return { rows: rows.map(presentForm), total };
    },

    async updateForm(ctx: RequestContext, id: string, input: UpdateFormInput): Promise<FormView> {
      const fields = input.fields === undefined ? undefined : checkedFields(input.fields);
      try {
        return await forms.transaction().execute(async (tx) => {
          const current = await repository.findForm(tx, ctx, id, { lock: 'update' });
          if (!current) throw notFound('Form');
          assertFresh(input.expected_updated_at, current.updated_at);
          if (input.slug !== undefined && input.slug !== current.slug && (await repository.isSlugTaken(tx, ctx, input.slug, id))) {
            throw slugTaken(input.slug);
          }
          const changes: FormChanges = { updated_at: nextUpdatedAt(current.updated_at, ctx.now) };
          if (input.name !== undefined) changes.name = input.name.trim();
          if (input.slug !== undefined) changes.slug = input.slug;
          if (input.description !== undefined) changes.description = input.description;
          if (input.status !== undefined) changes.status = input.status;
          if (fields !== undefined) changes.fields = JSON.stringify(fields);
          if (input.success_message !== undefined) changes.success_message = input.success_message;
          if (input.redirect_url !== undefined) changes.redirect_url = input.redirect_url;
          return presentForm(await repository.updateForm(tx, ctx, id, changes));
        });
      } catch (error) {
        if (repository.isSlugConflict(error) && input.slug !== undefined) throw slugTaken(input.slug);
        throw error;
      }
    },

    async deleteForm(ctx: RequestContext, id: string): Promise<{ id: string; deleted: true }> {
      if (!(await repository.deleteForm(forms, ctx, id))) throw notFound('Form');
      return { id, deleted: true };
    },

    async submit(ctx: RequestContext, slug: string, input: SubmitInput): Promise<SubmissionView> {
      const metadata = input.metadata ?? {};
      const metadataBytes = Buffer.byteLength(JSON.stringify(metadata));
      if (metadataBytes > MAX_METADATA_BYTES) {
        throw validationFailed([{ path: 'metadata', code: 'invalid_length', message: `metadata must be at most ${MAX_METADATA_BYTES} bytes as JSON; it is ${metadataBytes}.` }]);
      }
      return forms.transaction().execute(async (tx) => {
        const form = await repository.findFormBySlug(tx, ctx, slug, { lockForSubmission: true });
        if (!form) throw notFound('Form');
        if (form.status !== 'published') {
          throw new AppError('form_not_published', `This form is ${form.status}; only a published form accepts submissions.`, [
            { path: 'status', code: 'invalid_value', message: `The form's status is ${form.status}.`, status: form.status },
          ]);
        }
        const { values, details } = validateSubmissionData(form.fields, input.data);
        if (details.length > 0) throw validationFailed(details);
        const row = await repository.insertSubmission(tx, ctx, {
          id: newId(),
          form_id: form.id,
          data: JSON.stringify(values),
          metadata: JSON.stringify(metadata),
          read: false,
          read_at: null,
          submitted_at: ctx.now,
        });
        await repository.adjustCounts(tx, ctx, form.id, { submissions: 1, unread: 1 });
        const submission = presentSubmission(row);
        await events.record(tx, ctx, 'forms.submission.created', submission);
        return submission;
      });
    },

    async listSubmissions(ctx: RequestContext, formId: string, filters: { read?: boolean }, page: PageRequest) {
      // Side by side: the page of an unknown form is simply empty, and the form is checked after.
      const [form, rows] = await Promise.all([repository.findForm(forms, ctx, formId), repository.listSubmissions(forms, ctx, formId, filters, page)]);
      if (!form) throw notFound('Form');
      // The form's counters are kept in the same transactions as the rows: no count(*) over a big form.
      const total = filters.read === undefined ? form.submission_count : filters.read ? form.submission_count - form.unread_count : form.unread_count;
      return { rows: rows.map(presentSubmission), total };
    },

    /** Reads one submission and marks it read (the spec's state table: unread -> read on GET). */
    async readSubmission(ctx: RequestContext, formId: string, submissionId: string): Promise<SubmissionView> {
      const seen = await repository.findSubmission(forms, ctx, formId, submissionId);
      if (!seen) throw notFound('Submission');
      if (seen.read) return presentSubmission(seen);
      return presentSubmission(await markRead(ctx, formId, submissionId, true));
    },

    async updateSubmission(ctx: RequestContext, formId: string, submissionId: string, input: { read: boolean }): Promise<SubmissionView> {
      return presentSubmission(await markRead(ctx, formId, submissionId, input.read));
    },

    async deleteSubmission(ctx: RequestContext, formId: string, submissionId: string): Promise<{ id: string; deleted: true }> {
      return forms.transaction().execute(async (tx) => {
        await lockedForm(tx, ctx, formId);
        const deleted = await repository.deleteSubmission(tx, ctx, formId, submissionId);
        if (!deleted) throw notFound('Submission');
        await repository.adjustCounts(tx, ctx, formId, { submissions: -1, unread: deleted.read ? 0 : -1 });
        return { id: deleted.id, deleted: true as const };
      });
    },

    /**
     * The CSV export: the form is looked up now (so an unknown id is a 404 before anything
     * is sent); the rows are read lazily in keyset batches as the consumer pulls, so memory
     * stays flat whatever the number of submissions, and a consumer that goes away stops
     * the reads. Columns are the form's fields at the start of the export.
     */
    async exportSubmissionsCsv(ctx: RequestContext, formId: string): Promise<{ filename: string; stream: Readable }> {
      const form = await repository.findForm(forms, ctx, formId);
      if (!form) throw notFound('Form');
      const fields = form.fields;
      const id = form.id;
      async function* chunks(): AsyncGenerator<Buffer> {
        yield Buffer.from(headerRow(fields));
        let after: ExportCursor | undefined;
        let chunk = Buffer.allocUnsafe(EXPORT_CHUNK_BYTES);
        let used = 0;
        for (;;) {
          const batch = await repository.exportBatch(forms, ctx, id, after, EXPORT_BATCH_SIZE);
          // Each row is parsed, turned into its CSV line and copied into a Buffer (outside the
          // JS heap) at once, so almost nothing lives long enough to reach V8's old generation
          // and the process's memory stays flat however many rows there are.
          let last: ExportRowValues | undefined;
          for (const { row } of batch) {
            last = JSON.parse(row) as ExportRowValues;
            const line = csvRow(fields, { id: last[0], submitted_at: last[1], read: last[2], data: last[3] });
            if (used + Buffer.byteLength(line) > chunk.length) {
              if (used > 0) yield chunk.subarray(0, used);
              chunk = Buffer.allocUnsafe(Math.max(EXPORT_CHUNK_BYTES, Buffer.byteLength(line)));
              used = 0;
            }
            used += chunk.write(line, used);
          }
          if (batch.length < EXPORT_BATCH_SIZE) break;
          after = { at: last![4], id: last![0] };
        }
        if (used > 0) yield chunk.subarray(0, used);
      }
      return { filename: `${form.slug}-submissions.csv`, stream: Readable.from(chunks(), { objectMode: false }) };
    },
  };

  /** Sets read/unread under the form's lock and moves the unread counter when it changed. */
  async function markRead(ctx: RequestContext, formId: string, submissionId: string, read: boolean): Promise<SubmissionRow> {
    return forms.transaction().execute(async (tx) => {
      await lockedForm(tx, ctx, formId);
      const changed = await repository.setSubmissionRead(tx, ctx, formId, submissionId, read, read ? ctx.now : null);
      if (changed) {
        await repository.adjustCounts(tx, ctx, formId, { submissions: 0, unread: read ? -1 : 1 });
        return changed;
      }
      const current = await repository.findSubmission(tx, ctx, formId, submissionId);
      if (!current) throw notFound('Submission');
      return current;
    });
  }
}

export type FormsService = ReturnType<typeof createFormsService>;

function presentForm(row: FormRow): FormView {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    status: row.status,
    fields: row.fields.map(presentField),
    success_message: row.success_message,
    redirect_url: row.redirect_url,
    submission_count: row.submission_count,
    unread_count: row.unread_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * A field in the schema's property order (jsonb hands keys back sorted by length), optional
 * settings only when set: the reply is then written without a copy.
 */
function presentField(field: FieldDefinition): FieldDefinition {
  const shown: FieldDefinition = { key: field.key, label: field.label, type: field.type, required: field.required };
  if (field.options !== undefined) shown.options = field.options.map((option) => ({ value: option.value, label: option.label }));
  if (field.min !== undefined) shown.min = field.min;
  if (field.max !== undefined) shown.max = field.max;
  if (field.max_length !== undefined) shown.max_length = field.max_length;
  if (field.pattern !== undefined) shown.pattern = field.pattern;
  return shown;
}

/** A submission row is already in the API's shape (the reply serialiser writes its timestamps). */
function presentSubmission(row: SubmissionRow): SubmissionView {
  return row;
}
