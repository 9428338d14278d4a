
import type { Db } from '../../db/database.js';
import type { IdempotencyKeysTable, Mode } from '../../db/types.js';
import { addMilliseconds, DAY_MS, SECOND_MS } from '../../lib/clock.js';

export const RETENTION_MS = DAY_MS;
/** How long a running request owns its key before a crash is presumed and a retry may act. */
export const LOCK_MS = 60 * SECOND_MS;

export interface IdempotencyScope {
  tenantId: string;
  mode: Mode;
  key: string;
}

export interface RequestFingerprint {
  method: string;
  path: string;
  bodyHash: string;
}

export interface IdempotencyReservation extends IdempotencyScope {
  /** Distinguishes this holder from a later one that took over an expired lock. */
  lockedUntil: Date;
}

export type ReserveOutcome =
  | { kind: 'reserved'; reservation: IdempotencyReservation }
  | { kind: 'replay'; status: number; body: string; contentType: string }
  | { kind: 'conflict' }
  | { kind: 'in_use' };

/**
 * Claims an idempotency key for one request, or says what to answer instead:
 * the stored reply, a conflict (same key, other request) or "in use" (still running).
 */
export async function reserve(db: Db, scope: IdempotencyScope, fingerprint: RequestFingerprint, now: Date): Promise<ReserveOutcome> {
  const lockedUntil = addMilliseconds(now, LOCK_MS);
  const fresh: IdempotencyKeysTable = {
    tenant_id: scope.tenantId,
    mode: scope.mode,
    idempotency_key: scope.key,
    method: fingerprint.method,
    path: fingerprint.path,
    body_hash: fingerprint.bodyHash,
    state: 'in_progress',
    locked_until: lockedUntil,
    response_status: null,
    response_body: null,
    response_content_type: null,
    created_at: now,
    expires_at: addMilliseconds(now, RETENTION_MS),
  };

  // Insert, or take over a row whose 24 hours are over; either way this request now owns the key.
  const claimed = await db
    .insertInto('idempotency_keys')
    .values(fresh)
    .onConflict((conflict) =>
      conflict.columns(['tenant_id', 'mode', 'idempotency_key']).doUpdateSet(fresh).where('idempotency_keys.expires_at', '<=', now),
    )
    .returning('idempotency_key')
    .executeTakeFirst();
  if (claimed) return { kind: 'reserved', reservation: { ...scope, lockedUntil } };

  const existing = await db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .where('mode', '=', scope.mode)
    .where('idempotency_key', '=', scope.key)
    .executeTakeFirst();
  if (!existing) return reserve(db, scope, fingerprint, now); // swept between the two statements

  const sameRequest =
    existing.method === fingerprint.method && existing.path === fingerprint.path && existing.body_hash === fingerprint.bodyHash;
  if (!sameRequest) return { kind: 'conflict' };

  if (existing.state === 'completed') {
    return {
      kind: 'replay',
      status: existing.response_status ?? 200,
      body: existing.response_body ?? '',
      contentType: existing.response_content_type ?? 'application/json; charset=utf-8',
    };
  }

  // Still in progress: wait for it unless its owner is presumed dead, in which case take over.
  const takenOver = await db
    .updateTable('idempotency_keys')
    .set({ locked_until: lockedUntil })
    .where('tenant_id', '=', scope.tenantId)
    .where('mode', '=', scope.mode)
    .where('idempotency_key', '=', scope.key)
    .where('state', '=', 'in_progress')
    .where('locked_until', '<', now)
    .returning('idempotency_key')
    .executeTakeFirst();
  return takenOver ? { kind: 'reserved', reservation: { ...scope, lockedUntil } } : { kind: 'in_use' };
}

/** Stores the reply for replays. Only the holder of the reservation may complete it. */
export async function complete(
  db: Db,
  reservation: IdempotencyReservation,
  reply: { status: number; body: string; contentType: string },
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({
      state: 'completed',
      locked_until: null,
      response_status: reply.status,
      response_body: reply.body,
      response_content_type: reply.contentType,
    })
    .where('tenant_id', '=', reservation.tenantId)
    .where('mode', '=', reservation.mode)
    .where('idempotency_key', '=', reservation.key)
    .where('state', '=', 'in_progress')
    .where('locked_until', '=', reservation.lockedUntil)
    .execute();
}

/** Forgets a reservation whose request failed on our side, so a retry can act. */
export async function release(db: Db, reservation: IdempotencyReservation): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('tenant_id', '=', reservation.tenantId)
    .where('mode', '=', reservation.mode)
    .where('idempotency_key', '=', reservation.key)
    .where('state', '=', 'in_progress')
    .where('locked_until', '=', reservation.lockedUntil)
    .execute();
}

/** Deletes records past their 24 hours; returns how many. */
export async function sweepExpired(db: Db, now: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

