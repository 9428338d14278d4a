import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../lib/clock.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { BASE, helpers, ISO, PASSWORD } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { createUser, login, session } = helpers(() => platform);

async function newKey(): Promise<string> {
  return (await platform.newTenant()).key();
}

function patch(key: string, id: string, body: unknown) {
  return call(platform.app, 'PATCH', `${BASE}/users/${id}`, { key, body });
}

async function listEmails(key: string, query: string): Promise<string[]> {
  const response = await call(platform.app, 'GET', `${BASE}/users?${query}`, { key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.map((user: { email: string }) => user.email);
}

async function issueVerification(key: string, userId: string): Promise<{ token: string; expires_at: string }> {
  const response = await call(platform.app, 'POST', `${BASE}/users/${userId}/email-verifications`, { key });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

function completeVerification(key: string, token: unknown) {
  return call(platform.app, 'POST', `${BASE}/email-verifications/complete`, { key, body: { token } });
}

describe('end users', () => {
  it('creates a user with exactly the End user fields, lower-casing the email, never echoing the password', async () => {
    const key = await newKey();
    const response = await call(platform.app, 'POST', `${BASE}/users`, {
      key,
      body: {
        email: 'Ada@Example.COM',
        password: PASSWORD,
        name: '  Ada Lovelace ',
        profile_picture_url: 'https://img.example.com/ada.png',
        metadata: { plan: 'pro', n: [1, { x: null }] },
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    const user = response.json().data;
    expect(user).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      profile_picture_url: 'https://img.example.com/ada.png',
      status: 'active',
      email_verified_at: null,
      mfa_enabled: false,
      mfa_enabled_at: null,
      last_login_at: null,
      created_at: expect.stringMatching(ISO),
      updated_at: user.created_at,
      metadata: { plan: 'pro', n: [1, { x: null }] },
    });
    expect(response.body).not.toContain(PASSWORD);
    expect(response.body).not.toContain('scrypt');
    expect(response.headers['cache-control']).toBeUndefined();
    expect((await call(platform.app, 'GET', `${BASE}/users/${user.id}`, { key })).json().data).toEqual(user);

    const bare = await createUser(key, { email: 'bare@example.com' });
    expect(bare).toMatchObject({ name: null, profile_picture_url: null, metadata: {} });
  });

  it('keeps emails unique per tenant and mode, case-insensitively: 409 email_taken', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const existing = await createUser(key, { email: 'ada@example.com' });
    const error = expectError(await call(platform.app, 'POST', `${BASE}/users`, { key, body: { email: 'ADA@example.com' } }), 409, 'email_taken');
    expect(error.details[0]).toMatchObject({ path: 'email', code: 'already_exists', user_id: existing.id });
    await createUser(await tenant.key({ mode: 'live' }), { email: 'ada@example.com' });
    await createUser(await newKey(), { email: 'ada@example.com' });

    const other = await createUser(key, { email: 'grace@example.com' });
    expectError(await patch(key, other.id, { email: 'Ada@Example.com' }), 409, 'email_taken');
  });

  it('lets exactly one of several concurrent creates of one email succeed', async () => {
    const key = await newKey();
    const replies = await Promise.all(
      Array.from({ length: 4 }, (_, i) => call(platform.app, 'POST', `${BASE}/users`, { key, body: { email: i % 2 ? 'RACE@example.com' : 'race@example.com' } })),
    );
    expect(replies.map((reply) => reply.statusCode).sort()).toEqual([201, 409, 409, 409]);
  });

  it('lists newest first with filters status, search and exact email', async () => {
    const key = await newKey();
    const ada = await createUser(key, { email: 'ada@example.com', name: 'Ada Lovelace' });
    await createUser(key, { email: 'grace@navy.example', name: 'Grace Hopper' });
    await createUser(key, { email: 'ada.king@example.com', name: 'Countess' });
    expectStatus(await patch(key, ada.id, { status: 'disabled' }), 200);

    expect(await listEmails(key, '')).toEqual(['ada.king@example.com', 'grace@navy.example', 'ada@example.com']);
    expect(await listEmails(key, 'status=disabled')).toEqual(['ada@example.com']);
    expect(await listEmails(key, 'status=active&search=ADA')).toEqual(['ada.king@example.com']);
    expect(await listEmails(key, 'search=hopper')).toEqual(['grace@navy.example']);
    expect(await listEmails(key, 'search=%25')).toEqual([]);
    expect(await listEmails(key, 'email=ADA@EXAMPLE.COM')).toEqual(['ada@example.com']);
    expect(await listEmails(key, 'email=ada')).toEqual([]);
    const page = (await call(platform.app, 'GET', `${BASE}/users?limit=2`, { key })).json();
    expect(page.meta).toEqual({ limit: 2, offset: 0, total: 3, has_more: true });
    for (const query of ['status=blocked', 'limit=0', 'limit=201', 'offset=-1', 'search=', 'nope=1', 'search=a%00b', `search=${'x'.repeat(201)}`]) {
      expectError(await call(platform.app, 'GET', `${BASE}/users?${query}`, { key }), 400, 'validation_failed');
    }
  });

  it('updates only the fields sent; null clears; metadata is replaced whole', async () => {
    const key = await newKey();
    const user = await createUser(key, { email: 'ada@example.com', name: 'Ada', profile_picture_url: 'https://img.example.com/a.png', metadata: { a: 1 } });
    platform.clock.advance(10);
    const response = await patch(key, user.id, { name: null, metadata: { b: 2 } });
    expect(response.statusCode, response.body).toBe(200);
    const updated = response.json().data;
    expect(updated).toMatchObject({ name: null, profile_picture_url: 'https://img.example.com/a.png', metadata: { b: 2 }, email: 'ada@example.com' });
    expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(user.updated_at));
  });

  it('refuses a stale expected_updated_at with 409 stale_update', async () => {
    const key = await newKey();
    const user = await createUser(key);
    const first = await patch(key, user.id, { name: 'One', expected_updated_at: user.updated_at });
    expect(first.statusCode).toBe(200);
    const error = expectError(await patch(key, user.id, { name: 'Two', expected_updated_at: user.updated_at }), 409, 'stale_update');
    expect(error.details[0]).toMatchObject({ path: 'expected_updated_at', current_updated_at: first.json().data.updated_at });
  });

  it('disabling a user refuses sign-in like a wrong password and ends existing sessions; enabling does not revive them', async () => {
    const key = await newKey();
    const user = await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    const { token } = await session(key, 'ada@example.com');
    const verify = () => call(platform.app, 'POST', `${BASE}/sessions/verify`, { key, body: { token } });
    expect((await verify()).statusCode).toBe(200);

    expect((await patch(key, user.id, { status: 'disabled' })).json().data.status).toBe('disabled');
    expectError(await verify(), 401, 'invalid_session');
    const refused = expectError(await login(key, 'ada@example.com'), 401, 'invalid_credentials');
    const wrong = expectError(await login(key, 'ada@example.com', 'not the password'), 401, 'invalid_credentials');
    const unknown = expectError(await login(key, 'nobody@example.com'), 401, 'invalid_credentials');
    expect(refused).toEqual(wrong);
    expect(refused).toEqual(unknown);

    await patch(key, user.id, { status: 'active' });
    expectError(await verify(), 401, 'invalid_session');
    expect((await login(key, 'ada@example.com')).statusCode).toBe(201);
  });

  it('deletes a user with their sessions; a second delete is 404', async () => {
    const key = await newKey();
    const user = await createUser(key, { email: 'ada@example.com', password: PASSWORD });
    const { token } = await session(key, 'ada@example.com');
    const verification = await issueVerification(key, user.id);
    const deleted = await call(platform.app, 'DELETE', `${BASE}/users/${user.id}`, { key });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ data: { id: user.id, deleted: true } });
    expectError(await call(platform.app, 'DELETE', `${BASE}/users/${user.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/users/${user.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'POST', `${BASE}/sessions/verify`, { key, body: { token } }), 401, 'invalid_session');
    expectError(await completeVerification(key, verification.token), 400, 'verification_token_invalid');
    // The address is free again.
    await createUser(key, { email: 'ada@example.com' });
  });

  it('answers malformed and unknown ids with 404', async () => {
    const key = await newKey();
    for (const id of ['nope', '00000000-0000-0000-0000-000000000000', `${'a'.repeat(300)}`, "1' or '1'='1"]) {
      const url = `${BASE}/users/${encodeURIComponent(id)}`;
      expectError(await call(platform.app, 'GET', url, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'PATCH', url, { key, body: { name: 'x' } }), 404, 'not_found');
      expectError(await call(platform.app, 'DELETE', url, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'POST', `${url}/password`, { key, body: { password: PASSWORD } }), 404, 'not_found');
      expectError(await call(platform.app, 'POST', `${url}/email-verifications`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'GET', `${url}/sessions`, { key }), 404, 'not_found');
    }
  });

  it('refuses hostile input with 400 validation_failed, never 500', async () => {
    const key = await newKey();
    const user = await createUser(key);
    const bodies: unknown[] = [
      {},
      { email: null },
      { email: 42 },
      { email: 'not an email' },
      { email: `${'a'.repeat(320)}@example.com` },
      { email: 'x@example.com', unknown: 1 },
      { email: 'x@example.com', name: '   ' },
      { email: 'x@example.com', name: 'a\u0000b' },
      { email: 'x@example.com', name: '\ud800' },
      { email: 'x@example.com', name: 'x'.repeat(201) },
      { email: 'x@example.com', profile_picture_url: 'javascript:alert(1)' },
      { email: 'x@example.com', profile_picture_url: 'ftp://example.com/a.png' },
      { email: 'x@example.com', metadata: [] },
      { email: 'x@example.com', metadata: 'text' },
      { email: 'x@example.com', metadata: null },
      { email: 'x@example.com', metadata: { big: 'x'.repeat(17 * 1024) } },
      { email: 'x@example.com', metadata: { 'a\u0000': 1 } },
      { email: 'x@example.com', metadata: { a: 'nul \u0000 inside' } },
      { email: 'x@example.com', metadata: { a: 'lone \udc00' } },
      { email: 'x@example.com', metadata: JSON.parse(`${'{"a":'.repeat(25)}1${'}'.repeat(25)}`) },
      { email: 'x@example.com', status: 'active' },
      { email: 'x@example.com', password: null },
      { email: 'x@example.com', password: 12345678 },
    ];
    for (const body of bodies) {
      expectError(await call(platform.app, 'POST', `${BASE}/users`, { key, body }), 400, 'validation_failed');
    }
    for (const body of [{ name: null, status: 'deleted' }, { email: null }, { id: 'x' }, { expected_updated_at: 'yesterday' }, { password: PASSWORD }, { mfa_enabled: true }, []]) {
      expectError(await patch(key, user.id, body), 400, 'validation_failed');
    }
    expectError(await call(platform.app, 'POST', `${BASE}/users`, { key, body: '{broken' }), 400, 'invalid_json');
    // Deep JSON is refused by the JSON parser or the depth rule, never a crash.
    const deep = `{"email":"deep@example.com","metadata":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    const response = await call(platform.app, 'POST', `${BASE}/users`, { key, body: deep });
    expect(response.statusCode).toBe(400);
  });

  it('accepts metadata up to 16 KB', async () => {
    const key = await newKey();
    const user = await createUser(key, { email: 'meta@example.com', metadata: { big: 'x'.repeat(16 * 1024 - 20) } });
    expect((user.metadata as { big: string }).big).toHaveLength(16 * 1024 - 20);
  });
});

describe('passwords', () => {
  it('sets and changes a password; the new one works, the old one does not, sessions end by default', async () => {
    const key = await newKey();
    const user = await createUser(key, { email: 'ada@example.com' });
    expectError(await login(key, 'ada@example.com', 'anything at all'), 401, 'invalid_credentials');

    const set = await call(platform.app, 'POST', `${BASE}/users/${user.id}/password`, { key, body: { password: PASSWORD } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data.id).toBe(user.id);
    expect(set.body).not.toContain(PASSWORD);
    const { token } = await session(key, 'ada@example.com');

    const changed = await call(platform.app, 'POST', `${BASE}/users/${user.id}/password`, { key, body: { password: 'another fine passphrase' } });
    expect(changed.statusCode).toBe(200);
    expectError(await call(platform.app, 'POST', `${BASE}/sessions/verify`, { key, body: { token } }), 401, 'invalid_session');
    expectError(await login(key, 'ada@example.com'), 401, 'invalid_credentials');
    const kept = await session(key, 'ada@example.com', 'another fine passphrase');

    await call(platform.app, 'POST', `${BASE}/users/${user.id}/password`, { key, body: { password: 'third fine passphrase', revoke_sessions: false } });
    expect((await call(platform.app, 'POST', `${BASE}/sessions/verify`, { key, body: { token: kept.token } })).statusCode).toBe(200);
  });

  it('refuses short, long, common and email-like passwords (ASVS V2.1)', async () => {
    const key = await newKey();
    const user = await createUser(key, { email: 'ada.lovelace@example.com' });
    const cases: Array<[unknown, string]> = [
      ['short', 'invalid_length'],
      ['x'.repeat(257), 'invalid_length'],
      ['password123', 'password_too_common'],
      ['Iloveyou1', 'password_too_common'],
      ['QWERTYUIOP', 'password_too_common'],
      ['ada.lovelace@example.com', 'password_matches_email'],
      ['Ada.Lovelace', 'password_matches_email'],
      [null, 'invalid_type'],
    ];
    for (const [password, code] of cases) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/users/${user.id}/password`, { key, body: { password } }), 400, 'validation_failed');
      expect(error.details[0], String(password)).toMatchObject({ path: 'password', code });
      const created = expectError(await call(platform.app, 'POST', `${BASE}/users`, { key, body: { email: 'ada.lovelace@example.com', password } }), 400, 'validation_failed');
      expect(created.details[0]).toMatchObject({ path: 'password', code });
    }
    // 8 and 256 characters, spaces and any Unicode are fine.
    for (const password of ['  8 ch  ', 'ü'.repeat(256), 'パスワードは長い']) {
      expect((await call(platform.app, 'POST', `${BASE}/users/${user.id}/password`, { key, body: { password } })).statusCode).toBe(200);
    }
    expect((await login(key, 'ada.lovelace@example.com', 'パスワードは長い')).statusCode).toBe(201);
  });
});

describe('email verification', () => {
  it('issues a single-use 24-hour token and completes verification exactly as the spec says', async () => {
    const key = await newKey();
    const user = await createUser(key, { email: 'ada@example.com' });
    platform.clock.advance(5);
    const issued = await call(platform.app, 'POST', `${BASE}/users/${user.id}/email-verifications`, { key });
    expect(issued.statusCode).toBe(201);
    expect(issued.headers['cache-control']).toBe('no-store');
    const { token, expires_at } = issued.json().data;
    expect(token).toMatch(/^cav_[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(expires_at) - Date.parse(issued.headers.date as string)).toBeGreaterThan(24 * HOUR_MS - 5 * 60_000);

    const completed = await completeVerification(key, token);
    expect(completed.statusCode, completed.body).toBe(200);
    const verified = completed.json().data;
    expect(verified).toMatchObject({ id: user.id, email: 'ada@example.com', email_verified_at: expect.stringMatching(ISO) });
    expect(Object.keys(verified).sort()).toEqual(Object.keys(user).sort());
    expect((await call(platform.app, 'GET', `${BASE}/users/${user.id}`, { key })).json().data).toEqual(verified);

    expectError(await completeVerification(key, token), 410, 'verification_token_used');
  });

  it('answers unknown, expired, replaced and other-tenant tokens with clear 4xx codes', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const user = await createUser(key, { email: 'ada@example.com' });
    expectError(await completeVerification(key, 'cav_unknown'), 400, 'verification_token_invalid');
    for (const token of [null, '', 42, 'x'.repeat(201)]) expectError(await completeVerification(key, token), 400, 'validation_failed');

    const first = await issueVerification(key, user.id);
    const second = await issueVerification(key, user.id);
    expectError(await completeVerification(key, first.token), 400, 'verification_token_invalid');
    // Another tenant, or the live mode of this one, does not know the token.
    expectError(await completeVerification(await newKey(), second.token), 400, 'verification_token_invalid');
    expectError(await completeVerification(await tenant.key({ mode: 'live' }), second.token), 400, 'verification_token_invalid');

    platform.clock.advance(24 * HOUR_MS + 1000);
    expectError(await completeVerification(key, second.token), 410, 'verification_token_expired');
    expect((await call(platform.app, 'GET', `${BASE}/users/${user.id}`, { key })).json().data.email_verified_at).toBeNull();
  });

  it('changing the email clears email_verified_at and cancels outstanding tokens', async () => {
    const key = await newKey();
    const user = await createUser(key, { email: 'ada@example.com' });
    await completeVerification(key, (await issueVerification(key, user.id)).token);
    const pending = await issueVerification(key, user.id);
    const sameAddress = await patch(key, user.id, { email: 'ADA@example.com' });
    expect(sameAddress.json().data.email_verified_at).toMatch(ISO);

    const changed = (await patch(key, user.id, { email: 'countess@example.com' })).json().data;
    expect(changed).toMatchObject({ email: 'countess@example.com', email_verified_at: null });
    expectError(await completeVerification(key, pending.token), 400, 'verification_token_invalid');
    const fresh = await issueVerification(key, user.id);
    expect((await completeVerification(key, fresh.token)).json().data.email_verified_at).toMatch(ISO);
  });
});

function expectStatus(response: { statusCode: number; body: string }, status: number) {
  expect(response.statusCode, response.body).toBe(status);
}

// The shared route security suite, for every route of this file's area.

const userSetup = (key: string) => createUser(key, { email: 'sec@example.com' });
type U = { id: string };

describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.customer-auth.manage',
  url: () => `${BASE}/users`,
  body: () => ({ email: 'sec@example.com' }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.customer-auth.view', url: () => `${BASE}/users`, addressesOneRow: false });
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.customer-auth.view', setup: userSetup, url: (u: U) => `${BASE}/users/${u.id}`, addressesOneRow: true });
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.customer-auth.manage',
  setup: userSetup,
  url: (u: U) => `${BASE}/users/${u.id}`,
  body: () => ({ name: 'Renamed' }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, { method: 'DELETE', scope: 'service.customer-auth.manage', setup: userSetup, url: (u: U) => `${BASE}/users/${u.id}`, addressesOneRow: true });
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.customer-auth.manage',
  setup: userSetup,
  url: (u: U) => `${BASE}/users/${u.id}/password`,
  body: () => ({ password: PASSWORD }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.customer-auth.manage',
  setup: userSetup,
  url: (u: U) => `${BASE}/users/${u.id}/email-verifications`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.customer-auth.manage',
  // Each check gets its own user and unused token; another tenant's key is a 400 (tested above), not a 404.
  setup: async (key) => issueVerification(key, (await userSetup(key)).id),
  url: () => `${BASE}/email-verifications/complete`,
  body: (verification: { token: string }) => ({ token: verification.token }),
  addressesOneRow: false,
});
