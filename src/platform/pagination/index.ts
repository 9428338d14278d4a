import { Type, type TProperties, type TSchema } from 'typebox';
import type { PageRequest } from '../../db/paging.js';

export type { PageRequest };

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
/** Deep offsets are slow and a sign of a client looping; cap them well above any real page walk. */
export const MAX_OFFSET = 10_000_000;

const pageProperties = {
  limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size, 1 to 200.' }),
  offset: Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: 'Rows to skip.' }),
};

/**
 * Query schema of a list endpoint: `limit`, `offset` and the endpoint's own filters. `limit`
 * and `offset` are optional in the document (clients may leave them out) and always present
 * in the handler, where validation has filled in their defaults.
 */
export function ListQuery<T extends TProperties>(filters: T) {
  const schema = Type.Object({ ...pageProperties, ...filters }, { additionalProperties: false });
  const defaulted = new Set(Object.keys(pageProperties));
  const json = schema as { required?: string[] };
  const required = (json.required ?? []).filter((name) => !defaulted.has(name));
  if (required.length > 0) json.required = required;
  else delete json.required;
  return schema;
}

export const PageMeta = Type.Object({
  limit: Type.Integer(),
  offset: Type.Integer(),
  total: Type.Integer({ description: 'Rows matching the filters, over all pages.' }),
  has_more: Type.Boolean({ description: 'Whether raising offset by limit finds more rows.' }),
});

export function ListEnvelope<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), meta: PageMeta });
}

export function toPage<T>(rows: T[], total: number, page: PageRequest) {
  return {
    data: rows,
    meta: { limit: page.limit, offset: page.offset, total, has_more: page.offset + rows.length < total },
  };
}
