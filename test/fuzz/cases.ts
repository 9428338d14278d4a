import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { WorldIds } from '../world.js';

/**
 * Hostile requests for one OpenAPI operation, generated from its parameter and body schemas.
 * Values come from fast-check with a fixed seed, so every run sends the same requests.
 */

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  default?: unknown;
  examples?: unknown[];
}

export interface Parameter {
  in: 'query' | 'path' | 'header';
  name: string;
  schema?: JsonSchema;
}

export interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body: JsonSchema | undefined;
  /** The body is raw bytes, not JSON (the social upload PUT): JSON shape rules do not apply to it. */
  binary?: boolean;
}

export interface FuzzCase {
  name: string;
  /** Path and query, already encoded. */
  url: string;
  body?: string | Buffer;
  contentType?: string;
}

const SEED = 20_261_122;
const ONE_MEGABYTE = 1024 * 1024;
const BIG_STRING = 'x'.repeat(ONE_MEGABYTE);

/** Strings with one C0 control character (never tab, LF, CR) somewhere in printable text. */
const controlStrings = fc
  .tuple(
    fc.string({ maxLength: 12 }),
    fc.integer({ min: 0, max: 31 }).filter((code) => code !== 9 && code !== 10 && code !== 13),
    fc.string({ maxLength: 12 }),
  )
  .map(([before, code, after]) => `${before}${String.fromCharCode(code)}${after}`);

/** Text with a UTF-16 half that has lost its partner. */
const loneSurrogates = fc
  .tuple(fc.string({ maxLength: 8 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 8 }))
  .map(([before, unit, after]) => `${before}${String.fromCharCode(unit)}${after}`);

const sample = <T>(arbitrary: fc.Arbitrary<T>, count: number, offset = 0): T[] => fc.sample(arbitrary, { seed: SEED + offset, numRuns: count });

const HOSTILE_STRINGS: string[] = ['\u0000', 'a\u0000b', '\u001b[31m', '\ud800', 'x\udc00', ...sample(controlStrings, 4), ...sample(loneSurrogates, 2, 1)];
const HOSTILE_NUMBERS: number[] = [1e308, -1e308, 1.5, -0.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, Number.MIN_VALUE];
const WRONG_SHAPES: unknown[] = [null, [], {}, true, 'text'];

/** Text values for query strings and path parameters (raw: they are encoded by the caller unless marked). */
const HOSTILE_TEXT_PARAMETERS = ['\u0000', 'a\u0001b', '\t', '1e308', '-1e308', '1.5', '-1', '0', '99999999999999999999999', '__proto__', 'constructor'];
/** Already percent-encoded: invalid UTF-8 and encoded surrogates that no encoder would produce. */
const RAW_PARAMETERS = ['%ff', '%c0%80', '%ed%a0%80', '%e2%82', '%'];

/** Ids a body may name: the world's real ones, so a request gets past "not found" into the rules. */
const ID_FIELDS: Record<string, keyof WorldIds> = {
  customer_id: 'customer',
  invoice_id: 'invoice',
  customer_payment_id: 'payment',
  product_id: 'product',
  price_id: 'price',
  contact_id: 'contact',
  company_id: 'company',
};

export function casesFor(operation: Operation, fillPath: (template: string) => string, ids: WorldIds): FuzzCase[] {
  const path = fillPath(operation.path);
  const cases: FuzzCase[] = [];
  const freshBase = () => (operation.body ? baseBody(operation, ids) : undefined);
  const base = freshBase();
  const baseQuery = validQuery(operation);
  const withQuery = (query: string) => `${path}?${query}`;
  const json = (name: string, body: unknown): FuzzCase => ({ name, url: path, body: JSON.stringify(body), contentType: 'application/json' });
  const raw = (name: string, body: string | Buffer): FuzzCase => ({ name, url: path, body, contentType: 'application/json' });

  // Path parameters, one at a time.
  for (const parameter of operation.parameters.filter((one) => one.in === 'path')) {
    const values = [...HOSTILE_TEXT_PARAMETERS.map(encodeURIComponent), ...RAW_PARAMETERS, 'x'.repeat(600)];
    for (const value of values) {
      cases.push({ name: `path ${parameter.name}=${value.slice(0, 20)}`, url: fillPath(operation.path.replace(`{${parameter.name}}`, value)) });
    }
  }

  // Query parameters: each declared one with hostile values, then limits and unknown names.
  for (const parameter of operation.parameters.filter((one) => one.in === 'query')) {
    const values = [...HOSTILE_TEXT_PARAMETERS.map(encodeURIComponent), ...RAW_PARAMETERS, encodeURIComponent(BIG_STRING)];
    for (const value of values) cases.push({ name: `query ${parameter.name}=${value.slice(0, 20)}`, url: withQuery(`${parameter.name}=${value}`) });
    cases.push({ name: `query ${parameter.name} twice`, url: withQuery(`${parameter.name}=1&${parameter.name}=2`) });
  }
  for (const query of ['limit=0', 'limit=201', 'limit=-1', 'limit=1e308', 'limit=1.5', 'offset=-1', 'offset=10000001', 'offset=1e308', 'offset=-1e308', 'offset=0x10']) {
    cases.push({ name: `query ${query}`, url: withQuery(query) });
  }
  for (const query of ['zzz_unknown=1', '__proto__=1', 'constructor=1', 'a%00=1', '%ff=1']) {
    cases.push({ name: `query ${query}`, url: withQuery(baseQuery ? `${baseQuery}&${query}` : query) });
  }

  if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(operation.method)) return cases;

  // Whole bodies of the wrong shape, broken encodings, hostile nesting and keys.
  for (const body of ['null', '[]', '[{}]', '0', '-1e308', '1e308', '"text"', 'true', '{', '{"a":1,}']) cases.push(raw(`body ${body}`, body));
  cases.push(raw('body with invalid UTF-8', Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0x41]), Buffer.from('"}')])));
  cases.push(raw('body with overlong NUL', Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xc0, 0x80]), Buffer.from('"}')])));
  cases.push(raw('body with an encoded surrogate', Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')])));
  cases.push(raw('body nested 10,000 objects deep', `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`));
  cases.push(raw('body nested 10,000 arrays deep', `{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`));
  cases.push(raw('body __proto__', '{"__proto__":{"polluted":true}}'));
  cases.push(raw('body constructor.prototype', '{"constructor":{"prototype":{"polluted":true}}}'));
  cases.push(raw('body over 1 MiB', `{"name":"${BIG_STRING}"}`));
  cases.push({ name: 'body as text/plain', url: path, body: '{}', contentType: 'text/plain' });
  cases.push({ name: 'body as form', url: path, body: 'a=1', contentType: 'application/x-www-form-urlencoded' });
  cases.push({ name: 'body without content type', url: path, body: '{"a":1}' });
  cases.push(json('body with an unknown field', { ...(isObject(base) ? base : {}), zzz_unknown: 1 }));
  cases.push(json('body with a control character in a field name', { ...(isObject(base) ? base : {}), 'a\u0000b': 1 }));
  if (isObject(base)) {
    const text = JSON.stringify(base);
    const spliced = (extra: string) => (text === '{}' ? `{${extra}}` : `${text.slice(0, -1)},${extra}}`);
    cases.push(raw('base body with __proto__', spliced('"__proto__":{"polluted":true}')));
    cases.push(raw('base body with constructor.prototype', spliced('"constructor":{"prototype":{"polluted":true}}')));
  }

  // Field by field: hostile values, and values at and beyond the schema's own limits.
  if (operation.body && isObject(base)) {
    for (const [field, schema, setField] of fieldsOf(operation.body, () => freshBase() as Record<string, unknown>)) {
      for (const value of [...valuesFor(schema), ...WRONG_SHAPES]) {
        cases.push(json(`${field}=${label(value)}`, setField(value)));
      }
    }
  }
  return cases;
}

/** Values for one field: hostile strings everywhere, hostile numbers and the limits where numbers go. */
function valuesFor(schema: JsonSchema): unknown[] {
  const types = typesOf(schema);
  const values: unknown[] = [...HOSTILE_STRINGS, BIG_STRING.slice(0, ONE_MEGABYTE - 200)];
  if (types.has('string') && schema.maxLength !== undefined) {
    values.push('é'.repeat(schema.maxLength), '😀'.repeat(Math.ceil(schema.maxLength / 2)), 'é'.repeat(schema.maxLength + 1));
  }
  if (types.has('integer') || types.has('number')) {
    values.push(...HOSTILE_NUMBERS);
    const low = schema.minimum ?? -(2 ** 53);
    const high = schema.maximum ?? 2 ** 53;
    values.push(low, high, low - 1, high + 1);
    values.push(...sample(fc.integer({ min: Math.max(low, Number.MIN_SAFE_INTEGER), max: Math.min(high, Number.MAX_SAFE_INTEGER) }), 3, 2));
  }
  if (types.has('object') || schema.additionalProperties !== undefined) {
    values.push({ 'a\u0000': 'x' }, { fine: 1, nested: { deeper: '\u0000' } }, nest(40));
  }
  return values;
}

/**
 * Every field of the body schema, top-level and inside the first element of arrays of
 * objects, each with a function that returns the base body with that one field replaced.
 */
function fieldsOf(schema: JsonSchema, base: () => Record<string, unknown>): Array<[string, JsonSchema, (value: unknown) => unknown]> {
  const fields: Array<[string, JsonSchema, (value: unknown) => unknown]> = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    fields.push([name, property, (value) => ({ ...base(), [name]: value })]);
    const items = firstOf(property).items;
    if (items?.properties) {
      for (const [inner, innerSchema] of Object.entries(items.properties)) {
        fields.push([
          `${name}[0].${inner}`,
          innerSchema,
          (value) => {
            const body = base();
            const first = Array.isArray(body[name]) && isObject(body[name][0]) ? body[name][0] : baseValue(items);
            return { ...body, [name]: [{ ...(first as Record<string, unknown>), [inner]: value }] };
          },
        ]);
      }
    }
  }
  return fields;
}

/**
 * Bodies the schema alone cannot describe well enough to be accepted (rules across fields,
 * data a form defines): these start from a known-good body instead.
 */
const KNOWN_GOOD_BODIES: Record<string, (ids: WorldIds) => Record<string, unknown>> = {
  'POST /api/v1/services/forms/forms/{slug}/submit': () => ({ data: { name: 'fuzz visitor', email: 'visitor@example.com' } }),
  'POST /api/v1/services/catalog/catalog/coupons': () => ({ code: 'FUZZ', percent_off: 10 }),
  'POST /api/v1/services/catalog/catalog/subscriptions': (ids) => ({ product_id: ids.product, contact_id: ids.contact }),
  'POST /api/v1/services/payments/checkout-sessions': () => ({ amount_cents: 1200, description: 'Fuzz', currency: 'USD', success_url: 'https://example.com/ok' }),
  'POST /api/v1/services/payments/payment-links': () => ({ name: 'Fuzz link', amount_cents: 1200, currency: 'USD' }),
  'POST /api/v1/services/invoicing/invoices/{id}/payments': () => ({ amount: '0.01' }),
  'POST /api/v1/services/invoicing/refunds': (ids) => ({ invoice_id: ids.invoice, customer_payment_id: ids.payment, amount: '0.01' }),
  'POST /api/v1/services/invoicing/approval-policies': () => ({ action: 'refund', min_amount: '1000000.00' }),
};

/**
 * A body that passes the schema where it can: a known-good body, the schema's example, or its
 * required fields, with the world's real ids, and fresh values where a field must be unique
 * (emails, slugs, codes), so that values at the limits reach the database instead of a conflict.
 */
export function baseBody(operation: Operation, ids: WorldIds): unknown {
  const schema = operation.body ?? {};
  const known = KNOWN_GOOD_BODIES[`${operation.method} ${operation.path}`];
  const example = schema.examples?.[0];
  const body = known ? known(ids) : isObject(example) ? { ...example } : baseValue(schema);
  if (!isObject(body)) return body;
  for (const [field, property] of Object.entries(schema.properties ?? {})) {
    const resource = ID_FIELDS[field];
    if (resource && (field in body || schema.required?.includes(field))) body[field] = ids[resource];
    if (!(field in body)) continue;
    const unique = randomUUID().slice(0, 8);
    if (firstOf(property).format === 'email') body[field] = `fuzz-${unique}@example.com`;
    if (field === 'slug') body[field] = `fuzz-${unique}`;
    if (field === 'code' && operation.path.endsWith('/coupons')) body[field] = `FUZZ${unique}`;
  }
  return body;
}

function baseValue(schema: JsonSchema): unknown {
  const chosen = firstOf(schema);
  if (chosen.examples?.[0] !== undefined) return chosen.examples[0];
  if (chosen.default !== undefined) return chosen.default;
  if (chosen.enum) return chosen.enum[0];
  const types = typesOf(schema);
  if (types.has('object') || chosen.properties) {
    const value: Record<string, unknown> = {};
    for (const name of chosen.required ?? []) value[name] = baseValue(chosen.properties?.[name] ?? {});
    return value;
  }
  if (types.has('array')) return chosen.minItems ? [baseValue(chosen.items ?? {})] : [];
  if (types.has('integer') || types.has('number')) return chosen.minimum ?? 1;
  if (types.has('boolean')) return true;
  switch (chosen.format) {
    case 'email':
      return `fuzz-${randomUUID().slice(0, 8)}@example.com`;
    case 'date-time':
      return new Date(Date.now() + 86_400_000).toISOString();
    case 'date':
      return '2030-01-15';
    case 'uri':
      return 'https://example.com/fuzz';
    case 'uuid':
      return randomUUID();
    case 'iso-4217':
      return 'USD';
  }
  return chosen.pattern?.startsWith('^[Hh][Tt][Tt][Pp]') ? 'https://example.com/fuzz' : 'fuzz value';
}

function validQuery(operation: Operation): string {
  return operation.parameters.some((one) => one.in === 'query' && one.name === 'limit') ? 'limit=5' : '';
}

function firstOf(schema: JsonSchema): JsonSchema {
  return schema.anyOf?.find((option) => option.type !== 'null') ?? schema;
}

function typesOf(schema: JsonSchema): Set<string> {
  const types = new Set<string>();
  for (const option of schema.anyOf ?? [schema]) for (const type of [option.type ?? []].flat()) types.add(type);
  return types;
}

function nest(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let level = 0; level < depth; level += 1) value = { level: value };
  return value;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function label(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 24 ? `${text.slice(0, 24)}…(${text.length})` : text;
}
