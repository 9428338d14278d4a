import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { ownedTables, type OwnedInsert, type OwnedRow, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { containsPattern } from '../../lib/search.js';
import type {
  CustomerAuthChallengesTable,
  CustomerAuthEmailVerificationsTable,
  CustomerAuthSessionsTable,
  CustomerAuthTables,
  CustomerAuthUsersTable,
  UserStatus,
} from './tables.js';

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

export type UserChanges = Partial<OwnedRow<CustomerAuthUsersTable>>;

const owned = ownedTables<CustomerAuthTables>();
const users = owned('customer_auth_users');
const sessions = owned('customer_auth_sessions');
const challenges = owned('customer_auth_challenges');
const verifications = owned('customer_auth_email_verifications');
const recoveryCodes = owned('customer_auth_recovery_codes');
const loginFailures = owned('customer_auth_login_failures');

// Users

export function insertUser(db: AuthDb, owner: Owner, row: OwnedInsert<CustomerAuthUsersTable>): Promise<UserRow> {
  return users
    .insert(db, owner, { ...row, metadata: JSON.stringify(row.metadata) as never })
    .returning(USER_COLUMNS)
    .executeTakeFirstOrThrow();
}

const userById = users.statement((from, values: { id: string }) => from.select(USER_COLUMNS).where('id', '=', values.id));
const userByIdForUpdate = users.statement((from, values: { id: string }) => from.select(USER_COLUMNS).where('id', '=', values.id).forUpdate());

export function findUser(db: AuthDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<UserRow | undefined> {
  return (options.forUpdate ? userByIdForUpdate : userById).first(db, owner, { id });
}

const credentialsById = users.statement((from, values: { id: string }) => from.select(CREDENTIAL_COLUMNS).where('id', '=', values.id));
const credentialsByIdForUpdate = users.statement((from, values: { id: string }) => from.select(CREDENTIAL_COLUMNS).where('id', '=', values.id).forUpdate());

export function findCredentials(db: AuthDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<CredentialRow | undefined> {
  return (options.forUpdate ? credentialsByIdForUpdate : credentialsById).first(db, owner, { id });
}

const credentialsByEmail = users.statement((from, values: { lowerEmail: string }) => from.select(CREDENTIAL_COLUMNS).where(sql`lower(email)`, '=', values.lowerEmail));

/** By address, case-insensitively (through the unique index). */
export function findCredentialsByEmail(db: AuthDb, owner: Owner, email: string): Promise<CredentialRow | undefined> {
  return credentialsByEmail.first(db, owner, { lowerEmail: email.toLowerCase() });
}

export function findUserIdByEmail(db: AuthDb, owner: Owner, email: string): Promise<{ id: string } | undefined> {
  return users
    .select(db, owner)
    .select('id')
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export interface UserFilters {
  status?: UserStatus;
  search?: string;
  email?: string;
}

const userList = users.list<{ status?: UserStatus; lowerEmail?: string; pattern?: string }, UserRow>({
  filters: {
    status: (eb, status) => eb('status', '=', status),
    lowerEmail: (eb, lowerEmail) => eb(sql`lower(email)`, '=', lowerEmail),
    pattern: (eb, pattern) => eb.or([eb('email', 'ilike', pattern), eb('name', 'ilike', pattern)]),
  },
  select: (from) => from.select(USER_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listUsers(db: AuthDb, owner: Owner, filters: UserFilters, page: PageRequest) {
  return userList.page(
    db,
    owner,
    {
      status: filters.status,
      lowerEmail: filters.email ? filters.email.toLowerCase() : undefined,
      pattern: filters.search ? containsPattern(filters.search) : undefined,
    },
    page,
  );
}

export function updateUser(db: AuthDb, owner: Owner, id: string, changes: UserChanges): Promise<UserRow> {
  const { metadata, ...rest } = changes;
  return users
    .update(db, owner)
    .set({ ...rest, ...(metadata !== undefined ? { metadata: JSON.stringify(metadata) as never } : {}) })
    .where('id', '=', id)
    .returning(USER_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function deleteUser(db: AuthDb, owner: Owner, id: string): Promise<boolean> {
  const result = await users.delete(db, owner).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Records `step` as the last accepted TOTP step, only if it is later than the one stored:
 * the guard that makes a code usable once, even by two requests at the same moment.
 */
export async function acceptTotpStep(db: AuthDb, owner: Owner, userId: string, step: number): Promise<boolean> {
  const row = await users
    .update(db, owner)
    .set({ totp_last_step: step })
    .where('id', '=', userId)
    .where('mfa_enabled', '=', true)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

// Sessions

export function insertSession(db: AuthDb, owner: Owner, row: OwnedInsert<CustomerAuthSessionsTable>): Promise<SessionRow> {
  return sessions.insert(db, owner, row).returning(SESSION_COLUMNS).executeTakeFirstOrThrow();
}

const sessionByTokenHash = sessions.statement((from, values: { tokenHash: string }) => from.select(SESSION_COLUMNS).where('token_hash', '=', values.tokenHash));

export function findSessionByTokenHash(db: AuthDb, owner: Owner, tokenHash: string): Promise<SessionRow | undefined> {
  return sessionByTokenHash.first(db, owner, { tokenHash });
}

/** Notes a use of the session, at most once a minute (a verify per page view must not write each time). */
export async function touchSession(db: AuthDb, owner: Owner, jti: string, now: Date): Promise<void> {
  await sessions
    .update(db, owner)
    .set({ last_used_at: now })
    .where('jti', '=', jti)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', new Date(now.getTime() - 60_000))]))
    .execute();
}

const activeSessionList = sessions.list<{ user_id: string; active_at: Date }, SessionRow>({
  filters: {
    user_id: (eb, userId) => eb('user_id', '=', userId),
    active_at: (eb, now) => eb('expires_at', '>', now),
  },
  select: (from) => from.select(SESSION_COLUMNS).orderBy('issued_at', 'desc').orderBy('jti', 'desc'),
});

export function listActiveSessions(db: AuthDb, owner: Owner, userId: string, now: Date, page: PageRequest) {
  return activeSessionList.page(db, owner, { user_id: userId, active_at: now }, page);
}

export async function deleteSession(db: AuthDb, owner: Owner, jti: string): Promise<boolean> {
  const result = await sessions.delete(db, owner).where('jti', '=', jti).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Signs the user out everywhere: sessions, and MFA challenges still open. */
export async function deleteUserSessions(db: AuthDb, owner: Owner, userId: string): Promise<void> {
  await sessions.delete(db, owner).where('user_id', '=', userId).execute();
  await challenges.delete(db, owner).where('user_id', '=', userId).execute();
}

// MFA challenges

export async function insertChallenge(db: AuthDb, owner: Owner, row: OwnedInsert<CustomerAuthChallengesTable>): Promise<void> {
  await challenges.insert(db, owner, row).execute();
}

const challengeByTokenHash = challenges.statement((from, values: { tokenHash: string }) => from.select(CHALLENGE_COLUMNS).where('token_hash', '=', values.tokenHash));
const challengeByTokenHashForUpdate = challenges.statement((from, values: { tokenHash: string }) =>
  from.select(CHALLENGE_COLUMNS).where('token_hash', '=', values.tokenHash).forUpdate(),
);

export function findChallengeByTokenHash(db: AuthDb, owner: Owner, tokenHash: string, options: { forUpdate?: boolean } = {}): Promise<ChallengeRow | undefined> {
  return (options.forUpdate ? challengeByTokenHashForUpdate : challengeByTokenHash).first(db, owner, { tokenHash });
}

export async function updateChallenge(db: AuthDb, owner: Owner, id: string, changes: { failed_attempts?: number; used_at?: Date }): Promise<void> {
  await challenges.update(db, owner).set(changes).where('id', '=', id).execute();
}

// Email verification

export async function insertVerification(db: AuthDb, owner: Owner, row: OwnedInsert<CustomerAuthEmailVerificationsTable>): Promise<void> {
  await verifications.insert(db, owner, row).execute();
}

/** Drops the user's verification tokens not yet used (a newer one replaces them, or the address changed). */
export async function deleteOpenVerifications(db: AuthDb, owner: Owner, userId: string): Promise<void> {
  await verifications.delete(db, owner).where('user_id', '=', userId).where('used_at', 'is', null).execute();
}

const verificationByTokenHash = verifications.statement((from, values: { tokenHash: string }) => from.select(VERIFICATION_COLUMNS).where('token_hash', '=', values.tokenHash));
const verificationByTokenHashForUpdate = verifications.statement((from, values: { tokenHash: string }) =>
  from.select(VERIFICATION_COLUMNS).where('token_hash', '=', values.tokenHash).forUpdate(),
);

export function findVerificationByTokenHash(db: AuthDb, owner: Owner, tokenHash: string, options: { forUpdate?: boolean } = {}): Promise<VerificationRow | undefined> {
  return (options.forUpdate ? verificationByTokenHashForUpdate : verificationByTokenHash).first(db, owner, { tokenHash });
}

export async function markVerificationUsed(db: AuthDb, owner: Owner, id: string, at: Date): Promise<void> {
  await verifications.update(db, owner).set({ used_at: at }).where('id', '=', id).execute();
}

// Recovery codes

export async function replaceRecoveryCodes(db: AuthDb, owner: Owner, userId: string, codeHashes: string[], ids: string[], at: Date): Promise<void> {
  await deleteRecoveryCodes(db, owner, userId);
  await recoveryCodes
    .insert(
      db,
      owner,
      codeHashes.map((code_hash, index) => ({ id: ids[index]!, user_id: userId, code_hash, used_at: null, created_at: at })),
    )
    .execute();
}

export async function deleteRecoveryCodes(db: AuthDb, owner: Owner, userId: string): Promise<void> {
  await recoveryCodes.delete(db, owner).where('user_id', '=', userId).execute();
}

/** Marks a recovery code used if it is the user's and unused; true when this call used it. */
export async function useRecoveryCode(db: AuthDb, owner: Owner, userId: string, codeHash: string, at: Date): Promise<boolean> {
  const row = await recoveryCodes
    .update(db, owner)
    .set({ used_at: at })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

// Failed sign-in attempts

export async function insertLoginFailure(db: AuthDb, owner: Owner, row: { id: string; email_key: string; failed_at: Date }): Promise<void> {
  await loginFailures.insert(db, owner, row).execute();
}

/** The newest `limit` failures for the address since `since`, newest first. */
export async function recentLoginFailures(db: AuthDb, owner: Owner, emailKey: string, since: Date, limit: number, exceptId?: string): Promise<Date[]> {
  let query = loginFailures.select(db, owner).select('failed_at').where('email_key', '=', emailKey).where('failed_at', '>', since);
  if (exceptId) query = query.where('id', '!=', exceptId);
  const rows = await query.orderBy('failed_at', 'desc').limit(limit).execute();
  return rows.map((row) => row.failed_at);
}

export async function deleteLoginFailure(db: AuthDb, owner: Owner, id: string): Promise<void> {
  await loginFailures.delete(db, owner).where('id', '=', id).execute();
}

export async function clearLoginFailures(db: AuthDb, owner: Owner, emailKey: string): Promise<void> {
  await loginFailures.delete(db, owner).where('email_key', '=', emailKey).execute();
}

// Housekeeping (the one place that spans tenants: it deletes only what no rule can use any more)

export async function sweepExpired(db: AuthDb, cutoffs: { sessionsBefore: Date; challengesBefore: Date; verificationsBefore: Date; failuresBefore: Date }): Promise<number> {
  const results = await Promise.all([
    sessions.deleteAcrossOwners(db).where('expires_at', '<', cutoffs.sessionsBefore).executeTakeFirst(),
    challenges.deleteAcrossOwners(db).where('expires_at', '<', cutoffs.challengesBefore).executeTakeFirst(),
    verifications.deleteAcrossOwners(db).where('expires_at', '<', cutoffs.verificationsBefore).executeTakeFirst(),
    loginFailures.deleteAcrossOwners(db).where('failed_at', '<', cutoffs.failuresBefore).executeTakeFirst(),
  ]);
  return results.reduce((sum, result) => sum + Number(result.numDeletedRows), 0);
}
