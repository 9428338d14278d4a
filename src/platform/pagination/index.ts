import { Type, type TProperties, type TSchema } from 'typebox';
import type { PageRequest } from '../../db/paging.js';

export type { PageRequest };

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
/** Deep offsets are slow and a sign of a client looping; cap them well above any real page walk. */
export const MAX_OFFSET = 10_000_000;

const pageProperties = {
  limit: Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size, 1 to 200.' }),
  offset: Type.Integer({ format: 'int32', minimum: 0, maximum: MAX_OFFSET, default: 0, description: 'Rows to skip.' }),
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

export const PageMeta = Type.Object(
  {
    limit: Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_LIMIT }),
    offset: Type.Integer({ format: 'int32', minimum: 0, maximum: MAX_OFFSET }),
    total: Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Rows matching the filters, over all pages.' }),
    has_more: Type.Boolean({ description: 'Whether raising offset by limit finds more rows.' }),
  },
  { title: 'PageMeta', additionalProperties: false },
);

/**
 * The reply of a list endpoint: one page of items and where it is. An item schema with a
 * `title` (`Contact`) makes the page a named schema too (`ContactList`) in the OpenAPI document.
 */
export function ListEnvelope<T extends TSchema>(item: T) {
  const name = (item as { title?: unknown }).title;
  const title = typeof name === 'string' ? { title: `${name}List` } : {};
  return Type.Object({ data: Type.Array(item, { maxItems: MAX_LIMIT }), meta: PageMeta }, { ...title, additionalProperties: false });
}

export function toPage<T>(rows: T[], total: number, page: PageRequest) {
  return {
    data: rows,
    meta: { limit: page.limit, offset: page.offset, total, has_more: page.offset + rows.length < total },
  };
}
