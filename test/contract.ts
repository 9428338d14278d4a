import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { default as addFormatsModule } from 'ajv-formats';
import { normalizeCurrency } from '../src/lib/currency.js';
import { CURRENCY_FORMAT, INT64_ID_FORMAT, isInt64Id } from '../src/platform/http/schemas.js';
import { UUID_PATTERN } from '../src/lib/ids.js';

// ajv-formats is CommonJS: under NodeNext its function is the `default` of the module object.
const addFormats = addFormatsModule.default;

/**
 * The contract check of the test harness: every request a test sends and every reply it gets
 * is compared with the OpenAPI document the server under test serves. A reply must be a
 * documented status with a body of that status's schema and its required headers; a request
 * must name a documented operation, with path, query, header and body parameters as declared.
 * Schemas are compiled with Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1) straight
 * from the document, so whatever the document says is what is checked.
 */

const DOCUMENT_ID = 'openapi.json';
export const OPENAPI_URL = '/api/v1/openapi.json';

/** Paths the document must describe; the rest (the document, /docs, hosted pages) are outside it. */
export function isContractPath(path: string): boolean {
  return (path.startsWith('/api/v1/') && path !== OPENAPI_URL) || path.startsWith('/admin/v1/') || path === '/healthz' || path === '/readyz';
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: unknown;
}

interface Header {
  $ref?: string;
  required?: boolean;
  schema?: unknown;
}

interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { content?: Record<string, { schema?: unknown }>; headers?: Record<string, Header> }>;
}

interface Route {
  template: string;
  pattern: RegExp;
  names: string[];
  literalSegments: number;
  operations: Map<string, { operation: Operation; pointer: string }>;
}

export interface RequestShape {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
}

export class ContractChecker {
  readonly #ajv: Ajv2020;
  readonly #textAjv: Ajv2020;
  readonly #routes: Route[];
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #headers: Record<string, Header>;

  constructor(document: { paths: Record<string, Record<string, Operation>>; components?: { headers?: Record<string, Header> } }) {
    this.#headers = document.components?.headers ?? {};
    this.#ajv = makeAjv(false);
    this.#textAjv = makeAjv(true);
    for (const ajv of [this.#ajv, this.#textAjv]) ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    this.#routes = Object.entries(document.paths).map(([template, item]) => {
      const names: string[] = [];
      const source = template
        .split('/')
        .map((segment) => {
          const name = /^\{(.+)\}$/.exec(segment)?.[1];
          if (!name) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          names.push(name);
          return '([^/]+)';
        })
        .join('/');
      const operations = new Map<string, { operation: Operation; pointer: string }>();
      for (const [method, operation] of Object.entries(item)) {
        if (!['get', 'put', 'post', 'patch', 'delete', 'head', 'options'].includes(method)) continue;
        operations.set(method.toUpperCase(), { operation, pointer: `#/paths/${escapePointer(template)}/${method}` });
      }
      return { template, pattern: new RegExp(`^${source}$`), names, literalSegments: template.split('/').length - names.length, operations };
    });
    // A literal segment beats a parameter: /forms/by-slug/{slug} before /forms/{id}.
    this.#routes.sort((a, b) => b.literalSegments - a.literalSegments);
  }

  /** Whether the operation the request names declares a request body (undefined: no such operation). */
  declaresBody(method: string, url: string): boolean | undefined {
    const found = this.#find(method, splitUrl(url).path);
    return typeof found === 'string' ? undefined : found.operation.requestBody !== undefined;
  }

  /** Where a request disagrees with the document (an empty list when it agrees). */
  checkRequest(request: RequestShape): string[] {
    // OPTIONS is no documented operation: the platform answers it on every path (Allow, CORS preflights).
    if (request.method.toUpperCase() === 'OPTIONS') return [];
    const { path, query } = splitUrl(request.url);
    const found = this.#find(request.method, path);
    if (typeof found === 'string') return [found];
    const { operation, pointer, params, label } = found;
    const problems: string[] = [];
    const declared = operation.parameters ?? [];

    declared.forEach((parameter, index) => {
      const at = `${pointer}/parameters/${index}/schema`;
      const value =
        parameter.in === 'path'
          ? params[parameter.name]
          : parameter.in === 'query'
            ? (query.get(parameter.name) ?? undefined)
            : parameter.in === 'header'
              ? request.headers[parameter.name.toLowerCase()]
              : undefined;
      if (value === undefined) {
        if (parameter.required) problems.push(`${label}: ${parameter.in} parameter ${parameter.name} is required by the document but was not sent`);
        return;
      }
      if (parameter.schema !== undefined) problems.push(...this.#validate(this.#textAjv, at, { value }, `${label}: ${parameter.in} parameter ${parameter.name}`, '/value'));
    });
    for (const name of new Set(query.keys())) {
      if (!declared.some((parameter) => parameter.in === 'query' && parameter.name === name)) problems.push(`${label}: query parameter ${name} is not in the document`);
    }

    const sent = bodyText(request.body);
    const body = operation.requestBody;
    if (!body) {
      if (sent !== undefined && sent.trim() !== '' && sent.trim() !== '{}') problems.push(`${label}: a body was sent, but the document declares none`);
    } else if (sent === undefined || sent === '') {
      if (body.required) problems.push(`${label}: the document requires a body, none was sent`);
    } else if (body.content?.['application/json']?.schema !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(sent);
      } catch {
        problems.push(`${label}: the body is not JSON`);
      }
      if (parsed !== undefined) {
        problems.push(...this.#validate(this.#ajv, `${pointer}/requestBody/content/application~1json/schema`, parsed, `${label}: request body`));
      }
    }
    return problems;
  }

  /** Where a reply disagrees with the document for the request it answers. */
  checkResponse(request: RequestShape, response: LightMyRequestResponse): string[] {
    const { path } = splitUrl(request.url);
    const found = this.#find(request.method, path);
    if (typeof found === 'string') {
      // OPTIONS on a known path: 204 without a body (the path's methods in Allow, or a CORS preflight).
      if (request.method.toUpperCase() === 'OPTIONS' && response.statusCode === 204 && response.rawPayload.length === 0) return [];
      // No operation: the only truthful answers are "no such route" and "not with this method".
      if (response.statusCode !== 404 && response.statusCode !== 405) return [`${found}, and it was answered ${response.statusCode}`];
      return this.#validate(this.#ajv, '#/components/schemas/ErrorResponse', safeJson(response.body), `${request.method} ${path} ${response.statusCode}: error body`);
    }
    const { operation, pointer, label } = found;
    const status = String(response.statusCode);
    const responses = operation.responses ?? {};
    const key = [status, `${status[0]}XX`, 'default'].find((candidate) => responses[candidate] !== undefined);
    if (key === undefined) return [`${label}: status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`];
    const documented = responses[key]!;
    const problems: string[] = [];

    for (const [name, declared] of Object.entries(documented.headers ?? {})) {
      const header = this.#header(declared);
      if (header.required && response.headers[name.toLowerCase()] === undefined) problems.push(`${label} ${status}: header ${name} is documented as required but missing`);
    }
    const contentType = String(response.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    const hasBody = response.rawPayload.length > 0 && request.method !== 'HEAD';
    if (!hasBody) return problems;
    const media = documented.content ?? {};
    if (Object.keys(media).length === 0) {
      problems.push(`${label} ${status}: a body of ${contentType || 'no type'} was sent, but the document declares none`);
      return problems;
    }
    const mediaKey = Object.keys(media).find((candidate) => candidate.split(';')[0]!.trim() === contentType);
    if (mediaKey === undefined) {
      problems.push(`${label} ${status}: content type ${contentType} is not documented (documented: ${Object.keys(media).join(', ')})`);
      return problems;
    }
    if (contentType === 'application/json' && media[mediaKey]!.schema !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(response.body);
      } catch {
        return [...problems, `${label} ${status}: the body is not JSON`];
      }
      problems.push(
        ...this.#validate(this.#ajv, `${pointer}/responses/${escapePointer(key)}/content/${escapePointer(mediaKey)}/schema`, parsed, `${label} ${status}: response body`),
      );
    }
    return problems;
  }

  /** A response header as declared, or the one in components.headers it refers to. */
  #header(header: Header): Header {
    const name = header.$ref?.startsWith('#/components/headers/') ? header.$ref.slice('#/components/headers/'.length) : undefined;
    return name === undefined ? header : (this.#headers[name] ?? header);
  }

  #find(method: string, path: string): { operation: Operation; pointer: string; params: Record<string, string>; label: string } | string {
    let pathDocumented = false;
    for (const route of this.#routes) {
      const match = route.pattern.exec(path);
      if (!match) continue;
      pathDocumented = true;
      // HEAD is answered by the GET operation (Fastify serves it for every GET route).
      const operation = route.operations.get(method.toUpperCase()) ?? (method.toUpperCase() === 'HEAD' ? route.operations.get('GET') : undefined);
      if (!operation) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, index) => {
        params[name] = safeDecode(match[index + 1]!);
      });
      return { ...operation, params, label: `${method.toUpperCase()} ${route.template} (${operation.operation.operationId ?? 'no operationId'})` };
    }
    return pathDocumented ? `${method.toUpperCase()} ${path}: the path is documented, but not with this method` : `${method.toUpperCase()} ${path}: no documented path matches`;
  }

  #validate(ajv: Ajv2020, pointer: string, value: unknown, what: string, prefix = ''): string[] {
    const key = `${ajv === this.#textAjv ? 'text' : 'json'}:${pointer}:${prefix}`;
    let validate = this.#validators.get(key);
    if (!validate) {
      const schema = prefix ? { type: 'object', properties: { value: { $ref: `${DOCUMENT_ID}${pointer}` } } } : { $ref: `${DOCUMENT_ID}${pointer}` };
      this.#validators.set(key, (validate = ajv.compile(schema)));
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).slice(0, 5).map((error: ErrorObject) => `${what} at ${error.instancePath.slice(prefix.length) || '/'}: ${error.message} (${error.schemaPath})`);
  }
}

function makeAjv(coerce: boolean): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true, coerceTypes: coerce ? 'array' : false });
  addFormats(ajv);
  ajv.addFormat(CURRENCY_FORMAT, { type: 'string', validate: (code: string) => normalizeCurrency(code) !== undefined });
  ajv.addFormat(INT64_ID_FORMAT, { type: 'string', validate: isInt64Id });
  ajv.addFormat('uuid', UUID_PATTERN);
  // OpenAPI's own keywords inside schemas carry no validation.
  for (const keyword of ['example', 'discriminator', 'xml', 'externalDocs']) ajv.addKeyword(keyword);
  return ajv;
}

function splitUrl(url: string): { path: string; query: URLSearchParams } {
  const parsed = new URL(url, 'http://contract');
  return { path: parsed.pathname, query: parsed.searchParams };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function bodyText(body: string | Buffer | undefined): string | undefined {
  if (body === undefined) return undefined;
  return typeof body === 'string' ? body : body.toString('utf8');
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

const checkers = new WeakMap<FastifyInstance, Promise<ContractChecker>>();

/** The checker for an app, built once from the document that app serves. */
export function contractOf(app: FastifyInstance): Promise<ContractChecker> {
  let checker = checkers.get(app);
  if (!checker) {
    checker = app.inject({ method: 'GET', url: OPENAPI_URL }).then((response) => new ContractChecker(response.json()));
    checkers.set(app, checker);
  }
  return checker;
}
