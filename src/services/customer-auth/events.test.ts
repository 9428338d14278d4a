import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../lib/clock.js';
import { presentEvent } from '../../platform/events/event-log.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { BASE, helpers, PASSWORD } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { createUser } = helpers(() => platform);
const CREATED = 'customer_auth.user.created';
const EMAIL_VERIFIED = 'customer_auth.user.email_verified';

async function eventsOf(tenantId: string, type: string) {
  const { rows } = await platform.runtime.events.list({ tenantId, mode: 'test' }, { type }, { limit: 50, offset: 0 });
  return rows.map(presentEvent);
}

function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

async function getUser(key: string, id: string): Promise<unknown> {
  return (await call(platform.app, 'GET', `${BASE}/users/${id}`, { key })).json().data;
}

async function issueVerification(key: string, userId: string): Promise<string> {
  const response = await call(platform.app, 'POST', `${BASE}/users/${userId}/email-verifications`, { key });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.token;
}

function completeVerification(key: string, token: string) {
  return call(platform.app, 'POST', `${BASE}/email-verifications/complete`, { key, body: { token } });
}

describe('customer_auth.user.created', () => {
  it('records the user as GET returns it', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const user = await createUser(key, { email: 'Ada@Example.com', password: PASSWORD, name: 'Ada', metadata: { plan: 'pro', tags: ['a', { b: null }] } });

    const events = await eventsOf(tenant.id, CREATED);
    expect(events).toHaveLength(1);
    expect(events[0]!.livemode).toBe(false);
    expect(asJson(events[0]!.data.object)).toEqual(await getUser(key, user.id));
  });

  it('records nothing for a refused create: a taken email or a weak password', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    await createUser(key, { email: 'ada@example.com' });
    expectError(await call(platform.app, 'POST', `${BASE}/users`, { key, body: { email: 'ADA@example.com' } }), 409, 'email_taken');
    expectError(await call(platform.app, 'POST', `${BASE}/users`, { key, body: { email: 'grace@example.com', password: 'password' } }), 400, 'validation_failed');
    expect(await eventsOf(tenant.id, CREATED)).toHaveLength(1);
  });
});

describe('customer_auth.user.email_verified', () => {
  it('records the user as GET returns it once the verification completes', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const user = await createUser(key, { email: 'ada@example.com' });
    const token = await issueVerification(key, user.id);
    expect(await eventsOf(tenant.id, EMAIL_VERIFIED)).toEqual([]);
    expect((await completeVerification(key, token)).statusCode).toBe(200);
    const verified = await getUser(key, user.id);

    const events = await eventsOf(tenant.id, EMAIL_VERIFIED);
    expect(events).toHaveLength(1);
    expect(events[0]!.livemode).toBe(false);
    expect(asJson(events[0]!.data.object)).toEqual(verified);
  });

  it('records nothing for a used, replaced or expired token, nor for verifying an address already verified', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const user = await createUser(key, { email: 'ada@example.com' });
    const replaced = await issueVerification(key, user.id);
    const expired = await issueVerification(key, user.id);
    expectError(await completeVerification(key, replaced), 400, 'verification_token_invalid');
    platform.clock.advance(24 * HOUR_MS + 1000);
    expectError(await completeVerification(key, expired), 410, 'verification_token_expired');
    expect(await eventsOf(tenant.id, EMAIL_VERIFIED)).toEqual([]);

    const token = await issueVerification(key, user.id);
    expect((await completeVerification(key, token)).statusCode).toBe(200);
    expectError(await completeVerification(key, token), 410, 'verification_token_used');
    const again = await completeVerification(key, await issueVerification(key, user.id));
    expect(again.statusCode, again.body).toBe(200);
    expect(await eventsOf(tenant.id, EMAIL_VERIFIED)).toHaveLength(1);
  });

  it('records a new verification after the email changes', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const user = await createUser(key, { email: 'ada@example.com' });
    await completeVerification(key, await issueVerification(key, user.id));
    expect((await call(platform.app, 'PATCH', `${BASE}/users/${user.id}`, { key, body: { email: 'countess@example.com' } })).statusCode).toBe(200);
    platform.clock.advance(1000);
    expect((await completeVerification(key, await issueVerification(key, user.id))).statusCode).toBe(200);

    const events = await eventsOf(tenant.id, EMAIL_VERIFIED);
    expect(events).toHaveLength(2);
    expect(asJson(events[0]!.data.object)).toEqual(await getUser(key, user.id));
    expect(events[0]!.data.object).toMatchObject({ email: 'countess@example.com' });
  });
});
