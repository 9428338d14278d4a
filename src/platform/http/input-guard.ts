import type { FastifyRequest, preValidationHookHandler } from 'fastify';
import { AppError, type ErrorDetail } from '../errors/app-error.js';

/**
 * Text no API value may carry: C0 control characters other than tab, line feed and
 * carriage return, and UTF-16 surrogate halves without their partner (JSON escapes such
 * as "\ud800" produce them; PostgreSQL cannot store NUL at all and refuses lone
 * surrogates in jsonb). No `u` flag: the pattern works on UTF-16 code units.
 */
const UNSAFE_IN_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Field names, query strings and path parameters are never free text: no control character at all. */
const UNSAFE_IN_NAME = /[\u0000-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** JSON bodies nest at most this deep; no schema here comes near it, and deeper input only costs stack. */
export const MAX_JSON_DEPTH = 32;
/** Enough problems to act on; a hostile body with thousands of them gets the first few. */
const MAX_DETAILS = 20;

export type InputPart = 'body' | 'querystring' | 'params';

/**
 * Whether a parsed input (a JSON body, the query object, the path parameters) is free of
 * unsafe characters, prototype keys and excessive nesting. One pass, no allocation: it
 * runs on every request, and `describeUnsafeInput` is only called when it fails.
 */
export function isSafeInput(value: unknown, part: InputPart): boolean {
  return isSafe(value, part === 'body' ? UNSAFE_IN_TEXT : UNSAFE_IN_NAME, 0);
}

function isSafe(value: unknown, textPattern: RegExp, depth: number): boolean {
  if (typeof value === 'string') return !textPattern.test(value);
  if (typeof value !== 'object' || value === null) return true;
  if (depth === MAX_JSON_DEPTH) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!isSafe(item, textPattern, depth + 1)) return false;
    return true;
  }
  for (const key in value) {
    const child = (value as Record<string, unknown>)[key];
    if (UNSAFE_IN_NAME.test(key) || isPrototypeKey(key, child)) return false;
    if (!isSafe(child, textPattern, depth + 1)) return false;
  }
  return true;
}

/**
 * `__proto__` anywhere, or `constructor` holding a `prototype`: the shapes that poison an
 * object's prototype when merged (what Fastify's secure-json-parse refuses by default).
 * JSON.parse makes them plain own properties, so they are harmless only until someone
 * copies them with Object.assign or a naive deep merge.
 */
function isPrototypeKey(key: string, value: unknown): boolean {
  if (key === '__proto__') return true;
  return key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype');
}

/** The `details` of a refused input: each offending field by its path, in the error handler's path style. */
export function describeUnsafeInput(value: unknown, part: InputPart): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const location = part === 'body' ? '' : part === 'querystring' ? 'query ' : 'params ';
  const textPattern = part === 'body' ? UNSAFE_IN_TEXT : UNSAFE_IN_NAME;

  const visit = (node: unknown, path: string, depth: number): void => {
    if (details.length >= MAX_DETAILS) return;
    const shown = path || (part === 'body' ? 'body' : 'value');
    if (typeof node === 'string') {
      const match = textPattern.exec(node);
      if (match) details.push({ path, code: 'invalid_characters', message: `${location}${shown} contains ${describeCharacter(match[0])}, which is not allowed.` });
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    if (depth === MAX_JSON_DEPTH) {
      details.push({ path, code: 'invalid', message: `${location}${shown} is nested more than ${MAX_JSON_DEPTH} levels deep.` });
      return;
    }
    if (Array.isArray(node)) {
      node.forEach((item, index) => visit(item, `${path}[${index}]`, depth + 1));
      return;
    }
    for (const key in node) {
      const child = (node as Record<string, unknown>)[key];
      const childPath = path ? `${path}.${printable(key)}` : printable(key);
      const badCharacter = UNSAFE_IN_NAME.exec(key);
      if (badCharacter) {
        details.push({ path: childPath, code: 'invalid_characters', message: `${location}field name ${childPath} contains ${describeCharacter(badCharacter[0])}.` });
      } else if (isPrototypeKey(key, child)) {
        details.push({ path: childPath, code: 'reserved_name', message: `${location}${childPath}: "${key}" is reserved and cannot be used as a field name.` });
      } else {
        visit(child, childPath, depth + 1);
      }
      if (details.length >= MAX_DETAILS) return;
    }
  };

  visit(value, '', 0);
  return details;
}

function describeCharacter(character: string): string {
  const code = `U+${character.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  return character.charCodeAt(0) >= 0xd800 ? `an unpaired UTF-16 surrogate (${code})` : `a control character (${code})`;
}

/** A field name as it can be shown in a path: control characters and lone surrogates as \uXXXX. */
function printable(name: string): string {
  return name.replace(new RegExp(UNSAFE_IN_NAME.source, 'g'), (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * What a route takes as its body, read from its schema once when it is registered:
 * no body schema means no body (absent, empty or `{}`); an object schema without required
 * fields makes the whole body optional (absent or empty reads as `{}`); otherwise a JSON
 * object is required.
 */
export type BodyPolicy = 'none' | 'optional' | 'required';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function bodyPolicyOf(methods: string[], bodySchema: unknown): BodyPolicy | undefined {
  if (!methods.some((method) => METHODS_WITH_BODY.has(method))) return undefined;
  if (bodySchema === undefined) return 'none';
  const schema = bodySchema as { type?: unknown; required?: unknown[] };
  if (schema.type !== 'object') return undefined; // not an object body: its schema alone decides
  return schema.required === undefined || schema.required.length === 0 ? 'optional' : 'required';
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The platform's first look at a request's input, before schema validation: the body has
 * the shape the route takes, and no string anywhere (body values and field names at any
 * depth, query string, path parameters) carries a character the API refuses.
 */
export interface InputRules {
  /** How the route takes a body (API routes); undefined leaves the body to its schema. */
  body: BodyPolicy | undefined;
  /** The route declares no query parameters, so any sent is unknown (API routes). */
  refuseQuery: boolean;
}

export function createInputGuard(rules: InputRules): preValidationHookHandler {
  return function guardInput(request, _reply, done) {
    done(findInputProblem(request, rules));
  };
}

function findInputProblem(request: FastifyRequest, rules: InputRules): AppError | undefined {
  if (rules.body !== undefined) {
    const shapeProblem = checkBodyShape(request, rules.body);
    if (shapeProblem) return shapeProblem;
  }
  if (rules.refuseQuery) {
    const unknown = Object.keys(request.query as object);
    if (unknown.length > 0) {
      return new AppError(
        'validation_failed',
        'The request is not valid; see details.',
        unknown.slice(0, MAX_DETAILS).map((name) => ({ path: printable(name), code: 'unknown_field', message: `query ${printable(name)} is not a known field.` })),
      );
    }
  }
  const parts: Array<[InputPart, unknown]> = [
    ['body', request.body],
    ['querystring', request.query],
    ['params', request.params],
  ];
  for (const [part, value] of parts) {
    if (value !== undefined && !isSafeInput(value, part)) {
      // A path that cannot name a resource is answered like any other unknown id or slug.
      if (part === 'params') return new AppError('not_found', 'No resource has this URL.');
      return new AppError('validation_failed', 'The request is not valid; see details.', describeUnsafeInput(value, part));
    }
  }
  return undefined;
}

function checkBodyShape(request: FastifyRequest, policy: BodyPolicy): AppError | undefined {
  const body = request.body;
  if (body === undefined) {
    if (policy === 'optional') request.body = {};
    if (policy !== 'required') return undefined;
    return invalidBody('required', 'This operation needs a JSON object as its body.');
  }
  if (!isPlainObject(body)) {
    return invalidBody('invalid_type', policy === 'none' ? 'This operation takes no body: send none, or {}.' : 'The body must be a JSON object.');
  }
  if (policy === 'none') {
    const fields = Object.keys(body);
    if (fields.length > 0) {
      return new AppError(
        'validation_failed',
        'This operation takes no body: send none, or {}.',
        fields
          .slice(0, MAX_DETAILS)
          .map((field) => ({ path: printable(field), code: 'unknown_field', message: `${printable(field)} is not a known field; this operation takes no body.` })),
      );
    }
  }
  return undefined;
}

function invalidBody(code: 'required' | 'invalid_type', message: string): AppError {
  return new AppError('validation_failed', message, [{ path: '', code, message }]);
}
