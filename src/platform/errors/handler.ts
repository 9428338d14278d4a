import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseBusy } from '../../db/errors.js';
import { AppError, MAX_ERROR_DETAILS, MAX_ERROR_TEXT, type ErrorDetail } from './app-error.js';
import type { ErrorCode } from './codes.js';
import { ERROR_STATUS } from './codes.js';

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/**
 * Every failure leaves the server as `{ error: { code, message, details } }`: thrown
 * AppErrors, schema validation, body parsing, unknown routes and unexpected crashes.
 */
export function installErrorHandling(app: FastifyInstance, knownRoutes: RouteMethodIndex): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const refusedValue = databaseRefusal(error);
    if (refusedValue) {
      // Input should never get this far: log it so the schema or rule that let it through is fixed.
      request.log.warn({ err: error }, 'the database refused a value of the request');
      return sendError(reply, refusedValue);
    }
    const appError = toAppError(error);
    if (appError.status >= 500) {
      request.log.error({ err: error }, 'request failed');
    }
    return sendError(reply, appError);
  });

  app.setNotFoundHandler((request, reply) => {
    const allowed = knownRoutes.methodsFor(request.url);
    if (allowed.length > 0 && request.method === 'OPTIONS') {
      // No route answers OPTIONS (CORS preflights aside): the path's methods are the answer (RFC 9110).
      return reply
        .code(204)
        .header('Allow', [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', '))
        .send();
    }
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      return sendError(reply, new AppError('method_not_allowed', `${request.method} is not allowed here; use ${allowed.join(' or ')}.`));
    }
    return sendError(reply, new AppError('not_found', `No route ${request.method} ${pathOf(request)}.`));
  });
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  if (error.status === 401) reply.header('WWW-Authenticate', 'Bearer');
  const details = error.details.slice(0, MAX_ERROR_DETAILS).map((detail) => ({ ...detail, path: bounded(detail.path), message: bounded(detail.message) }));
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send({ error: { code: error.code, message: bounded(error.message), details } });
}

/** Names sent by the client can be any length; what the reply echoes of them is cut. */
function bounded(text: string): string {
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT - 3)}...` : text;
}

function toAppError(error: FastifyError): AppError {
  if (error instanceof AppError) return error;

  const validation = (error as { validation?: AjvIssue[]; validationContext?: string }).validation;
  if (validation) {
    const where = (error as { validationContext?: string }).validationContext ?? 'body';
    // An id or slug of the wrong shape names no resource, exactly like an unknown one.
    if (where === 'params') return new AppError('not_found', 'No resource has this URL.');
    return new AppError(
      'validation_failed',
      'The request is not valid; see details.',
      collapseAlternatives(validation).map((issue) => toDetail(issue, where)),
    );
  }

  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is too large.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'Content-Type is application/json but the body is empty.');
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new AppError('invalid_json', 'The body is not valid JSON.');
  }

  if (isDatabaseBusy(error)) {
    return new AppError('service_unavailable', 'The server is too busy to answer this request now; retry after the number of seconds in Retry-After.', [], { 'Retry-After': '1' });
  }

  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return new AppError(codeForClientStatus(status), error.message);
  }
  return new AppError('internal_error', 'Something went wrong on our side. Retry later; quote the Service-Request-Id if it persists.');
}

/**
 * PostgreSQL errors that mean "this value cannot be stored or compared" (SQLSTATE class 22,
 * data exception: bad number or text syntax, out of range, NUL or bad encoding, too long;
 * class 54, program limit exceeded: a value too large for an index, nesting too deep).
 * Schemas and rules refuse such input first; this is the last fence, so a value that slips
 * through is still the caller's 400, never a 500.
 */
const DATABASE_VALUE_ERROR = /^(22|54)[0-9A-Z]{3}$/;

function databaseRefusal(error: unknown): AppError | undefined {
  const fields = error as { code?: unknown; severity?: unknown } | null;
  if (typeof fields?.code !== 'string' || fields.severity === undefined || !DATABASE_VALUE_ERROR.test(fields.code)) return undefined;
  return new AppError('validation_failed', 'A value in the request cannot be stored: it is out of range, too large or malformed.', [
    { path: '', code: 'invalid_value', message: 'A value in the request cannot be stored: it is out of range, too large or malformed.' },
  ]);
}

function codeForClientStatus(status: number): ErrorCode {
  const match = (Object.entries(ERROR_STATUS) as Array<[ErrorCode, number]>).find(([, value]) => value === status);
  return match?.[0] ?? 'validation_failed';
}

/**
 * A field that may be one of several shapes (most often "a string or null") fails each
 * alternative separately. Report it once: the most telling problem with the value
 * (its format, length, range), or else one type error naming every accepted type.
 */
function collapseAlternatives(issues: AjvIssue[]): AjvIssue[] {
  const alternativesAt = new Set(issues.filter((issue) => issue.keyword === 'anyOf' || issue.keyword === 'oneOf').map((issue) => issue.instancePath));
  if (alternativesAt.size === 0) return issues;
  const kept: AjvIssue[] = [];
  for (const path of alternativesAt) {
    const here = issues.filter((issue) => issue.instancePath === path && issue.keyword !== 'anyOf' && issue.keyword !== 'oneOf');
    const telling = here.find((issue) => issue.keyword !== 'type');
    const types = [...new Set(here.filter((issue) => issue.keyword === 'type').map((issue) => String(issue.params.type)))];
    kept.push(telling ?? { instancePath: path, keyword: 'type', params: { type: types.join(' or ') } });
  }
  const isInsideAlternative = (issue: AjvIssue) => [...alternativesAt].some((path) => issue.instancePath === path);
  return [...issues.filter((issue) => !isInsideAlternative(issue)), ...kept];
}

/** Turns one Ajv issue into `{ path, code, message }` with a path a client can act on. */
function toDetail(issue: AjvIssue, where: string): ErrorDetail {
  const base = jsonPointerToPath(issue.instancePath);
  const child = (name: unknown) => (base ? `${base}.${String(name)}` : String(name));
  const location = where === 'body' ? '' : `${where === 'querystring' ? 'query' : where} `;
  switch (issue.keyword) {
    case 'required':
      return { path: child(issue.params.missingProperty), code: 'required', message: `${location}${child(issue.params.missingProperty)} is required.` };
    case 'additionalProperties':
      return {
        path: child(issue.params.additionalProperty),
        code: 'unknown_field',
        message: `${location}${child(issue.params.additionalProperty)} is not a known field.`,
      };
    case 'type':
      return { path: base, code: 'invalid_type', message: `${location}${base || 'value'} must be ${[issue.params.type].flat().join(' or ')}.` };
    case 'enum':
      return {
        path: base,
        code: 'invalid_value',
        message: `${location}${base || 'value'} must be one of: ${(issue.params.allowedValues as unknown[]).join(', ')}.`,
      };
    case 'const':
      return { path: base, code: 'invalid_value', message: `${location}${base || 'value'} must be ${JSON.stringify(issue.params.allowedValue)}.` };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { path: base, code: 'out_of_range', message: `${location}${base || 'value'} ${issue.message ?? 'is out of range'}.` };
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems':
    case 'minProperties':
    case 'maxProperties':
      return { path: base, code: 'invalid_length', message: `${location}${base || 'value'} ${issue.message ?? 'has the wrong length'}.` };
    case 'format':
    case 'pattern':
      return {
        path: base,
        code: 'invalid_format',
        message: `${location}${base || 'value'} is not a valid ${issue.keyword === 'format' ? String(issue.params.format) : 'value'}.`,
      };
    default:
      return { path: base, code: 'invalid', message: `${location}${base || 'value'} ${issue.message ?? 'is not valid'}.` };
  }
}

/** `/line_items/0/amount` -> `line_items[0].amount` */
function jsonPointerToPath(pointer: string): string {
  let path = '';
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^\d+$/.test(segment) ? `[${segment}]` : path ? `.${segment}` : segment;
  }
  return path;
}

function pathOf(request: FastifyRequest): string {
  const path = request.url.split('?')[0] ?? '/';
  return path.length > 200 ? `${path.slice(0, 200)}...` : path;
}

/** What `installErrorHandling` needs to tell 405 from 404. */
export interface RouteMethodIndex {
  methodsFor(url: string): string[];
}
