import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, onSendHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { ERROR_STATUS, type ErrorCode } from '../errors/codes.js';

/**
 * Conditional requests (RFC 9110, section 13) on single resources:
 * - `GET` of one resource carries a strong `ETag`, a hash of the JSON it sends; with a matching
 *   `If-None-Match` the reply is 304 without a body (headers kept);
 * - `PATCH` of that resource accepts `If-Match`: the current representation is read with the
 *   same key, hashed and compared before the write; a mismatch is 412 `precondition_failed`.
 */

/** A strong entity tag of the exact bytes of a representation (its JSON before any content coding). */
export function entityTag(payload: string | Buffer): string {
  return `"${createHash('sha1').update(payload).digest('base64url')}"`;
}

/**
 * onSend of a GET route of one resource (and of the OpenAPI document). A route that knows its
 * tag already (the document, tagged once) sets it itself; the hook then only compares.
 */
export const tagRepresentation: onSendHookHandler = (request, reply, payload, done) => {
  if (reply.statusCode !== 200 || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) return done(null, payload);
  const tag = (reply.getHeader('etag') as string | undefined) ?? entityTag(payload);
  reply.header('ETag', tag);
  if (matches(request.headers['if-none-match'], tag, 'weak')) {
    reply.code(304).removeHeader('content-type').removeHeader('content-length');
    // HEAD: Fastify's own last hook drops the body (and needs it to state its length).
    return done(null, request.method === 'HEAD' ? payload : null);
  }
  done(null, payload);
};

/** The header of an internal read; its value is a secret of this process, so no client can send it. */
const INTERNAL_READ_HEADER = 'x-platform-internal-read';
const INTERNAL_READ_TOKEN = randomBytes(32).toString('base64url');

/**
 * The GET a PATCH with If-Match makes of its own resource. It is authenticated with the same key
 * as the write, but neither counted against the rate limit (the client made one request) nor
 * held to the read scope (the write's scope already covers reading what it returns).
 */
export function isInternalRead(request: FastifyRequest): boolean {
  return request.headers[INTERNAL_READ_HEADER] === INTERNAL_READ_TOKEN;
}

interface IfMatchOptions {
  /** The route's body takes `expected_updated_at`: the write is pinned to the version compared. */
  pinsUpdatedAt: boolean;
}

/**
 * preHandler of a PATCH of one resource: checks `If-Match` against the ETag a GET of the same
 * URL answers now. It runs after the idempotency key is taken, so a retry replays the first
 * reply (the 412 or the update) instead of comparing again, and inside the request transaction
 * when there is one, so the read sees what the write will change.
 *
 * When the tags match and the body takes `expected_updated_at`, that field is set to the
 * `updated_at` just read (unless the client sent one): a change that lands between the read and
 * the write is then refused by the service (409 stale_update) instead of being overwritten.
 */
export function createIfMatchCheck(app: FastifyInstance, { pinsUpdatedAt }: IfMatchOptions): preHandlerAsyncHookHandler {
  return async function checkIfMatch(request) {
    const condition = request.headers['if-match'];
    if (condition === undefined) return;
    const current = await app.inject({
      method: 'GET',
      url: request.url.split('?')[0]!,
      headers: { authorization: request.headers.authorization ?? '', [INTERNAL_READ_HEADER]: INTERNAL_READ_TOKEN },
    });
    // An unknown id: the write itself answers 404.
    if (current.statusCode === 404) return;
    if (current.statusCode !== 200) throw errorOf(current.statusCode, current.body, current.headers['retry-after']);

    const tag = entityTag(current.rawPayload);
    if (!matches(condition, tag, 'strong')) {
      throw new AppError('precondition_failed', 'The resource changed since you read it (If-Match does not match its ETag); fetch it again and reapply your change.', [
        { path: 'If-Match', code: 'stale', message: `The current ETag is ${tag}.`, current_etag: tag },
      ]);
    }
    if (pinsUpdatedAt && condition.trim() !== '*') pinUpdatedAt(request, current.json());
  };
}

function pinUpdatedAt(request: FastifyRequest, current: { data?: { updated_at?: unknown } }): void {
  const body = request.body as Record<string, unknown> | undefined;
  const updatedAt = current.data?.updated_at;
  if (body && typeof body === 'object' && body.expected_updated_at === undefined && typeof updatedAt === 'string') {
    body.expected_updated_at = updatedAt;
  }
}

/** The error the internal read answered (503 busy, 401 revoked meanwhile...), passed on as it was. */
function errorOf(status: number, body: string, retryAfter: unknown): AppError {
  let error: { code?: unknown; message?: unknown } | undefined;
  try {
    error = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } }).error;
  } catch {
    error = undefined;
  }
  const code = typeof error?.code === 'string' && error.code in ERROR_STATUS ? (error.code as ErrorCode) : status >= 500 ? 'internal_error' : 'precondition_failed';
  const message = typeof error?.message === 'string' ? error.message : 'The current version of the resource could not be read to compare with If-Match.';
  return new AppError(code, message, [], typeof retryAfter === 'string' ? { 'Retry-After': retryAfter } : {});
}

/**
 * Whether an If-Match or If-None-Match value (`*` or a list of entity tags) matches `tag`.
 * Strong comparison (If-Match) never matches a weak tag; weak comparison (If-None-Match)
 * ignores the `W/` prefix.
 */
export function matches(header: string | undefined, tag: string, comparison: 'strong' | 'weak'): boolean {
  if (header === undefined) return false;
  const value = header.trim();
  if (value === '*') return true;
  for (const candidate of value.split(',')) {
    const trimmed = candidate.trim();
    const weak = trimmed.startsWith('W/');
    if (weak && comparison === 'strong') continue;
    if ((weak ? trimmed.slice(2) : trimmed) === tag) return true;
  }
  return false;
}
