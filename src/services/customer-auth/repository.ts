import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import type { Owner } from '../../platform/context.js';
import { containsPattern } from '../../lib/search.js';
import { selectPage } from '../../db/paging.js';
import type { PageRequest } from '../../platform/pagination/index.js';
import type {
  CustomerAuthChallengesTable,
  CustomerAuthEmailVerificationsTable,
  CustomerAuthSessionsTable,
  CustomerAuthTables,
  CustomerAuthUsersTable,
  UserStatus,
} from './tables.js';

export type { Owner };

export type AuthDb = Kysely<CustomerAuthTables>;

export function authDb(db: Db): AuthDb {
  return serviceDb(db);
}

/** The end user as the API shows it: never a hash or a secret. */
const USER_COLUMNS = [
  'id',
  'email',
  'name',
  'profile_picture_url',
  'status',
  'email_verified_at',
  'mfa_enabled',
  'mfa_enabled_at',
  'last_login_at',
  'metadata',
  'created_at',
  'updated_at',
] as const;
/** Plus what proves the user's identity, for the checks that need it. */
const CREDENTIAL_COLUMNS = [...USER_COLUMNS, 'password_hash', 'totp_secret', 'totp_pending_secret', 'totp_last_step'] as const;
const SESSION_COLUMNS = ['jti', 'user_id', 'issued_at', 'expires_at', 'last_used_at'] as const;
const CHALLENGE_COLUMNS = ['id', 'user_id', 'failed_attempts', 'expires_at', 'used_at'] as const;
const VERIFICATION_COLUMNS = ['id', 'user_id', 'email', 'expires_at', 'used_at'] as const;

export type UserRow = Pick<CustomerAuthUsersTable, (typeof USER_COLUMNS)[number]>;
export type CredentialRow = Pick<CustomerAuthUsersTable, (typeof CREDENTIAL_COLUMNS)[number]>;
export type SessionRow = Pick<CustomerAuthSessionsTable, (typeof SESSION_COLUMNS)[number]>;
export type ChallengeRow = Pick<CustomerAuthChallengesTable, (typeof CHALLENGE_COLUMNS)[number]>;
export type VerificationRow = Pick<CustomerAuthEmailVerificationsTable, (typeof VERIFICATION_COLUMNS)[number]>;

/** The unique index on (tenant_id, mode, lower(email)). */
export const EMAIL_INDEX = 'customer_auth_users_email';

export { isUniqueViolation } from '../../db/errors.js';

// Users

export function insertUser(db: AuthDb, row: CustomerAuthUsersTable): Promise<UserRow> {
  return db
    .insertInto('customer_auth_users')
    .values({ ...row, metadata: JSON.stringify(row.metadata) as never })
    .returning(USER_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function findUser(db: AuthDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<UserRow | undefined> {
  let query = db
    .selectFrom('customer_auth_users')
    .select(USER_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export function findCredentials(db: AuthDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<CredentialRow | undefined> {
  let query = db
    .selectFrom('customer_auth_users')
    .select(CREDENTIAL_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** By address, case-insensitively (through the unique index). */
export function findCredentialsByEmail(db: AuthDb, owner: Owner, email: string): Promise<CredentialRow | undefined> {
  return db
    .selectFrom('customer_auth_users')
    .select(CREDENTIAL_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export function findUserIdByEmail(db: AuthDb, owner: Owner, email: string): Promise<{ id: string } | undefined> {
  return db
    .selectFrom('customer_auth_users')
    .select('id')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export interface UserFilters {
  status?: UserStatus;
  search?: string;
  email?: string;
}

export async function listUsers(db: AuthDb, owner: Owner, filters: UserFilters, page: PageRequest) {
  let base = db.selectFrom('customer_auth_users').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.status) base = base.where('status', '=', filters.status);
  if (filters.email) base = base.where(sql`lower(email)`, '=', filters.email.toLowerCase());
  if (filters.search) {
    const pattern = containsPattern(filters.search);
    base = base.where((eb) => eb.or([eb('email', 'ilike', pattern), eb('name', 'ilike', pattern)]));
  }
  return selectPage(db, base, base.select(USER_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

export function updateUser(db: AuthDb, owner: Owner, id: string, changes: Partial<CustomerAuthUsersTable>): Promise<UserRow> {
  const { metadata, ...rest } = changes;
  return db
    .updateTable('customer_auth_users')
    .set({ ...rest, ...(metadata !== undefined ? { metadata: JSON.stringify(metadata) as never } : {}) })
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .returning(USER_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function deleteUser(db: AuthDb, owner: Owner, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('customer_auth_users')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Records `step` as the last accepted TOTP step, only if it is later than the one stored:
 * the guard that makes a code usable once, even by two requests at the same moment.
 */
export async function acceptTotpStep(db: AuthDb, owner: Owner, userId: string, step: number): Promise<boolean> {
  const row = await db
    .updateTable('customer_auth_users')
    .set({ totp_last_step: step })
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', userId)
    .where('mfa_enabled', '=', true)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

// Sessions

export function insertSession(db: AuthDb, row: CustomerAuthSessionsTable): Promise<SessionRow> {
  return db.insertInto('customer_auth_sessions').values(row).returning(SESSION_COLUMNS).executeTakeFirstOrThrow();
}

export function findSessionByTokenHash(db: AuthDb, owner: Owner, tokenHash: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('customer_auth_sessions')
    .select(SESSION_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Notes a use of the session, at most once a minute (a verify per page view must not write each time). */
export async function touchSession(db: AuthDb, owner: Owner, jti: string, now: Date): Promise<void> {
  await db
    .updateTable('customer_auth_sessions')
    .set({ last_used_at: now })
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('jti', '=', jti)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', new Date(now.getTime() - 60_000))]))
    .execute();
}

export async function listActiveSessions(db: AuthDb, owner: Owner, userId: string, now: Date, page: PageRequest) {
  const base = db
    .selectFrom('customer_auth_sessions')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('user_id', '=', userId)
    .where('expires_at', '>', now);
  return selectPage(db, base, base.select(SESSION_COLUMNS).orderBy('issued_at', 'desc').orderBy('jti', 'desc'), page);
}

export async function deleteSession(db: AuthDb, owner: Owner, jti: string): Promise<boolean> {
  const result = await db
    .deleteFrom('customer_auth_sessions')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('jti', '=', jti)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Signs the user out everywhere: sessions, and MFA challenges still open. */
export async function deleteUserSessions(db: AuthDb, owner: Owner, userId: string): Promise<void> {
  await db.deleteFrom('customer_auth_sessions').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode).where('user_id', '=', userId).execute();
  await db.deleteFrom('customer_auth_challenges').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode).where('user_id', '=', userId).execute();
}

// MFA challenges

export async function insertChallenge(db: AuthDb, row: CustomerAuthChallengesTable): Promise<void> {
  await db.insertInto('customer_auth_challenges').values(row).execute();
}

export function findChallengeByTokenHash(db: AuthDb, owner: Owner, tokenHash: string, options: { forUpdate?: boolean } = {}): Promise<ChallengeRow | undefined> {
  let query = db
    .selectFrom('customer_auth_challenges')
    .select(CHALLENGE_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('token_hash', '=', tokenHash);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function updateChallenge(db: AuthDb, owner: Owner, id: string, changes: { failed_attempts?: number; used_at?: Date }): Promise<void> {
  await db
    .updateTable('customer_auth_challenges')
    .set(changes)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .execute();
}

// Email verification

export async function insertVerification(db: AuthDb, row: CustomerAuthEmailVerificationsTable): Promise<void> {
  await db.insertInto('customer_auth_email_verifications').values(row).execute();
}

/** Drops the user's verification tokens not yet used (a newer one replaces them, or the address changed). */
export async function deleteOpenVerifications(db: AuthDb, owner: Owner, userId: string): Promise<void> {
  await db
    .deleteFrom('customer_auth_email_verifications')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}

export function findVerificationByTokenHash(db: AuthDb, owner: Owner, tokenHash: string, options: { forUpdate?: boolean } = {}): Promise<VerificationRow | undefined> {
  let query = db
    .selectFrom('customer_auth_email_verifications')
    .select(VERIFICATION_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('token_hash', '=', tokenHash);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function markVerificationUsed(db: AuthDb, owner: Owner, id: string, at: Date): Promise<void> {
  await db
    .updateTable('customer_auth_email_verifications')
    .set({ used_at: at })
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .execute();
}

// Recovery codes

export async function replaceRecoveryCodes(db: AuthDb, owner: Owner, userId: string, codeHashes: string[], ids: string[], at: Date): Promise<void> {
  await deleteRecoveryCodes(db, owner, userId);
  await db
    .insertInto('customer_auth_recovery_codes')
    .values(codeHashes.map((code_hash, index) => ({ id: ids[index]!, tenant_id: owner.tenantId, mode: owner.mode, user_id: userId, code_hash, used_at: null, created_at: at })))
    .execute();
}

export async function deleteRecoveryCodes(db: AuthDb, owner: Owner, userId: string): Promise<void> {
  await db
    .deleteFrom('customer_auth_recovery_codes')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('user_id', '=', userId)
    .execute();
}

/** Marks a recovery code used if it is the user's and unused; true when this call used it. */
export async function useRecoveryCode(db: AuthDb, owner: Owner, userId: string, codeHash: string, at: Date): Promise<boolean> {
  const row = await db
    .updateTable('customer_auth_recovery_codes')
    .set({ used_at: at })
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

// Failed sign-in attempts

export async function insertLoginFailure(db: AuthDb, owner: Owner, row: { id: string; email_key: string; failed_at: Date }): Promise<void> {
  await db
    .insertInto('customer_auth_login_failures')
    .values({ ...row, tenant_id: owner.tenantId, mode: owner.mode })
    .execute();
}

/** The newest `limit` failures for the address since `since`, newest first. */
export async function recentLoginFailures(db: AuthDb, owner: Owner, emailKey: string, since: Date, limit: number, exceptId?: string): Promise<Date[]> {
  let query = db
    .selectFrom('customer_auth_login_failures')
    .select('failed_at')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('email_key', '=', emailKey)
    .where('failed_at', '>', since);
  if (exceptId) query = query.where('id', '!=', exceptId);
  const rows = await query.orderBy('failed_at', 'desc').limit(limit).execute();
  return rows.map((row) => row.failed_at);
}

export async function deleteLoginFailure(db: AuthDb, owner: Owner, id: string): Promise<void> {
  await db.deleteFrom('customer_auth_login_failures').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode).where('id', '=', id).execute();
}

export async function clearLoginFailures(db: AuthDb, owner: Owner, emailKey: string): Promise<void> {
  await db
    .deleteFrom('customer_auth_login_failures')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('email_key', '=', emailKey)
    .execute();
}

// Housekeeping (the one place that spans tenants: it deletes only what no rule can use any more)

export async function sweepExpired(db: AuthDb, cutoffs: { sessionsBefore: Date; challengesBefore: Date; verificationsBefore: Date; failuresBefore: Date }): Promise<number> {
  const results = await Promise.all([
    db.deleteFrom('customer_auth_sessions').where('expires_at', '<', cutoffs.sessionsBefore).executeTakeFirst(),
    db.deleteFrom('customer_auth_challenges').where('expires_at', '<', cutoffs.challengesBefore).executeTakeFirst(),
    db.deleteFrom('customer_auth_email_verifications').where('expires_at', '<', cutoffs.verificationsBefore).executeTakeFirst(),
    db.deleteFrom('customer_auth_login_failures').where('failed_at', '<', cutoffs.failuresBefore).executeTakeFirst(),
  ]);
  return results.reduce((sum, result) => sum + Number(result.numDeletedRows), 0);
}
