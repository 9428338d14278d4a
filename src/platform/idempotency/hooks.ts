import type { FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import type { Db } from '../../db/database.js';
import { canonicalJson, sha256Hex } from '../../lib/canonical-json.js';
import { AppError } from '../errors/app-error.js';
import { complete, release, reserve } from './store.js';

const MAX_KEY_LENGTH = 255;
const KEY_PATTERN = /^[\x21-\x7e]+$/;

/**
 * Idempotency-Key support, attached to the routes that honour it. The key is claimed in
 * preHandler, i.e. after authentication and schema validation, so a request rejected
 * before it acts stores nothing (as Stripe does). The reply is stored in onSend.
 */
export function createIdempotencyHooks(db: Db): { reserveKey: preHandlerHookHandler; storeReply: onSendHookHandler } {
  const reserveKey: preHandlerHookHandler = async (request, reply) => {
    if (!request.auth) return;
    const key = readKey(request);
    if (key === undefined) return;

    const outcome = await reserve(
      db,
      { tenantId: request.auth.tenantId, mode: request.auth.mode, key },
      { method: request.method, path: request.url, bodyHash: sha256Hex(canonicalJson(request.body ?? null)) },
      request.startedAt,
    );
    switch (outcome.kind) {
      case 'reserved':
        request.idempotency = outcome.reservation;
        return;
      case 'replay':
        return replay(reply, outcome);
      case 'conflict':
        throw new AppError(
          'idempotency_key_conflict',
          'This Idempotency-Key was already used with a different request (method, path or body). Use a new key for a new request.',
        );
      case 'in_use':
        throw new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry shortly.', [], {
          'Retry-After': '1',
        });
    }
  };

  const storeReply: onSendHookHandler = async (request, reply, payload) => {
    const reservation = request.idempotency;
    if (!reservation) return payload;
    request.idempotency = undefined;
    if (reply.statusCode >= 500) {
      await release(db, reservation);
    } else {
      await complete(db, reservation, {
        status: reply.statusCode,
        body: typeof payload === 'string' ? payload : '',
        contentType: String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'),
      });
    }
    return payload;
  };

  return { reserveKey, storeReply };
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

function replay(reply: FastifyReply, stored: { status: number; body: string; contentType: string }): FastifyReply {
  return reply.code(stored.status).header('Idempotent-Replayed', 'true').type(stored.contentType).send(stored.body);
}
