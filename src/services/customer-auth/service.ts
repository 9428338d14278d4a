import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { PageRequest } from '../../db/paging.js';
import { addMilliseconds, DAY_MS, HOUR_MS, MINUTE_MS } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { cleanText } from '../../lib/text.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound, validationFailed } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobHandler, JobRunner } from '../../platform/jobs/runner.js';
import { findTenant } from '../../platform/tenants/repository.js';
import { hashPassword, passwordProblem, verifyPassword, warmUpPasswordHashing } from './passwords.js';
import * as repository from './repository.js';
import type { AuthDb, CredentialRow, UserChanges, UserFilters, UserRow } from './repository.js';
import {
  MAX_METADATA_BYTES,
  type ActiveSessionView,
  type CreateUserInput,
  type EndUserView,
  type IssuedSessionView,
  type LoginInput,
  type MfaLoginInput,
  type SessionInfoView,
  type SetPasswordInput,
  type UpdateUserInput,
} from './schemas.js';
import { open, seal } from '../../lib/secret-box.js';
import { emailKey, newRecoveryCode, newToken, normalizeRecoveryCode, RECOVERY_CODE_COUNT, sha256Hex } from './tokens.js';
import { base32Encode, matchTotp, otpauthUrl, TOTP_SECRET_BYTES } from './totp.js';

export const SESSION_TTL_MS = 30 * DAY_MS;
export const CHALLENGE_TTL_MS = 5 * MINUTE_MS;
export const VERIFICATION_TTL_MS = 24 * HOUR_MS;
/** Wrong codes that end an MFA challenge. */
export const MAX_CHALLENGE_FAILURES = 5;
/** Failed sign-ins (password or MFA code) per address within the window before refusing. */
export const LOCKOUT_THRESHOLD = 10;
export const LOCKOUT_WINDOW_MS = 15 * MINUTE_MS;
/** Used and expired verification tokens are kept this long so their holders get a precise answer. */
const VERIFICATION_RETENTION_MS = 7 * DAY_MS;
const MAX_METADATA_DEPTH = 20;
/** Issuer shown in authenticator apps when the tenant's name cannot be read. */
const DEFAULT_ISSUER = 'Customer Auth';

export const SWEEP_JOB = 'customer-auth.sweep';

export interface CustomerAuthDeps {
  db: Db;
  events: EventLog;
  secretsKey: Buffer;
  jobs?: JobRunner;
}

export type LoginResult = { kind: 'session'; user: EndUserView; session: IssuedSessionView } | { kind: 'mfa'; mfa_required: true; challenge_token: string; expires_at: Date };

/** End users of a tenant: accounts, passwords, email verification, sessions, TOTP MFA. */
export function createCustomerAuthService({ db, events, secretsKey, jobs }: CustomerAuthDeps) {
  const auth = repository.authDb(db);
  warmUpPasswordHashing();

  function inTransaction<T>(work: (tx: AuthDb) => Promise<T>): Promise<T> {
    return auth.transaction().execute((tx) => work(tx));
  }

  async function requireUser(tx: AuthDb, ctx: RequestContext, id: string, options: { forUpdate?: boolean } = {}): Promise<UserRow> {
    const row = await repository.findUser(tx, ctx, id, options);
    if (!row) throw notFound('End user');
    return row;
  }

  async function requireCredentials(tx: AuthDb, ctx: RequestContext, id: string): Promise<CredentialRow> {
    const row = await repository.findCredentials(tx, ctx, id, { forUpdate: true });
    if (!row) throw notFound('End user');
    return row;
  }

  async function emailTaken(ctx: RequestContext, email: string): Promise<AppError> {
    const existing = await repository.findUserIdByEmail(auth, ctx, email);
    return new AppError('email_taken', 'An end user with this email already exists.', [
      { path: 'email', code: 'already_exists', message: 'This email is used by another end user.', ...(existing ? { user_id: existing.id } : {}) },
    ]);
  }

  function totpContext(ctx: RequestContext, userId: string): string {
    return `customer-auth/totp/${ctx.tenantId}/${ctx.mode}/${userId}`;
  }

  /** Issues a session inside `tx`: the row, last_login_at, and the failure count cleared. */
  async function startSession(tx: AuthDb, ctx: RequestContext, user: CredentialRow): Promise<{ user: EndUserView; session: IssuedSessionView }> {
    const { token, hash } = newToken('session');
    const session = await repository.insertSession(tx, ctx, {
      jti: newId(),
      user_id: user.id,
      token_hash: hash,
      issued_at: ctx.now,
      expires_at: addMilliseconds(ctx.now, SESSION_TTL_MS),
      last_used_at: null,
    });
    // Signing in is not an edit of the profile: updated_at (the concurrency version) stays.
    const updated = await repository.updateUser(tx, ctx, user.id, { last_login_at: ctx.now });
    await repository.clearLoginFailures(tx, ctx, emailKey(user.email));
    return {
      user: presentUser(updated),
      session: { token, jti: session.jti, issued_at: session.issued_at, expires_at: session.expires_at },
    };
  }

  /** Checks a TOTP or recovery code for `user` and consumes it; false when it is not good (now). */
  async function acceptSecondFactor(tx: AuthDb, ctx: RequestContext, user: CredentialRow, code: string): Promise<boolean> {
    const recoveryCode = normalizeRecoveryCode(code);
    if (recoveryCode !== undefined) return repository.useRecoveryCode(tx, ctx, user.id, sha256Hex(recoveryCode), ctx.now);
    if (user.totp_secret === null) return false;
    const secret = open(secretsKey, user.totp_secret, totpContext(ctx, user.id));
    const step = matchTotp(secret, code.replace(/\s+/g, ''), ctx.now, user.totp_last_step);
    return step !== undefined && (await repository.acceptTotpStep(tx, ctx, user.id, step));
  }

  async function newRecoveryCodes(tx: AuthDb, ctx: RequestContext, userId: string): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await repository.replaceRecoveryCodes(
      tx,
      ctx,
      userId,
      codes.map((code) => sha256Hex(code)),
      codes.map(() => newId()),
      ctx.now,
    );
    return codes;
  }

  return {
    // Users

    async createUser(ctx: RequestContext, input: CreateUserInput): Promise<EndUserView> {
      const email = input.email.toLowerCase();
      const name = cleanName(input.name);
      const metadata = checkMetadata(input.metadata ?? {});
      let passwordHash: string | null = null;
      if (input.password !== undefined) {
        assertAcceptablePassword(input.password, email);
        passwordHash = await hashPassword(input.password);
      }
      try {
        return await inTransaction(async (tx) => {
          const row = await repository.insertUser(tx, ctx, {
            id: newId(),
            email,
            name: name ?? null,
            profile_picture_url: input.profile_picture_url ?? null,
            status: 'active',
            email_verified_at: null,
            password_hash: passwordHash,
            mfa_enabled: false,
            mfa_enabled_at: null,
            totp_secret: null,
            totp_pending_secret: null,
            totp_last_step: null,
            last_login_at: null,
            metadata,
            created_at: ctx.now,
            updated_at: ctx.now,
          });
          const user = presentUser(row);
          await events.record(tx, ctx, 'customer_auth.user.created', user);
          return user;
        });
      } catch (error) {
        // The unique index decides, so two concurrent creates of one address cannot both succeed.
        if (repository.isUniqueViolation(error, repository.EMAIL_INDEX)) throw await emailTaken(ctx, email);
        throw error;
      }
    },

    async getUser(ctx: RequestContext, id: string): Promise<EndUserView> {
      return presentUser(await requireUser(auth, ctx, id));
    },

    async listUsers(ctx: RequestContext, filters: UserFilters, page: PageRequest) {
      const { rows, total } = await repository.listUsers(auth, ctx, filters, page);
      return { rows: rows.map(presentUser), total };
    },

    async updateUser(ctx: RequestContext, id: string, input: UpdateUserInput): Promise<EndUserView> {
      const email = input.email?.toLowerCase();
      const name = cleanName(input.name);
      const metadata = input.metadata === undefined ? undefined : checkMetadata(input.metadata);
      try {
        return await inTransaction(async (tx) => {
          const current = await requireUser(tx, ctx, id, { forUpdate: true });
          assertFresh(input.expected_updated_at, current.updated_at);
          const changes: UserChanges = { updated_at: nextUpdatedAt(current.updated_at, ctx.now) };
          if (email !== undefined && email !== current.email) {
            // A new address is unproven: verification starts again, and old links die.
            changes.email = email;
            changes.email_verified_at = null;
            await repository.deleteOpenVerifications(tx, ctx, id);
          }
          if (name !== undefined) changes.name = name;
          if (input.profile_picture_url !== undefined) changes.profile_picture_url = input.profile_picture_url;
          if (metadata !== undefined) changes.metadata = metadata;
          if (input.status !== undefined && input.status !== current.status) {
            changes.status = input.status;
            if (input.status === 'disabled') await repository.deleteUserSessions(tx, ctx, id);
          }
          return presentUser(await repository.updateUser(tx, ctx, id, changes));
        });
      } catch (error) {
        if (email !== undefined && repository.isUniqueViolation(error, repository.EMAIL_INDEX)) throw await emailTaken(ctx, email);
        throw error;
      }
    },

    /** Deletes the user with its sessions, challenges, recovery codes and verification tokens. */
    async deleteUser(ctx: RequestContext, id: string): Promise<{ id: string; deleted: true }> {
      if (!(await repository.deleteUser(auth, ctx, id))) throw notFound('End user');
      return { id, deleted: true as const };
    },

    async setPassword(ctx: RequestContext, id: string, input: SetPasswordInput): Promise<EndUserView> {
      const user = await requireUser(auth, ctx, id);
      assertAcceptablePassword(input.password, user.email);
      // Hashing takes ~100 ms: outside the transaction, so no row stays locked meanwhile.
      const passwordHash = await hashPassword(input.password);
      return inTransaction(async (tx) => {
        const current = await requireUser(tx, ctx, id, { forUpdate: true });
        if (current.email !== user.email) assertAcceptablePassword(input.password, current.email);
        if (input.revoke_sessions !== false) await repository.deleteUserSessions(tx, ctx, id);
        const row = await repository.updateUser(tx, ctx, id, { password_hash: passwordHash, updated_at: nextUpdatedAt(current.updated_at, ctx.now) });
        return presentUser(row);
      });
    },

    // Email verification

    async createEmailVerification(ctx: RequestContext, id: string): Promise<{ token: string; expires_at: Date }> {
      return inTransaction(async (tx) => {
        const user = await requireUser(tx, ctx, id, { forUpdate: true });
        await repository.deleteOpenVerifications(tx, ctx, id);
        const { token, hash } = newToken('verification');
        const expiresAt = addMilliseconds(ctx.now, VERIFICATION_TTL_MS);
        await repository.insertVerification(tx, ctx, {
          id: newId(),
          user_id: id,
          email: user.email,
          token_hash: hash,
          expires_at: expiresAt,
          used_at: null,
          created_at: ctx.now,
        });
        return { token, expires_at: expiresAt };
      });
    },

    async completeEmailVerification(ctx: RequestContext, token: string): Promise<EndUserView> {
      return inTransaction(async (tx) => {
        const verification = await repository.findVerificationByTokenHash(tx, ctx, sha256Hex(token), { forUpdate: true });
        if (!verification) throw verificationInvalid();
        if (verification.used_at !== null) {
          throw new AppError('verification_token_used', 'This verification token has already been used; issue a new one if needed.');
        }
        if (verification.expires_at.getTime() <= ctx.now.getTime()) {
          throw new AppError('verification_token_expired', 'This verification token has expired; issue a new one.');
        }
        const user = await repository.findUser(tx, ctx, verification.user_id, { forUpdate: true });
        // Tokens of an address the user no longer has are deleted on change; this is the second fence.
        if (!user || user.email !== verification.email) throw verificationInvalid();
        await repository.markVerificationUsed(tx, ctx, verification.id, ctx.now);
        if (user.email_verified_at !== null) return presentUser(user);
        const row = await repository.updateUser(tx, ctx, user.id, { email_verified_at: ctx.now, updated_at: nextUpdatedAt(user.updated_at, ctx.now) });
        const verified = presentUser(row);
        await events.record(tx, ctx, 'customer_auth.user.email_verified', verified);
        return verified;
      });
    },

    // Sign-in

    /**
     * Email and password. Every attempt is first written down as a failure for the address
     * (whether or not an account has it), then the earlier failures in the window are
     * counted: the 11th attempt within 15 minutes is refused before any password check.
     * A good password removes its own row; a session clears the address's count.
     */
    async login(ctx: RequestContext, input: LoginInput): Promise<LoginResult> {
      const email = input.email.trim().toLowerCase();
      const key = emailKey(email);
      const attemptId = newId();
      await repository.insertLoginFailure(auth, ctx, { id: attemptId, email_key: key, failed_at: ctx.now });
      const earlier = await repository.recentLoginFailures(auth, ctx, key, lockoutWindowStart(ctx.now), LOCKOUT_THRESHOLD, attemptId);
      if (earlier.length >= LOCKOUT_THRESHOLD) {
        await repository.deleteLoginFailure(auth, ctx, attemptId);
        throw tooManyAttempts(earlier, ctx.now);
      }

      const user = await repository.findCredentialsByEmail(auth, ctx, email);
      // Always one scrypt: an unknown address or an account without a password costs the same.
      const check = await verifyPassword(user?.password_hash, input.password);
      if (!user || !check.ok || user.status !== 'active') {
        throw new AppError('invalid_credentials', 'The email or password is incorrect.');
      }
      await repository.deleteLoginFailure(auth, ctx, attemptId);
      if (check.needsRehash) {
        await repository.updateUser(auth, ctx, user.id, { password_hash: await hashPassword(input.password) });
      }

      if (user.mfa_enabled) {
        const { token, hash } = newToken('challenge');
        const expiresAt = addMilliseconds(ctx.now, CHALLENGE_TTL_MS);
        await repository.insertChallenge(auth, ctx, {
          id: newId(),
          user_id: user.id,
          token_hash: hash,
          failed_attempts: 0,
          expires_at: expiresAt,
          used_at: null,
          created_at: ctx.now,
        });
        return { kind: 'mfa', mfa_required: true, challenge_token: token, expires_at: expiresAt };
      }
      return { kind: 'session', ...(await inTransaction((tx) => startSession(tx, ctx, user))) };
    },

    /**
     * Second step: a TOTP code (once per time step, never one older than the last accepted)
     * or an unused recovery code. A wrong code counts against the challenge (5 end it) and
     * against the address's lockout, so new challenges do not buy new guesses.
     */
    async completeMfaLogin(ctx: RequestContext, input: MfaLoginInput): Promise<{ user: EndUserView; session: IssuedSessionView }> {
      const outcome = await inTransaction(async (tx) => {
        const challenge = await repository.findChallengeByTokenHash(tx, ctx, sha256Hex(input.challenge_token), { forUpdate: true });
        if (!challenge || challenge.used_at !== null || challenge.expires_at.getTime() <= ctx.now.getTime() || challenge.failed_attempts >= MAX_CHALLENGE_FAILURES) {
          return { kind: 'invalid_challenge' as const };
        }
        const user = await repository.findCredentials(tx, ctx, challenge.user_id, { forUpdate: true });
        if (!user || user.status !== 'active' || !user.mfa_enabled) {
          await repository.updateChallenge(tx, ctx, challenge.id, { used_at: ctx.now });
          return { kind: 'invalid_challenge' as const };
        }
        const key = emailKey(user.email);
        const earlier = await repository.recentLoginFailures(tx, ctx, key, lockoutWindowStart(ctx.now), LOCKOUT_THRESHOLD);
        if (earlier.length >= LOCKOUT_THRESHOLD) return { kind: 'locked' as const, earlier };

        if (!(await acceptSecondFactor(tx, ctx, user, input.code))) {
          await repository.updateChallenge(tx, ctx, challenge.id, { failed_attempts: challenge.failed_attempts + 1 });
          await repository.insertLoginFailure(tx, ctx, { id: newId(), email_key: key, failed_at: ctx.now });
          return { kind: 'wrong_code' as const };
        }
        await repository.updateChallenge(tx, ctx, challenge.id, { used_at: ctx.now });
        return { kind: 'session' as const, result: await startSession(tx, ctx, user) };
      });
      switch (outcome.kind) {
        case 'invalid_challenge':
          throw new AppError('invalid_challenge', 'The challenge token is unknown, used, expired or ended by too many wrong codes; sign in again.');
        case 'locked':
          throw tooManyAttempts(outcome.earlier, ctx.now);
        case 'wrong_code':
          throw new AppError('invalid_mfa_code', 'The code is not valid (or was already used).');
        case 'session':
          return outcome.result;
      }
    },

    // Sessions

    async verifySession(ctx: RequestContext, token: string): Promise<{ user: EndUserView; session: SessionInfoView }> {
      const session = await repository.findSessionByTokenHash(auth, ctx, sha256Hex(token));
      const user = session && session.expires_at.getTime() > ctx.now.getTime() ? await repository.findUser(auth, ctx, session.user_id) : undefined;
      if (!session || !user || user.status !== 'active') {
        throw new AppError('invalid_session', 'The session token is unknown, expired or revoked, or its user is disabled.');
      }
      await repository.touchSession(auth, ctx, session.jti, ctx.now);
      return { user: presentUser(user), session: { jti: session.jti, issued_at: session.issued_at, expires_at: session.expires_at } };
    },

    async listSessions(ctx: RequestContext, userId: string, page: PageRequest): Promise<{ rows: ActiveSessionView[]; total: number }> {
      await requireUser(auth, ctx, userId);
      const { rows, total } = await repository.listActiveSessions(auth, ctx, userId, ctx.now, page);
      return {
        rows: rows.map((row) => ({ jti: row.jti, issued_at: row.issued_at, expires_at: row.expires_at, last_used_at: row.last_used_at })),
        total,
      };
    },

    async revokeSession(ctx: RequestContext, jti: string): Promise<{ jti: string; revoked: true }> {
      if (!(await repository.deleteSession(auth, ctx, jti))) throw notFound('Session');
      return { jti, revoked: true as const };
    },

    // TOTP

    async startTotpEnrollment(ctx: RequestContext, id: string): Promise<{ secret: string; otpauth_url: string }> {
      const issuer = (await findTenant(db, ctx.tenantId))?.name.trim() || DEFAULT_ISSUER;
      return inTransaction(async (tx) => {
        const user = await requireCredentials(tx, ctx, id);
        if (user.mfa_enabled) throw new AppError('mfa_already_enabled', 'TOTP is already enabled for this user; turn it off first to enrol a new device.');
        const secret = randomBytes(TOTP_SECRET_BYTES);
        // Re-enrolling before confirming replaces the pending secret.
        await repository.updateUser(tx, ctx, id, { totp_pending_secret: seal(secretsKey, secret, totpContext(ctx, id)) });
        const encoded = base32Encode(secret);
        return { secret: encoded, otpauth_url: otpauthUrl({ issuer, account: user.email, secret: encoded }) };
      });
    },

    async confirmTotp(ctx: RequestContext, id: string, code: string): Promise<{ user: EndUserView; recovery_codes: string[] }> {
      return inTransaction(async (tx) => {
        const user = await requireCredentials(tx, ctx, id);
        if (user.mfa_enabled) throw new AppError('mfa_already_enabled', 'TOTP is already enabled for this user.');
        if (user.totp_pending_secret === null) throw new AppError('mfa_not_pending', 'There is no TOTP enrolment to confirm; start one with POST .../mfa/totp.');
        const secret = open(secretsKey, user.totp_pending_secret, totpContext(ctx, id));
        const step = matchTotp(secret, code.replace(/\s+/g, ''), ctx.now, null);
        if (step === undefined) {
          throw validationFailed(
            [{ path: 'code', code: 'invalid_mfa_code', message: 'code is not the current code of the authenticator (check the device clock).' }],
            'The code does not match the pending TOTP secret.',
          );
        }
        const recoveryCodes = await newRecoveryCodes(tx, ctx, id);
        const row = await repository.updateUser(tx, ctx, id, {
          totp_secret: user.totp_pending_secret,
          totp_pending_secret: null,
          // The confirming code's step counts as used (RFC 6238 5.2).
          totp_last_step: step,
          mfa_enabled: true,
          mfa_enabled_at: ctx.now,
          updated_at: nextUpdatedAt(user.updated_at, ctx.now),
        });
        return { user: presentUser(row), recovery_codes: recoveryCodes };
      });
    },

    async disableTotp(ctx: RequestContext, id: string): Promise<EndUserView> {
      return inTransaction(async (tx) => {
        const user = await requireCredentials(tx, ctx, id);
        if (!user.mfa_enabled && user.totp_pending_secret === null) throw new AppError('mfa_not_enabled', 'TOTP is not enabled (nor pending) for this user.');
        await repository.deleteRecoveryCodes(tx, ctx, id);
        const row = await repository.updateUser(tx, ctx, id, {
          totp_secret: null,
          totp_pending_secret: null,
          totp_last_step: null,
          mfa_enabled: false,
          mfa_enabled_at: null,
          updated_at: nextUpdatedAt(user.updated_at, ctx.now),
        });
        return presentUser(row);
      });
    },

    async regenerateRecoveryCodes(ctx: RequestContext, id: string): Promise<{ user: EndUserView; recovery_codes: string[] }> {
      return inTransaction(async (tx) => {
        const user = await requireCredentials(tx, ctx, id);
        if (!user.mfa_enabled) throw new AppError('mfa_not_enabled', 'TOTP is not enabled for this user, so it has no recovery codes.');
        const recoveryCodes = await newRecoveryCodes(tx, ctx, id);
        return { user: presentUser(user), recovery_codes: recoveryCodes };
      });
    },

    // Housekeeping

    /** Queues the hourly sweep of rows no rule can use any more (once per database). */
    async scheduleSweep(): Promise<void> {
      await jobs?.ensureRecurring(SWEEP_JOB);
    },
  };
}

export type CustomerAuthService = ReturnType<typeof createCustomerAuthService>;

/**
 * Hourly: deletes what no rule can use any more, with a day's margin (a week for
 * verification tokens, so their holders still get "expired" or "used" rather than
 * "invalid"): expired sessions and challenges, old verification tokens, old failures.
 */
export function createSweepHandler(db: Db): JobHandler {
  const auth = repository.authDb(db);
  return async (_job, now) => {
    const dayAgo = addMilliseconds(now, -DAY_MS);
    await repository.sweepExpired(auth, {
      sessionsBefore: dayAgo,
      challengesBefore: dayAgo,
      verificationsBefore: addMilliseconds(now, -VERIFICATION_RETENTION_MS),
      failuresBefore: dayAgo,
    });
    return { rescheduleAt: addMilliseconds(now, HOUR_MS) };
  };
}

export function registerCustomerAuthJobs(jobs: JobRunner, db: Db): void {
  jobs.register(SWEEP_JOB, createSweepHandler(db));
}

function lockoutWindowStart(now: Date): Date {
  return addMilliseconds(now, -LOCKOUT_WINDOW_MS);
}

/**
 * 429 with Retry-After: the seconds until enough failures leave the window for one more
 * attempt (`earlier` holds the newest failures, newest first, at least LOCKOUT_THRESHOLD).
 */
function tooManyAttempts(earlier: Date[], now: Date): AppError {
  const freesUp = earlier[LOCKOUT_THRESHOLD - 1]!.getTime() + LOCKOUT_WINDOW_MS;
  const seconds = Math.max(1, Math.ceil((freesUp - now.getTime()) / 1000));
  return new AppError('too_many_attempts', 'Too many failed sign-in attempts for this email address; retry after the time in Retry-After.', [], {
    'Retry-After': String(seconds),
  });
}

function verificationInvalid(): AppError {
  return new AppError('verification_token_invalid', 'This verification token is not valid (unknown, replaced by a newer one, or for an address the user no longer has).');
}

function assertAcceptablePassword(password: string, email: string): void {
  const problem = passwordProblem(password, email);
  if (problem) throw invalidField('password', problem.code, problem.message);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/**
 * Trimmed (the schema already asks for a visible character, so it never turns blank); a lone
 * UTF-16 surrogate is refused (PostgreSQL would store a replacement character).
 */
function cleanName(name: string | null | undefined): string | null | undefined {
  if (typeof name === 'string' && !isWellFormedText(name)) throw invalidField('name', 'invalid_format', 'name is not valid Unicode text.');
  return cleanText(name);
}

/**
 * Metadata must fit PostgreSQL's jsonb and our cap: no NUL characters or lone surrogates in
 * keys and strings (jsonb refuses them), at most 20 levels deep, at most 16 KB as JSON.
 */
function checkMetadata(metadata: Record<string, unknown>): Record<string, unknown> {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: metadata, depth: 1 }];
  const badText = (text: string) => text.includes('\u0000') || !isWellFormedText(text);
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (badText(value)) throw invalidField('metadata', 'invalid_value', 'metadata strings must not contain NUL characters or unpaired surrogates.');
    } else if (value !== null && typeof value === 'object') {
      if (depth > MAX_METADATA_DEPTH) throw invalidField('metadata', 'invalid_value', `metadata may nest at most ${MAX_METADATA_DEPTH} levels deep.`);
      for (const [key, child] of Object.entries(value)) {
        if (badText(key)) throw invalidField('metadata', 'invalid_value', 'metadata keys must not contain NUL characters or unpaired surrogates.');
        stack.push({ value: child, depth: depth + 1 });
      }
    }
  }
  if (Buffer.byteLength(JSON.stringify(metadata), 'utf8') > MAX_METADATA_BYTES) {
    throw invalidField('metadata', 'invalid_length', `metadata must be at most ${MAX_METADATA_BYTES} bytes as JSON.`);
  }
  return metadata;
}

export function presentUser(row: UserRow): EndUserView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    profile_picture_url: row.profile_picture_url,
    status: row.status,
    email_verified_at: row.email_verified_at,
    mfa_enabled: row.mfa_enabled,
    mfa_enabled_at: row.mfa_enabled_at,
    last_login_at: row.last_login_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    metadata: row.metadata,
  };
}
