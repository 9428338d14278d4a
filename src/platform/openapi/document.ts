import { errorCodesIn, errorExamples } from '../errors/examples.js';
import { KEY_PATTERN, MAX_KEY_LENGTH } from '../idempotency/hooks.js';

/*
 * The finishing pass over the document @fastify/swagger assembles from the route schemas. It only
 * adds what the schemas cannot say themselves (names, headers, examples of error bodies) and never
 * changes what a schema accepts: the route schemas stay the validators and serialisers as they are.
 */

type Json = Record<string, unknown>;

interface Response {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: Json; examples?: unknown }>;
}

interface Operation {
  summary?: string;
  parameters?: Array<{ name: string; in: string; schema?: Json; description?: string }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: { required?: unknown[] } }> };
  responses?: Record<string, Response>;
}

interface Document {
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Json>; headers?: Record<string, unknown> };
}

const PUBLIC_PREFIX = '/api/v1/services/';
const ADMIN_PREFIX = '/admin/v1/';

export function finishDocument<T>(document: T): T {
  const doc = document as Document;
  hoistNamedSchemas(doc);
  (doc.components ??= {}).headers = HEADERS;
  visitSchemas(doc, addIntegerFormat);
  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      markOptionalBody(operation);
      const idempotent = describeIdempotencyKey(operation);
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (status.startsWith('2') && response.description === 'Default Response') response.description = successDescription(status, response, operation);
        if (Number(status) >= 400) addErrorExamples(Number(status), response);
        response.headers = { ...headersOf(path, Number(status), idempotent, isKeyless(operation)), ...response.headers };
      }
    }
  }
  return document;
}

/**
 * @fastify/swagger marks every request body required; a body whose schema requires no
 * field may be omitted (the platform's input guard reads it as `{}`), so say so.
 */
function markOptionalBody(operation: Operation): void {
  const body = operation.requestBody;
  const schema = body?.content?.['application/json']?.schema;
  if (body && schema && !(schema.required?.length ?? 0)) body.required = false;
}

/* ---------------------------------------------------------------------------------------------
 * Named schemas. A schema with a `title` (every resource, and every `<Resource>List`) moves to
 * components.schemas under that name and is referenced with $ref wherever it appears, so
 * generated clients get real type names. The route schemas themselves keep their inline form,
 * which the validator and serialiser compile as before.
 */

/** Keywords whose values are data, not schemas. */
const DATA_KEYWORDS = new Set(['examples', 'example', 'default', 'const', 'enum']);

function hoistNamedSchemas(doc: Document): void {
  const components = (doc.components ??= {});
  const named = (components.schemas ??= {});
  const hoist = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(hoist);
    if (node === null || typeof node !== 'object') return node;
    const object = node as Json;
    for (const [key, value] of Object.entries(object)) {
      if (!DATA_KEYWORDS.has(key)) object[key] = hoist(value);
    }
    const title = object.title;
    if (typeof title !== 'string' || !isSchema(object)) return object;
    const existing = named[title];
    if (existing === undefined) named[title] = object;
    else if (existing !== object && JSON.stringify(existing) !== JSON.stringify(object)) {
      throw new Error(`Two different schemas are named ${title}; give one of them another title.`);
    }
    return { $ref: `#/components/schemas/${title}` };
  };
  doc.paths = hoist(doc.paths) as Document['paths'];
  for (const [name, schema] of Object.entries(named)) {
    for (const [key, value] of Object.entries(schema)) if (!DATA_KEYWORDS.has(key)) schema[key] = hoist(value);
    named[name] = schema;
  }
}

function isSchema(object: Json): boolean {
  return 'type' in object || 'properties' in object || 'anyOf' in object || 'oneOf' in object || 'allOf' in object;
}

/* ---------------------------------------------------------------------------------------------
 * Integer formats, read from the bounds each integer schema already has (and enforces).
 */

const INT32 = { minimum: -(2 ** 31), maximum: 2 ** 31 - 1 };

function addIntegerFormat(schema: Json): void {
  const { type, minimum, maximum } = schema;
  const isInteger = type === 'integer' || (Array.isArray(type) && type.includes('integer'));
  if (!isInteger || schema.format !== undefined || typeof minimum !== 'number' || typeof maximum !== 'number') return;
  schema.format = minimum >= INT32.minimum && maximum <= INT32.maximum ? 'int32' : 'int64';
}

/** Calls `visit` on every schema object of the document (data keywords such as examples left alone). */
function visitSchemas(doc: Document, visit: (schema: Json) => void): void {
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    const object = node as Json;
    if (typeof object.type === 'string' || Array.isArray(object.type)) visit(object);
    for (const [key, value] of Object.entries(object)) if (!DATA_KEYWORDS.has(key)) walk(value);
  };
  walk(doc.paths);
  walk(doc.components);
}

/* ---------------------------------------------------------------------------------------------
 * Descriptions of successful replies, from what they carry: "A page of contacts.", "The contact."
 */

function successDescription(status: string, response: Response, operation: Operation): string {
  const schema = response.content?.['application/json']?.schema;
  const name = refName(schema);
  if (name?.endsWith('List')) return `A page of ${plural(words(name.slice(0, -4)))}.`;
  const data = schema && (schema.properties as Json | undefined)?.data;
  const item = refName(data as Json | undefined) ?? refName(itemsOf(data as Json | undefined));
  if (item && itemsOf(data as Json | undefined)) return `The ${plural(words(item))}.`;
  if (item?.startsWith('Deleted')) return 'Deleted; the reply names what was deleted.';
  if (item) return `${status === '201' ? 'The new' : 'The'} ${words(item.replace(/^Created/, ''))}.`;
  if (status === '204') return 'Done; no body.';
  return operation.summary ? `${operation.summary}: the result.` : 'The result.';
}

function refName(schema: Json | undefined): string | undefined {
  const ref = schema?.$ref;
  return typeof ref === 'string' && ref.startsWith('#/components/schemas/') ? ref.slice('#/components/schemas/'.length) : undefined;
}

function itemsOf(schema: Json | undefined): Json | undefined {
  return schema?.type === 'array' ? (schema.items as Json | undefined) : undefined;
}

/** `CheckoutSession` -> `checkout session`. */
function words(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
}

function plural(phrase: string): string {
  if (/[^aeiou]y$/.test(phrase)) return `${phrase.slice(0, -1)}ies`;
  if (/(s|x|ch|sh)$/.test(phrase)) return `${phrase}es`;
  return `${phrase}s`;
}

/* ---------------------------------------------------------------------------------------------
 * Error replies: an example body for every code the response's description names, so each
 * status shows the codes the operation really answers with.
 */

/** The code each status answers with when its description names none. */
const DEFAULT_CODE: Record<number, string> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'insufficient_scope',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'service_unavailable',
};

function addErrorExamples(status: number, response: Response): void {
  const media = response.content?.['application/json'];
  if (!media || media.examples !== undefined) return;
  const named = errorCodesIn(response.description ?? '', status);
  const codes = named.length > 0 ? named : errorCodesIn(DEFAULT_CODE[status] ?? '', status);
  if (codes.length > 0) media.examples = errorExamples(codes);
}

/* ---------------------------------------------------------------------------------------------
 * Response headers, each declared required only where the server always sends it (the test
 * harness checks that every required header is there).
 */

const int = (format: 'int32' | 'int64', minimum: number, maximum: number) => ({ type: 'integer', format, minimum, maximum });

const SERVICE_REQUEST_ID = {
  description: 'Id of this request, in every reply (the X-Request-Id the client sent when it is 1-128 of `A-Za-z0-9_.:@-`); quote it when reporting a problem.',
  required: true,
  schema: { type: 'string', pattern: '^[\\w.:@-]{1,128}$', maxLength: 128 },
};

const RATE_LIMIT = {
  'X-RateLimit-Limit': { description: 'Requests this API key may make per minute.', required: true, schema: int('int32', 1, 1_000_000) },
  'X-RateLimit-Remaining': { description: 'Requests left in the current one-minute window.', required: true, schema: int('int32', 0, 1_000_000) },
  'X-RateLimit-Reset': { description: 'When the current window ends, in Unix seconds.', required: true, schema: int('int64', 0, 253_402_300_799) },
};

const RETRY_AFTER = { description: 'Seconds to wait before retrying.', schema: int('int32', 1, 86_400) };

const IDEMPOTENT_REPLAYED = {
  description: '`true` when this reply is the stored reply of an earlier request with the same Idempotency-Key.',
  schema: { type: 'string', enum: ['true'] },
};

const WWW_AUTHENTICATE = { description: 'Always `Bearer` (RFC 6750).', required: true, schema: { type: 'string', enum: ['Bearer'] } };

function ifCounted(header: { description: string }) {
  return { ...header, required: false, description: `${header.description} Absent when the URL cannot be read at all (a 404 answered before the key is checked).` };
}

/** The headers, once, in components.headers; responses refer to them. */
const HEADERS: Record<string, unknown> = {
  ServiceRequestId: SERVICE_REQUEST_ID,
  RateLimitLimit: RATE_LIMIT['X-RateLimit-Limit'],
  RateLimitRemaining: RATE_LIMIT['X-RateLimit-Remaining'],
  RateLimitReset: RATE_LIMIT['X-RateLimit-Reset'],
  RateLimitLimitIfCounted: ifCounted(RATE_LIMIT['X-RateLimit-Limit']),
  RateLimitRemainingIfCounted: ifCounted(RATE_LIMIT['X-RateLimit-Remaining']),
  RateLimitResetIfCounted: ifCounted(RATE_LIMIT['X-RateLimit-Reset']),
  RetryAfter: { ...RETRY_AFTER, required: true },
  RetryAfterInUse: { ...RETRY_AFTER, description: 'With idempotency_key_in_use: seconds to wait before sending the request again.' },
  RetryAfterWhenBusy: { ...RETRY_AFTER, description: 'Seconds to wait before retrying, when the server is busy or shutting down.' },
  IdempotentReplayed: IDEMPOTENT_REPLAYED,
  WwwAuthenticate: WWW_AUTHENTICATE,
};

const NEVER_STORED = new Set([401, 403, 413, 415, 429]);

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** An operation with `security: []` (a one-time token in its URL) takes no API key, so no rate-limit counts. */
function isKeyless(operation: Operation): boolean {
  const security = (operation as { security?: unknown[] }).security;
  return Array.isArray(security) && security.length === 0;
}

function headersOf(path: string, status: number, idempotent: boolean, keyless = false): Record<string, unknown> {
  const headers: Record<string, unknown> = { 'Service-Request-Id': ref('ServiceRequestId') };
  // A public request is counted once its key is recognised: every reply but 401 and 5xx carries the counts.
  // A 404 for a URL the router cannot even read (bad percent-encoding, an over-long segment) is answered before the key is checked.
  const counts = status === 404 ? 'IfCounted' : '';
  if (path.startsWith(PUBLIC_PREFIX) && !keyless && status !== 401 && status < 500) {
    Object.assign(headers, {
      'X-RateLimit-Limit': ref(`RateLimitLimit${counts}`),
      'X-RateLimit-Remaining': ref(`RateLimitRemaining${counts}`),
      'X-RateLimit-Reset': ref(`RateLimitReset${counts}`),
    });
  }
  // Replies of requests refused before they act (credentials, scope, limits, body framing) are never stored, so never replayed.
  if (idempotent && status < 500 && !NEVER_STORED.has(status)) headers['Idempotent-Replayed'] = ref('IdempotentReplayed');
  if (idempotent && status === 409) headers['Retry-After'] = ref('RetryAfterInUse');
  if (status === 429) headers['Retry-After'] = ref('RetryAfter');
  if (status === 503) headers['Retry-After'] = ref('RetryAfterWhenBusy');
  if (status === 401 && (path.startsWith(PUBLIC_PREFIX) || path.startsWith(ADMIN_PREFIX))) headers['WWW-Authenticate'] = ref('WwwAuthenticate');
  return headers;
}

/* ---------------------------------------------------------------------------------------------
 * The Idempotency-Key header's rules, as the idempotency hook checks them (it names the header in
 * its errors, so the route schema leaves the value to the hook).
 */

function describeIdempotencyKey(operation: Operation): boolean {
  const parameter = operation.parameters?.find((candidate) => candidate.in === 'header' && candidate.name === 'idempotency-key');
  if (!parameter) return false;
  parameter.name = 'Idempotency-Key';
  parameter.schema = { ...parameter.schema, minLength: 1, maxLength: MAX_KEY_LENGTH, pattern: KEY_PATTERN.source };
  return true;
}
