import type { FastifyError, FastifyReply, FastifyRequest, onSendAsyncHookHandler, preHandlerHookHandler } from 'fastify';
import type { Db } from '../../db/database.js';
import { beginRequestTransaction, type RequestTransaction } from '../../db/request-transaction.js';
import { canonicalJson, sha256Hex } from '../../lib/canonical-json.js';
import { AppError } from '../errors/app-error.js';
import type { FaultInjector } from '../fault-injection.js';
import { lockKey, lookUp, record, type IdempotencyScope, type RequestFingerprint, type StoredReply } from './store.js';

export const MAX_KEY_LENGTH = 255;
export const KEY_PATTERN = /^[\x21-\x7e]+$/;
/** A streamed reply is read into memory to be stored; beyond this the request fails (the route should opt out). */
const MAX_STREAMED_REPLY_BYTES = 8 * 1024 * 1024;
const DEFAULT_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A request acting under its Idempotency-Key: the transaction it runs in, and what to record. */
export interface IdempotentRequest {
  transaction: RequestTransaction;
  scope: IdempotencyScope;
  fingerprint: RequestFingerprint;
  startedAt: Date;
}

type Claim = { kind: 'acting'; request: IdempotentRequest } | { kind: 'replay'; reply: StoredReply } | { kind: 'conflict' } | { kind: 'in_use' };

/**
 * Idempotency-Key support, attached to the routes that honour it: the request runs in one
 * database transaction that also records its reply, so the record exists exactly when the
 * request's writes do (Brandur Leach's "Implementing Stripe-like idempotency keys in
 * Postgres", with the whole request as one atomic phase).
 *
 * In preHandler (after authentication and schema validation, so a request refused before it
 * acts stores nothing, as Stripe does) the transaction begins, takes the key's lock (held by
 * another request: 409 in use) and looks the key up (a stored reply is replayed, another
 * request's key is a conflict). The handler then runs inside the transaction: every query
 * the services make joins it, their own transactions as savepoints. In onSend the reply is
 * recorded and the transaction committed before the reply leaves; a 5xx, or a failure to
 * record or commit, rolls everything back and answers 5xx, so a retry acts afresh.
 */
export function createIdempotencyHooks(db: Db, injectFault: FaultInjector, secretsKey: Buffer): { takeKey: preHandlerHookHandler; recordReply: onSendAsyncHookHandler } {
  async function claim(scope: IdempotencyScope, fingerprint: RequestFingerprint, startedAt: Date): Promise<Claim> {
    const transaction = await beginRequestTransaction(db);
    try {
      if (!(await lockKey(db, transaction, scope))) {
        await transaction.rollback();
        return { kind: 'in_use' };
      }
      const found = await lookUp(db, transaction, scope, fingerprint, startedAt, secretsKey);
      if (found.kind !== 'new') {
        await transaction.rollback();
        return found;
      }
      return { kind: 'acting', request: { transaction, scope, fingerprint, startedAt } };
    } catch (error) {
      await transaction.rollback().catch(() => {});
      throw error;
    }
  }

  // A callback hook, not an async one: calling `done` inside `transaction.run` is what puts the
  // handler, and everything after it in this request, in the transaction's async context.
  const takeKey: preHandlerHookHandler = (request, reply, done) => {
    if (!request.auth) return done();
    let key: string | undefined;
    try {
      key = readKey(request);
    } catch (error) {
      return done(error as FastifyError);
    }
    if (key === undefined) return done();

    const scope = { tenantId: request.auth.tenantId, mode: request.auth.mode, key };
    const fingerprint = { method: request.method, path: request.url, bodyHash: sha256Hex(canonicalJson(request.body ?? null)) };
    claim(scope, fingerprint, request.startedAt).then(
      (outcome) => {
        switch (outcome.kind) {
          case 'acting':
            request.idempotency = outcome.request;
            return outcome.request.transaction.run(() => done());
          case 'replay':
            replay(reply, outcome.reply);
            return;
          case 'conflict':
            return done(
              new AppError('idempotency_key_conflict', 'This Idempotency-Key was already used with a different request (method, path or body). Use a new key for a new request.'),
            );
          case 'in_use':
            return done(
              new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry shortly.', [], {
                'Retry-After': '1',
              }),
            );
        }
      },
      (error: FastifyError) => done(error),
    );
  };

  const recordReply: onSendAsyncHookHandler = async (request, reply, payload) => {
    const acting = request.idempotency;
    if (!acting) return payload;
    request.idempotency = undefined;
    const { transaction } = acting;
    if (reply.statusCode >= 500) {
      await transaction.rollback();
      return payload;
    }

    let body: Buffer;
    try {
      body = await replyBytes(payload);
      const contentType = String(reply.getHeader('content-type') ?? DEFAULT_CONTENT_TYPE);
      const redact = request.routeOptions.config.redactStoredReply;
      const stored = redact && reply.statusCode < 300 ? redact(body) : body;
      await record(db, transaction, acting.scope, acting.fingerprint, { status: reply.statusCode, body: stored, contentType }, acting.startedAt, secretsKey);
      injectFault('idempotency:after-write');
      await transaction.commit();
    } catch (error) {
      // Nothing of the request is kept; the error handler answers 500 and a retry acts afresh.
      await transaction.rollback().catch(() => {});
      throw error;
    }
    injectFault('idempotency:after-commit');
    // A stream has been read to be stored: send what was read.
    return typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : body;
  };

  return { takeKey, recordReply };
}

function readKey(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || key.length === 0 || key.length > MAX_KEY_LENGTH || !KEY_PATTERN.test(key)) {
    throw new AppError('validation_failed', 'The Idempotency-Key header is not valid.', [
      {
        path: 'Idempotency-Key',
        code: 'invalid_format',
        message: `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters (a UUID is ideal).`,
      },
    ]);
  }
  return key;
}

function replay(reply: FastifyReply, stored: StoredReply): FastifyReply {
  return reply.code(stored.status).header('Idempotent-Replayed', 'true').type(stored.contentType).send(stored.body);
}

/** The reply's bytes as they will be sent, whatever form the payload has reached onSend in. */
async function replyBytes(payload: unknown): Promise<Buffer> {
  if (payload === undefined || payload === null) return Buffer.alloc(0);
  if (typeof payload === 'string') return Buffer.from(payload);
  if (payload instanceof Uint8Array) return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (isAsyncIterable(payload)) return readStream(payload);
  throw new Error(`An idempotent route replied with a payload that cannot be stored (${typeof payload}).`);
}

async function readStream(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
    size += bytes.length;
    if (size > MAX_STREAMED_REPLY_BYTES) {
      (stream as { destroy?: () => void }).destroy?.();
      throw new Error(`An idempotent route streamed a reply over ${MAX_STREAMED_REPLY_BYTES} bytes; it should not honour Idempotency-Key.`);
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}
