import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE_MS } from '../../lib/clock.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { BASE, helpers, ISO, otp, PASSWORD } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
  // Time moves only when a test says so: a TOTP step boundary never falls between computing a code and sending it.
  platform.clock.freeze();
});
afterAll(() => platform.close());

const { createUser, login, enableMfa, challenge, completeMfa } = helpers(() => platform);
const STEP_MS = 30_000;
const RECOVERY_CODE = /^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$/;

/** A tenant key and a user with a password (and, by default, TOTP on). */
async function mfaUser(options: { enable?: boolean } = {}) {
  const tenant = await platform.newTenant('Acme Co');
  const key = await tenant.key();
  const user = await createUser(key, { email: 'ada@example.com', password: PASSWORD });
  const mfa = options.enable === false ? undefined : await enableMfa(key, user.id);
  return { tenant, key, user, secret: mfa?.secret ?? '', recoveryCodes: mfa?.recoveryCodes ?? [] };
}

/** The code for the step `steps` away from the platform's now. */
function codeAt(secret: string, steps = 0): string {
  return otp(secret, new Date(platform.clock.now().getTime() + steps * STEP_MS));
}

describe('TOTP enrolment', () => {
  it('returns a base32 secret and an otpauth URL; pending until a code confirms it, with 10 recovery codes once', async () => {
    const { key, user } = await mfaUser({ enable: false });
    const enrolment = await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp`, { key });
    expect(enrolment.statusCode, enrolment.body).toBe(201);
    expect(enrolment.headers['cache-control']).toBe('no-store');
    const { secret, otpauth_url } = enrolment.json().data;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauth_url).toBe(`otpauth://totp/Acme%20Co:ada%40example.com?secret=${secret}&issuer=Acme%20Co&algorithm=SHA1&digits=6&period=30`);
    expect((await call(platform.app, 'GET', `${BASE}/users/${user.id}`, { key })).json().data.mfa_enabled).toBe(false);
    // Pending: signing in still needs no second factor.
    expect((await login(key, 'ada@example.com')).statusCode).toBe(201);

    const wrong = expectError(await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp/confirm`, { key, body: { code: codeAt(secret, 3) } }), 400, 'validation_failed');
    expect(wrong.details[0]).toMatchObject({ path: 'code', code: 'invalid_mfa_code' });

    const confirmed = await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp/confirm`, { key, body: { code: codeAt(secret) } });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(confirmed.headers['cache-control']).toBe('no-store');
    const { data } = confirmed.json();
    expect(Object.keys(data).sort()).toEqual(['recovery_codes', 'user']);
    expect(data.user).toMatchObject({ id: user.id, mfa_enabled: true, mfa_enabled_at: expect.stringMatching(ISO) });
    expect(data.recovery_codes).toHaveLength(10);
    expect(new Set(data.recovery_codes).size).toBe(10);
    for (const code of data.recovery_codes) expect(code).toMatch(RECOVERY_CODE);
    expect((await call(platform.app, 'GET', `${BASE}/users/${user.id}`, { key })).json().data).toEqual(data.user);

    expectError(await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp`, { key }), 409, 'mfa_already_enabled');
    expectError(await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp/confirm`, { key, body: { code: codeAt(secret) } }), 409, 'mfa_already_enabled');
  });

  it('replaces a pending secret when enrolment starts again; confirming without one is 409 mfa_not_pending', async () => {
    const { key, user } = await mfaUser({ enable: false });
    expectError(await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp/confirm`, { key, body: { code: '123456' } }), 409, 'mfa_not_pending');
    const first = (await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp`, { key })).json().data.secret;
    const second = (await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp`, { key })).json().data.secret;
    expect(second).not.toBe(first);
    expectError(await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp/confirm`, { key, body: { code: codeAt(first) } }), 400, 'validation_failed');
    expect((await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp/confirm`, { key, body: { code: codeAt(second) } })).statusCode).toBe(200);
    for (const body of [{}, { code: null }, { code: 123456 }, { code: '' }, { code: '1'.repeat(65) }, { code: '123456', extra: 1 }]) {
      expectError(await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp/confirm`, { key, body }), 400, 'validation_failed');
    }
  });

  it('keeps TOTP secrets encrypted and recovery codes hashed at rest', async () => {
    const { user, secret, recoveryCodes } = await mfaUser();
    const db = platform.database.db as unknown as import('kysely').Kysely<Record<string, Record<string, unknown>>>;
    const row = await db.selectFrom('customer_auth_users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    expect(row.totp_secret).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(stored).not.toContain(secret);
    const { Secret } = await import('otpauth');
    const raw = Buffer.from(Secret.fromBase32(secret).bytes);
    for (const encoding of ['hex', 'base64', 'base64url'] as const) expect(stored).not.toContain(raw.toString(encoding));
    expect(String(row.password_hash)).toMatch(/^scrypt\$32768\$8\$1\$/);
    const codes = JSON.stringify(await db.selectFrom('customer_auth_recovery_codes').selectAll().where('user_id', '=', user.id).execute());
    for (const code of recoveryCodes) expect(codes).not.toContain(code);
  });
});

describe('MFA sign-in', () => {
  it('asks for a second factor after the right password, then issues the session exactly as the spec says', async () => {
    const { key, user, secret } = await mfaUser();
    const response = await login(key, 'ada@example.com');
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const { data } = response.json();
    expect(data).toEqual({ mfa_required: true, challenge_token: expect.stringMatching(/^cach_[A-Za-z0-9_-]{43}$/), expires_at: expect.stringMatching(ISO) });
    expect(Date.parse(data.expires_at) - Date.parse(new Date(platform.clock.now()).toISOString())).toBeLessThanOrEqual(5 * MINUTE_MS);
    expect(Date.parse(data.expires_at) - Date.parse(new Date(platform.clock.now()).toISOString())).toBeGreaterThan(5 * MINUTE_MS - 5000);
    // The password step alone is no sign-in.
    expect((await call(platform.app, 'GET', `${BASE}/users/${user.id}`, { key })).json().data.last_login_at).toBeNull();
    expectError(await call(platform.app, 'GET', `${BASE}/users`, { key: data.challenge_token }), 401, 'unauthorized');

    const code = codeAt(secret);
    const completed = await completeMfa(key, data.challenge_token, ` ${code.slice(0, 3)} ${code.slice(3)} `);
    expect(completed.statusCode, completed.body).toBe(200);
    expect(completed.headers['cache-control']).toBe('no-store');
    const result = completed.json().data;
    expect(Object.keys(result).sort()).toEqual(['session', 'user']);
    expect(result.session).toEqual({
      token: expect.stringMatching(/^cas_/),
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      issued_at: expect.stringMatching(ISO),
      expires_at: expect.stringMatching(ISO),
    });
    expect(result.user).toMatchObject({ id: user.id, email: 'ada@example.com', mfa_enabled: true, last_login_at: result.session.issued_at });
    expect((await call(platform.app, 'POST', `${BASE}/sessions/verify`, { key, body: { token: result.session.token } })).statusCode).toBe(200);

    // The challenge is single use.
    expectError(await completeMfa(key, data.challenge_token, codeAt(secret, 1)), 401, 'invalid_challenge');
  });

  it('refuses the code used to confirm enrolment, and any code reused or for an earlier step (RFC 6238 5.2)', async () => {
    const { key, user } = await mfaUser({ enable: false });
    const secret = (await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp`, { key })).json().data.secret;
    const confirmCode = codeAt(secret);
    expect((await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp/confirm`, { key, body: { code: confirmCode } })).statusCode).toBe(200);

    const first = await challenge(key, 'ada@example.com');
    expectError(await completeMfa(key, first, confirmCode), 401, 'invalid_mfa_code');
    // The next step (within the drift window) is fine once...
    const next = codeAt(secret, 1);
    expect((await completeMfa(key, first, next)).statusCode).toBe(200);
    // ...and never again, even with a new challenge; nor is the step before it.
    const second = await challenge(key, 'ada@example.com');
    expectError(await completeMfa(key, second, next), 401, 'invalid_mfa_code');
    platform.clock.advance(STEP_MS);
    expectError(await completeMfa(key, second, codeAt(secret, -1)), 401, 'invalid_mfa_code');
    expect((await completeMfa(key, second, codeAt(secret, 1))).statusCode).toBe(200);
  });

  it('accepts one 30-second step of drift either side and no more', async () => {
    const { key, secret } = await mfaUser();
    platform.clock.advance(10 * STEP_MS);
    for (const steps of [-2, 2, 3, -10]) {
      const token = await challenge(key, 'ada@example.com');
      expectError(await completeMfa(key, token, codeAt(secret, steps)), 401, 'invalid_mfa_code');
    }
    platform.clock.advance(10 * MINUTE_MS);
    let token = await challenge(key, 'ada@example.com');
    expect((await completeMfa(key, token, codeAt(secret, -1))).statusCode).toBe(200);
    token = await challenge(key, 'ada@example.com');
    expect((await completeMfa(key, token, codeAt(secret, 1))).statusCode).toBe(200);
    // The step in between is now at or before the last accepted one.
    token = await challenge(key, 'ada@example.com');
    expectError(await completeMfa(key, token, codeAt(secret, 0)), 401, 'invalid_mfa_code');
  });

  it('accepts each recovery code once, in any case and with spaces around it', async () => {
    const { key, recoveryCodes } = await mfaUser();
    const [first, second] = recoveryCodes as [string, string];
    let token = await challenge(key, 'ada@example.com');
    const used = await completeMfa(key, token, `  ${first.toUpperCase()} `);
    expect(used.statusCode, used.body).toBe(200);
    token = await challenge(key, 'ada@example.com');
    expectError(await completeMfa(key, token, first), 401, 'invalid_mfa_code');
    expect((await completeMfa(key, token, second)).statusCode).toBe(200);
    token = await challenge(key, 'ada@example.com');
    for (const code of ['abcd-efgh-ijkl-mnop', first.replace(/-/g, ''), `${first}x`, 'not a code']) expectError(await completeMfa(key, token, code), 401, 'invalid_mfa_code');
  });

  it('replaces recovery codes on request: the old ones stop working', async () => {
    const { key, user, recoveryCodes } = await mfaUser();
    const response = await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/recovery-codes`, { key });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const { data } = response.json();
    expect(data.user).toMatchObject({ id: user.id, mfa_enabled: true });
    expect(data.recovery_codes).toHaveLength(10);
    for (const code of data.recovery_codes) expect(code).toMatch(RECOVERY_CODE);
    let token = await challenge(key, 'ada@example.com');
    expectError(await completeMfa(key, token, recoveryCodes[3]!), 401, 'invalid_mfa_code');
    expect((await completeMfa(key, token, data.recovery_codes[3])).statusCode).toBe(200);
    token = await challenge(key, 'ada@example.com');
    expectError(await completeMfa(key, token, data.recovery_codes[3]), 401, 'invalid_mfa_code');
  });

  it('ends a challenge after five wrong codes: then even the right code fails', async () => {
    const { key, secret } = await mfaUser();
    const token = await challenge(key, 'ada@example.com');
    for (let attempt = 1; attempt <= 5; attempt += 1) expectError(await completeMfa(key, token, attempt % 2 ? '000000' : 'aaaa-bbbb-cccc-dddd'), 401, 'invalid_mfa_code');
    expectError(await completeMfa(key, token, codeAt(secret)), 401, 'invalid_challenge');
    // A new challenge works (5 failures are under the account lockout of 10).
    expect((await completeMfa(key, await challenge(key, 'ada@example.com'), codeAt(secret))).statusCode).toBe(200);
  });

  it('expires a challenge after 5 minutes; unknown and other-tenant tokens are invalid_challenge', async () => {
    const { key, secret } = await mfaUser();
    const token = await challenge(key, 'ada@example.com');
    expectError(await completeMfa(await (await platform.newTenant()).key(), token, codeAt(secret)), 401, 'invalid_challenge');
    for (const bad of ['cach_unknown', 'x', `${token}x`]) expectError(await completeMfa(key, bad, codeAt(secret)), 401, 'invalid_challenge');
    platform.clock.advance(5 * MINUTE_MS);
    expectError(await completeMfa(key, token, codeAt(secret)), 401, 'invalid_challenge');
    for (const body of [
      {},
      { challenge_token: token },
      { code: '123456' },
      { challenge_token: null, code: '123456' },
      { challenge_token: token, code: 123456 },
      { challenge_token: token, code: 'x'.repeat(65) },
    ]) {
      expectError(await call(platform.app, 'POST', `${BASE}/sessions/mfa`, { key, body }), 400, 'validation_failed');
    }
  });

  it('counts wrong codes towards the account lockout, so new challenges buy no new guesses', async () => {
    const { key, secret } = await mfaUser();
    const challenges = [await challenge(key, 'ada@example.com'), await challenge(key, 'ada@example.com'), await challenge(key, 'ada@example.com')];
    for (const token of challenges.slice(0, 2)) {
      for (let attempt = 1; attempt <= 5; attempt += 1) expectError(await completeMfa(key, token, '000000'), 401, 'invalid_mfa_code');
    }
    const locked = await completeMfa(key, challenges[2]!, codeAt(secret));
    expectError(locked, 429, 'too_many_attempts');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expectError(await login(key, 'ada@example.com'), 429, 'too_many_attempts');
    platform.clock.advance(15 * MINUTE_MS);
    expect((await completeMfa(key, challenges[2]!, codeAt(secret))).statusCode).toBe(401); // expired by now
    expect((await completeMfa(key, await challenge(key, 'ada@example.com'), codeAt(secret))).statusCode).toBe(200);
  });

  it('does not clear the failure count on a right password alone when MFA is on', async () => {
    const { key } = await mfaUser();
    for (let attempt = 1; attempt <= 9; attempt += 1) expectError(await login(key, 'ada@example.com', 'wrong password!'), 401, 'invalid_credentials');
    await challenge(key, 'ada@example.com');
    expectError(await login(key, 'ada@example.com', 'wrong password!'), 401, 'invalid_credentials');
    expectError(await login(key, 'ada@example.com'), 429, 'too_many_attempts');
  });

  it('lets exactly one of two concurrent completions with the same code succeed', async () => {
    const { key, secret } = await mfaUser();
    const code = codeAt(secret);
    const sameChallenge = await challenge(key, 'ada@example.com');
    const twice = await Promise.all([completeMfa(key, sameChallenge, code), completeMfa(key, sameChallenge, code)]);
    expect(twice.map((r) => r.statusCode).sort()).toEqual([200, 401]);

    platform.clock.advance(STEP_MS);
    const next = codeAt(secret);
    const [a, b] = [await challenge(key, 'ada@example.com'), await challenge(key, 'ada@example.com')];
    const raced = await Promise.all([completeMfa(key, a, next), completeMfa(key, b, next)]);
    expect(raced.map((r) => r.statusCode).sort()).toEqual([200, 401]);
  });

  it('invalidates open challenges when the user is disabled or MFA is turned off', async () => {
    const { key, user, secret } = await mfaUser();
    const beforeDisable = await challenge(key, 'ada@example.com');
    await call(platform.app, 'PATCH', `${BASE}/users/${user.id}`, { key, body: { status: 'disabled' } });
    expectError(await completeMfa(key, beforeDisable, codeAt(secret)), 401, 'invalid_challenge');
    expectError(await login(key, 'ada@example.com'), 401, 'invalid_credentials');
    await call(platform.app, 'PATCH', `${BASE}/users/${user.id}`, { key, body: { status: 'active' } });

    const beforeTurnOff = await challenge(key, 'ada@example.com');
    const off = await call(platform.app, 'DELETE', `${BASE}/users/${user.id}/mfa/totp`, { key });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().data).toMatchObject({ id: user.id, mfa_enabled: false, mfa_enabled_at: null });
    expectError(await completeMfa(key, beforeTurnOff, codeAt(secret, 1)), 401, 'invalid_challenge');
    expect((await login(key, 'ada@example.com')).statusCode).toBe(201);
    expectError(await call(platform.app, 'DELETE', `${BASE}/users/${user.id}/mfa/totp`, { key }), 409, 'mfa_not_enabled');
    expectError(await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/recovery-codes`, { key }), 409, 'mfa_not_enabled');

    // Enrolling again starts from a new secret; the old one is gone.
    const again = await enableMfa(key, user.id);
    expect(again.secret).not.toBe(secret);
    const token = await challenge(key, 'ada@example.com');
    expectError(await completeMfa(key, token, codeAt(secret)), 401, 'invalid_mfa_code');
    expect((await completeMfa(key, token, codeAt(again.secret))).statusCode).toBe(200);
  });

  it('takes an empty object or no body on the actions without input, and refuses any field', async () => {
    const { key, user } = await mfaUser({ enable: false });
    const enrol = `${BASE}/users/${user.id}/mfa/totp`;
    const verifications = `${BASE}/users/${user.id}/email-verifications`;
    expect((await call(platform.app, 'POST', enrol, { key, body: {} })).statusCode).toBe(201);
    expect((await call(platform.app, 'POST', verifications, { key, body: {} })).statusCode).toBe(201);
    for (const url of [enrol, verifications, `${BASE}/users/${user.id}/mfa/recovery-codes`]) {
      const error = expectError(await call(platform.app, 'POST', url, { key, body: { issuer: 'x' } }), 400, 'validation_failed');
      expect(error.details[0]).toMatchObject({ path: 'issuer', code: 'unknown_field' });
      expectError(await call(platform.app, 'POST', url, { key, body: [] }), 400, 'validation_failed');
    }
  });

  it('answers MFA routes on malformed or unknown user ids with 404', async () => {
    const key = await (await platform.newTenant()).key();
    for (const id of ['nope', '00000000-0000-0000-0000-000000000000']) {
      expectError(await call(platform.app, 'POST', `${BASE}/users/${id}/mfa/totp`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'POST', `${BASE}/users/${id}/mfa/totp/confirm`, { key, body: { code: '123456' } }), 404, 'not_found');
      expectError(await call(platform.app, 'DELETE', `${BASE}/users/${id}/mfa/totp`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'POST', `${BASE}/users/${id}/mfa/recovery-codes`, { key }), 404, 'not_found');
    }
  });
});

// The shared route security suite.

type Enrolled = { id: string; secret: string };

async function pendingEnrolment(key: string): Promise<Enrolled> {
  const user = await createUser(key, { email: 'sec@example.com' });
  const secret = (await call(platform.app, 'POST', `${BASE}/users/${user.id}/mfa/totp`, { key })).json().data.secret;
  return { id: user.id, secret };
}

describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.customer-auth.manage',
  setup: async (key) => {
    const user = await createUser(key, { email: 'sec@example.com', password: PASSWORD });
    const { secret } = await enableMfa(key, user.id);
    return { secret, token: await challenge(key, 'sec@example.com') };
  },
  url: () => `${BASE}/sessions/mfa`,
  body: (fixture: { secret: string; token: string }) => ({ challenge_token: fixture.token, code: codeAt(fixture.secret) }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.customer-auth.manage',
  setup: (key) => createUser(key, { email: 'sec@example.com' }),
  url: (user: { id: string }) => `${BASE}/users/${user.id}/mfa/totp`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.customer-auth.manage',
  setup: pendingEnrolment,
  url: (fixture: Enrolled) => `${BASE}/users/${fixture.id}/mfa/totp/confirm`,
  body: (fixture: Enrolled) => ({ code: codeAt(fixture.secret) }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'DELETE',
  scope: 'service.customer-auth.manage',
  setup: pendingEnrolment,
  url: (fixture: Enrolled) => `${BASE}/users/${fixture.id}/mfa/totp`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.customer-auth.manage',
  setup: async (key) => {
    const user = await createUser(key, { email: 'sec@example.com' });
    await enableMfa(key, user.id);
    return user;
  },
  url: (user: { id: string }) => `${BASE}/users/${user.id}/mfa/recovery-codes`,
  addressesOneRow: true,
});
