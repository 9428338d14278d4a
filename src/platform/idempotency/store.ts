import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { RequestTransaction } from '../../db/request-transaction.js';
import { open, seal } from '../../lib/secret-box.js';
import type { Mode } from '../../db/types.js';
import { addMilliseconds, DAY_MS } from '../../lib/clock.js';

export const RETENTION_MS = DAY_MS;

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

export interface StoredReply {
  status: number;
  body: Buffer;
  contentType: string;
}

export type Lookup = { kind: 'new' } | { kind: 'replay'; reply: StoredReply } | { kind: 'conflict' };

/**
 * Takes the key's lock until `transaction` ends; false while another request holds it.
 * The lock is PostgreSQL's advisory lock on a 64-bit hash of tenant, mode and key.
 */
export async function lockKey(db: Db, transaction: RequestTransaction, scope: IdempotencyScope): Promise<boolean> {
  const query = sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${lockId(scope)}::bigint) as locked`.compile(db);
  const { rows } = await transaction.execute(query);
  return rows[0]?.locked === true;
}

/** What the key says about this request: new, a replay of the stored reply, or a conflict with another request. */
export async function lookUp(db: Db, transaction: RequestTransaction, scope: IdempotencyScope, fingerprint: RequestFingerprint, now: Date, secretsKey: Buffer): Promise<Lookup> {
  const query = db
    .selectFrom('idempotency_keys')
    .select(['method', 'path', 'body_hash', 'response_status', 'response_body', 'response_content_type'])
    .where('tenant_id', '=', scope.tenantId)
    .where('mode', '=', scope.mode)
    .where('idempotency_key', '=', scope.key)
    .where('expires_at', '>', now)
    .compile();
  const record = (await transaction.execute(query)).rows[0];
  if (!record) return { kind: 'new' };
  const sameRequest = record.method === fingerprint.method && record.path === fingerprint.path && record.body_hash === fingerprint.bodyHash;
  if (!sameRequest) return { kind: 'conflict' };
  return {
    kind: 'replay',
    reply: { status: record.response_status, body: openReply(secretsKey, Buffer.from(record.response_body), scope), contentType: record.response_content_type },
  };
}

/** Records the reply in `transaction`, so it is stored if and only if the request's writes are. */
export async function record(
  db: Db,
  transaction: RequestTransaction,
  scope: IdempotencyScope,
  fingerprint: RequestFingerprint,
  reply: StoredReply,
  now: Date,
  secretsKey: Buffer,
): Promise<void> {
  const row = {
    tenant_id: scope.tenantId,
    mode: scope.mode,
    idempotency_key: scope.key,
    method: fingerprint.method,
    path: fingerprint.path,
    body_hash: fingerprint.bodyHash,
    response_status: reply.status,
    response_body: Buffer.from(seal(secretsKey, reply.body, replyContext(scope)), 'utf8'),
    response_content_type: reply.contentType,
    created_at: now,
    expires_at: addMilliseconds(now, RETENTION_MS),
  };
  // An expired record of the key may still be there until the sweep: it is replaced.
  const query = db
    .insertInto('idempotency_keys')
    .values(row)
    .onConflict((conflict) => conflict.columns(['tenant_id', 'mode', 'idempotency_key']).doUpdateSet(row).where('idempotency_keys.expires_at', '<=', now))
    .returning('idempotency_key')
    .compile();
  const { rows } = await transaction.execute(query);
  // Under the key's lock a live record cannot appear after lookUp saw none.
  if (rows.length === 0) throw new Error('An idempotency record appeared under the key lock.');
}

/** Deletes records past their 24 hours; returns how many. */
export async function sweepExpired(db: Db, now: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

function lockId(scope: IdempotencyScope): string {
  const digest = createHash('sha256').update(`${scope.tenantId}\n${scope.mode}\n${scope.key}`).digest();
  return digest.readBigInt64BE(0).toString();
}

/**
 * Stored replies are sealed with SECRETS_KEY (AES-256-GCM, bound to tenant, mode and key): some
 * carry secrets shown once, such as a webhook endpoint's signing secret.
 */
function replyContext(scope: IdempotencyScope): string {
  return `idempotency:${scope.tenantId}:${scope.mode}:${scope.key}`;
}

const SEALED_PREFIX = Buffer.from('v1.');

function openReply(secretsKey: Buffer, stored: Buffer, scope: IdempotencyScope): Buffer {
  // Replies recorded before they were sealed (JSON, so never starting with "v1.") are replayed as they are.
  if (!stored.subarray(0, SEALED_PREFIX.length).equals(SEALED_PREFIX)) return stored;
  return open(secretsKey, stored.toString('utf8'), replyContext(scope));
}
