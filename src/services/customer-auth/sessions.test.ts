import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, MINUTE_MS } from '../../lib/clock.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { createSweepHandler, SWEEP_JOB } from './service.js';
import { BASE, helpers, ISO, otp, PASSWORD } from './test-helpers.js';

// Everything this file's app logs, to prove no secret ever reaches the log stream.
const logLines: string[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    logLines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform({ logger: pino({ level: 'trace' }, sink) });
  // Time moves only when a test says so: a TOTP step boundary never falls between computing a code and sending it.
  platform.clock.freeze();
});
afterAll(() => platform.close());

const { createUser, login, session, enableMfa, challenge, completeMfa } = helpers(() => platform);

async function newKey(): Promise<string> {
  return (await platform.newTenant()).key();
}

function verify(key: string, token: unknown) {
  return call(platform.app, 'POST', `${BASE}/sessions/verify`, { key, body: { token } });
}

describe('sign-in without MFA', () => {
  it('answers 201 with the user and the spec Session object, and sets last_login_at', async () => {
    const key = await newKey();
    const user = await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    platform.clock.advance(5);
    const response = await login(key, 'ADA@example.com ');
    expect(response.statusCode, response.body).toBe(201);
    expect(response.headers['cache-control']).toBe('no-store');
    const { data } = response.json();
    expect(Object.keys(data).sort()).toEqual(['session', 'user']);
    expect(data.session).toEqual({
      token: expect.stringMatching(/^cas_[A-Za-z0-9_-]{43}$/),
      jti: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      issued_at: expect.stringMatching(ISO),
      expires_at: expect.stringMatching(ISO),
    });
    expect(Date.parse(data.session.expires_at) - Date.parse(data.session.issued_at)).toBe(30 * DAY_MS);
    expect(data.user).toMatchObject({ id: user.id, email: 'ada@example.com', last_login_at: data.session.issued_at, updated_at: user.updated_at });
    const fetched = (await call(platform.app, 'GET', `${BASE}/users/${user.id}`, { key })).json().data;
    expect(fetched.last_login_at).toBe(data.session.issued_at);

    platform.clock.advance(1000);
    const again = (await session(key, 'ada@example.com')).issued_at;
    expect((await call(platform.app, 'GET', `${BASE}/users/${user.id}`, { key })).json().data.last_login_at).toBe(again);
  });

  it('never stores a sign-in reply for replay: the same Idempotency-Key gives a new session', async () => {
    const key = await newKey();
    await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    const headers = { 'idempotency-key': 'c0ffee00-0000-4000-8000-000000000001' };
    const body = { email: 'ada@example.com', password: PASSWORD };
    const first = await call(platform.app, 'POST', `${BASE}/sessions`, { key, body, headers });
    const second = await call(platform.app, 'POST', `${BASE}/sessions`, { key, body, headers });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.json().data.session.jti).not.toBe(first.json().data.session.jti);
    const stored = await platform.database.db.selectFrom('idempotency_keys').select('response_body').execute();
    expect(JSON.stringify(stored)).not.toContain(first.json().data.session.token);
  });

  it('gives a wrong email, a wrong password and an account without password the same 401', async () => {
    const key = await newKey();
    await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    await createUser(key, { email: 'nopass@example.com' });
    const wrongPassword = await login(key, 'ada@example.com', 'not the password');
    const wrongEmail = await login(key, 'nobody@example.com');
    const noPassword = await login(key, 'nopass@example.com', 'anything at all');
    const malformed = await login(key, 'not an email at all');
    for (const response of [wrongPassword, wrongEmail, noPassword, malformed]) {
      expectError(response, 401, 'invalid_credentials');
      expect(response.body).toBe(wrongPassword.body);
      expect(response.headers['retry-after']).toBeUndefined();
    }
  });

  it('takes as long for an unknown email as for a wrong password (one scrypt each)', async () => {
    const key = await newKey();
    await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    const timeOf = async (email: string) => {
      const started = performance.now();
      expect((await login(key, email, 'not the password')).statusCode).toBe(401);
      return performance.now() - started;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      known.push(await timeOf('ada@example.com'));
      unknown.push(await timeOf(`nobody${i}@example.com`));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const ratio = median(unknown) / median(known);
    // Both are dominated by one ~100 ms scrypt; without the dummy hash an unknown email would take ~1 ms.
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });

  it('refuses malformed sign-in bodies with 400', async () => {
    const key = await newKey();
    for (const body of [
      {},
      { email: 'a@example.com' },
      { password: PASSWORD },
      { email: null, password: PASSWORD },
      { email: 'a@example.com', password: '' },
      { email: 'a@example.com', password: 'x'.repeat(257) },
      { email: 'a\u0000@example.com', password: PASSWORD },
      { email: 'a@example.com', password: PASSWORD, remember: true },
    ]) {
      expectError(await call(platform.app, 'POST', `${BASE}/sessions`, { key, body }), 400, 'validation_failed');
    }
  });
});

describe('lockout after repeated failures', () => {
  it('answers failures 1-10 with 401, then 429 too_many_attempts with Retry-After even for the right password', async () => {
    const key = await newKey();
    await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    await createUser(key, { email: 'grace@example.com', password: PASSWORD });
    const started = platform.clock.now().getTime();
    for (let attempt = 1; attempt <= 10; attempt += 1) {
      expectError(await login(key, 'ada@example.com', `wrong password ${attempt}`), 401, 'invalid_credentials');
      platform.clock.advance(10_000);
    }
    const locked = await login(key, 'ada@example.com');
    expectError(locked, 429, 'too_many_attempts');
    const retryAfter = Number(locked.headers['retry-after']);
    // The first failure leaves the 15-minute window 900 s after it happened.
    const elapsed = (platform.clock.now().getTime() - started) / 1000;
    expect(retryAfter).toBeGreaterThanOrEqual(Math.floor(900 - elapsed));
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(900 - elapsed) + 1);
    expectError(await login(key, 'ADA@example.com', 'wrong again'), 429, 'too_many_attempts');

    // Per account: others of the tenant, and the same address elsewhere, are unaffected.
    expect((await login(key, 'grace@example.com')).statusCode).toBe(201);
    const otherKey = await newKey();
    await createUser(otherKey, { email: 'ada@example.com', password: PASSWORD });
    expect((await login(otherKey, 'ada@example.com')).statusCode).toBe(201);

    // Once the oldest failure leaves the window, one more attempt is allowed.
    platform.clock.advance(retryAfter * 1000);
    expect((await login(key, 'ada@example.com')).statusCode).toBe(201);
  });

  it('locks an unknown address exactly like a real one, so the 429 reveals nothing', async () => {
    const key = await newKey();
    await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    const replies = { real: [] as number[], unknown: [] as number[] };
    for (let attempt = 1; attempt <= 11; attempt += 1) {
      replies.real.push((await login(key, 'ada@example.com', 'wrong password!')).statusCode);
      replies.unknown.push((await login(key, 'ghost@example.com', 'wrong password!')).statusCode);
    }
    expect(replies.real).toEqual([...Array(10).fill(401), 429]);
    expect(replies.unknown).toEqual(replies.real);
    const real = await login(key, 'ada@example.com');
    const unknown = await login(key, 'ghost@example.com');
    expect(unknown.body).toBe(real.body);
    expect(unknown.headers['retry-after']).toBe(real.headers['retry-after']);
  });

  it('a successful sign-in clears the count; the window slides', async () => {
    const key = await newKey();
    await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    for (let attempt = 1; attempt <= 9; attempt += 1) expectError(await login(key, 'ada@example.com', 'wrong password!'), 401, 'invalid_credentials');
    expect((await login(key, 'ada@example.com')).statusCode).toBe(201);
    for (let attempt = 1; attempt <= 10; attempt += 1) expectError(await login(key, 'ada@example.com', 'wrong password!'), 401, 'invalid_credentials');
    expectError(await login(key, 'ada@example.com'), 429, 'too_many_attempts');
    platform.clock.advance(15 * MINUTE_MS + 1000);
    expect((await login(key, 'ada@example.com')).statusCode).toBe(201);
  });

  it('never checks more than 10 passwords per window, even for concurrent attempts', async () => {
    const key = await newKey();
    await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    const statuses = (await Promise.all(Array.from({ length: 14 }, () => login(key, 'ada@example.com', 'wrong password!')))).map((r) => r.statusCode);
    const checked = statuses.filter((status) => status === 401).length;
    expect(checked).toBeLessThanOrEqual(10);
    expect(statuses.filter((status) => status !== 401).every((status) => status === 429)).toBe(true);
    // Refused attempts leave no trace; the ones that were checked count: exactly 10 in all.
    for (let attempt = checked + 1; attempt <= 10; attempt += 1) expectError(await login(key, 'ada@example.com', 'wrong password!'), 401, 'invalid_credentials');
    expectError(await login(key, 'ada@example.com'), 429, 'too_many_attempts');
  });
});

describe('session verification, listing and revocation', () => {
  it('verifies a token: 200 with the user and the session without its token', async () => {
    const key = await newKey();
    const user = await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    const issued = await session(key, 'ada@example.com');
    const response = await verify(key, issued.token);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().data).toEqual({
      user: expect.objectContaining({ id: user.id, email: 'ada@example.com' }),
      session: { jti: issued.jti, issued_at: issued.issued_at, expires_at: issued.expires_at },
    });
    expect(response.body).not.toContain(issued.token);
  });

  it('answers unknown, expired, revoked and other-tenant tokens with 401 invalid_session', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    const issued = await session(key, 'ada@example.com');
    for (const token of ['cas_unknown', `${issued.token}x`, issued.token.toUpperCase(), 'sk_test_abc']) expectError(await verify(key, token), 401, 'invalid_session');
    expectError(await verify(await newKey(), issued.token), 401, 'invalid_session');
    expectError(await verify(await tenant.key({ mode: 'live' }), issued.token), 401, 'invalid_session');
    for (const token of [null, '', 7, ['x']]) expectError(await verify(key, token), 400, 'validation_failed');

    const revoked = await call(platform.app, 'DELETE', `${BASE}/sessions/${issued.jti}`, { key });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toEqual({ data: { jti: issued.jti, revoked: true } });
    expectError(await verify(key, issued.token), 401, 'invalid_session');
    expectError(await call(platform.app, 'DELETE', `${BASE}/sessions/${issued.jti}`, { key }), 404, 'not_found');

    const expiring = await session(key, 'ada@example.com');
    platform.clock.advance(30 * DAY_MS - 1000);
    expect((await verify(key, expiring.token)).statusCode).toBe(200);
    platform.clock.advance(1000);
    expectError(await verify(key, expiring.token), 401, 'invalid_session');
  });

  it('lists active sessions newest first with last_used_at', async () => {
    const key = await newKey();
    const user = await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    const first = await session(key, 'ada@example.com');
    platform.clock.advance(1000);
    const second = await session(key, 'ada@example.com');
    await verify(key, first.token);
    await call(platform.app, 'DELETE', `${BASE}/sessions/${second.jti}`, { key });
    platform.clock.advance(1000);
    const third = await session(key, 'ada@example.com');

    const list = await call(platform.app, 'GET', `${BASE}/users/${user.id}/sessions`, { key });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({
      data: [
        { jti: third.jti, issued_at: third.issued_at, expires_at: third.expires_at, last_used_at: null },
        { jti: first.jti, issued_at: first.issued_at, expires_at: first.expires_at, last_used_at: expect.stringMatching(ISO) },
      ],
      meta: { limit: 50, offset: 0, total: 2, has_more: false },
    });
    expect(list.body).not.toContain(first.token);
    expect((await call(platform.app, 'GET', `${BASE}/users/${user.id}/sessions?limit=1&offset=1`, { key })).json().data[0].jti).toBe(first.jti);
    expectError(await call(platform.app, 'GET', `${BASE}/users/${user.id}/sessions?status=all`, { key }), 400, 'validation_failed');
    for (const jti of ['nope', '00000000-0000-0000-0000-000000000000']) expectError(await call(platform.app, 'DELETE', `${BASE}/sessions/${jti}`, { key }), 404, 'not_found');
  });
});

describe('housekeeping', () => {
  it('the hourly sweep deletes long-expired sessions, challenges, tokens and old failures, and nothing live', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const user = await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    const live = await session(key, 'ada@example.com');
    expectError(await login(key, 'ada@example.com', 'wrong password!'), 401, 'invalid_credentials');
    const db = platform.database.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const owned = { tenant_id: tenant.id, mode: 'test' };
    const longAgo = new Date('2001-01-01T00:00:00.000Z');
    const id = () => randomUUID();
    await db
      .insertInto('customer_auth_sessions')
      .values({ ...owned, jti: id(), user_id: user.id, token_hash: 'old', issued_at: longAgo, expires_at: longAgo, last_used_at: null })
      .execute();
    await db
      .insertInto('customer_auth_challenges')
      .values({ ...owned, id: id(), user_id: user.id, token_hash: 'old', failed_attempts: 0, expires_at: longAgo, used_at: null, created_at: longAgo })
      .execute();
    await db
      .insertInto('customer_auth_email_verifications')
      .values({ ...owned, id: id(), user_id: user.id, email: 'ada@example.com', token_hash: 'old', expires_at: longAgo, used_at: null, created_at: longAgo })
      .execute();
    await db
      .insertInto('customer_auth_login_failures')
      .values({ ...owned, id: id(), email_key: 'old', failed_at: longAgo })
      .execute();
    const count = async (table: string) =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .where('tenant_id', '=', tenant.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await Promise.all(['customer_auth_sessions', 'customer_auth_challenges', 'customer_auth_email_verifications', 'customer_auth_login_failures'].map(count))).toEqual([
      2, 1, 1, 2,
    ]);

    // Run with real time (not this file's moved clock), so rows of test files running alongside stay.
    const result = await createSweepHandler(platform.database.db)(
      { id: id(), kind: SWEEP_JOB, tenantId: null, mode: null, payload: {}, attempts: 1, maxAttempts: 5, runAt: new Date() },
      new Date(),
    );
    expect(result).toEqual({ rescheduleAt: expect.any(Date) });
    expect(await Promise.all(['customer_auth_sessions', 'customer_auth_challenges', 'customer_auth_email_verifications', 'customer_auth_login_failures'].map(count))).toEqual([
      1, 0, 0, 1,
    ]);
    expect((await verify(key, live.token)).statusCode).toBe(200);
    const queued = await db.selectFrom('jobs').select('kind').where('dedupe_key', '=', `recurring:${SWEEP_JOB}`).execute();
    expect(queued).toEqual([{ kind: SWEEP_JOB }]);
  });
});

describe('end-user tokens are never API keys', () => {
  it('refuses a session, challenge or verification token as the bearer credential: 401', async () => {
    const key = await newKey();
    const user = await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    const sessionToken = (await session(key, 'ada@example.com')).token;
    const verificationToken = (await call(platform.app, 'POST', `${BASE}/users/${user.id}/email-verifications`, { key })).json().data.token;
    await enableMfa(key, user.id);
    const challengeToken = await challenge(key, 'ada@example.com');
    for (const token of [sessionToken, challengeToken, verificationToken]) {
      expect(token.startsWith('sk_')).toBe(false);
      for (const url of [`${BASE}/users`, `${BASE}/users/${user.id}`, '/api/v1/services/crm/contacts']) {
        expectError(await call(platform.app, 'GET', url, { key: token }), 401, 'unauthorized');
      }
    }
  });
});

describe('logs', () => {
  it('never contain a password, token, TOTP secret, recovery code or challenge token', async () => {
    const key = await newKey();
    logLines.length = 0;
    const secretPassword = 'log-canary passphrase 7731';
    const user = await createUser(key, { email: 'log@example.com', password: secretPassword });
    await login(key, 'log@example.com', 'wrong-canary passphrase 9917');
    const sessionToken = (await session(key, 'log@example.com', secretPassword)).token;
    await verify(key, sessionToken);
    await verify(key, `${sessionToken}-tampered`);
    const verificationToken = (await call(platform.app, 'POST', `${BASE}/users/${user.id}/email-verifications`, { key })).json().data.token;
    await call(platform.app, 'POST', `${BASE}/email-verifications/complete`, { key, body: { token: verificationToken } });
    await call(platform.app, 'POST', `${BASE}/users/${user.id}/password`, { key, body: { password: 'password123' } });
    const newPassword = 'second canary passphrase 4410';
    await call(platform.app, 'POST', `${BASE}/users/${user.id}/password`, { key, body: { password: newPassword } });
    const { secret, recoveryCodes } = await enableMfa(key, user.id);
    const challengeToken = await challenge(key, 'log@example.com', newPassword);
    const wrongCode = otp(secret, new Date(platform.clock.now().getTime() + 10 * 60_000));
    await completeMfa(key, challengeToken, wrongCode);
    const mfaSession = (await completeMfa(key, challengeToken, recoveryCodes[0]!)).json().data.session.token;
    const regenerated = (await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/recovery-codes`, { key })).json().data.recovery_codes;
    await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp/confirm`, { key, body: { code: otp(secret, platform.clock.now()) } });

    const everything = logLines.join('\n');
    expect(logLines.length).toBeGreaterThanOrEqual(14);
    const secrets = [
      secretPassword,
      'wrong-canary passphrase 9917',
      newPassword,
      'password123',
      sessionToken,
      mfaSession,
      verificationToken,
      challengeToken,
      secret,
      ...recoveryCodes,
      ...regenerated,
    ];
    for (const value of secrets) expect(everything, 'a secret reached the log').not.toContain(value);
    // Nor their distinctive parts (a token without its prefix, the TOTP secret lower-cased).
    expect(everything).not.toContain(sessionToken.slice(4));
    expect(everything.toLowerCase()).not.toContain(secret.toLowerCase());
    expect(everything).not.toContain('scrypt$');
  });
});

// The shared route security suite.

async function userWithSession(key: string) {
  await createUser(key, { email: 'sec@example.com', password: PASSWORD });
  return session(key, 'sec@example.com');
}

describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.customer-auth.manage',
  setup: (key) => createUser(key, { email: 'sec@example.com', password: PASSWORD }),
  url: () => `${BASE}/sessions`,
  body: () => ({ email: 'sec@example.com', password: PASSWORD }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.customer-auth.manage',
  setup: userWithSession,
  url: () => `${BASE}/sessions/verify`,
  body: (issued: { token: string }) => ({ token: issued.token }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.customer-auth.view',
  setup: (key) => createUser(key, { email: 'sec@example.com' }),
  url: (user: { id: string }) => `${BASE}/users/${user.id}/sessions`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'DELETE',
  scope: 'service.customer-auth.manage',
  setup: userWithSession,
  url: (issued: { jti: string }) => `${BASE}/sessions/${issued.jti}`,
  addressesOneRow: true,
});
