import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../src/lib/clock.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const CONTACTS = '/api/v1/services/crm/contacts';

async function contactCount(key: string): Promise<number> {
  return (await call(platform.app, 'GET', CONTACTS, { key })).json().meta.total;
}

describe('Idempotency-Key', () => {
  it('replays the original status and body with Idempotent-Replayed, acting once', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'create-ada-1' };
    const first = await call(platform.app, 'POST', CONTACTS, { key, headers, body: { name: 'Ada' } });
    const second = await call(platform.app, 'POST', CONTACTS, { key, headers, body: { name: 'Ada' } });

    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
    expect(second.headers['content-type']).toContain('application/json');
    expect(await contactCount(key)).toBe(1);
  });

  it('treats the same body with keys in another order as the same request', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'reordered' };
    await call(platform.app, 'POST', CONTACTS, { key, headers, body: '{"name":"Ada","email":"ada@example.com"}' });
    const again = await call(platform.app, 'POST', CONTACTS, { key, headers, body: '{"email":"ada@example.com","name":"Ada"}' });
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('answers the same key with another body, path or method with 409 idempotency_key_conflict', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'one-request-only' };
    const created = await call(platform.app, 'POST', CONTACTS, { key, headers, body: { name: 'Ada' } });
    const id = created.json().data.id;

    expectError(await call(platform.app, 'POST', CONTACTS, { key, headers, body: { name: 'Grace' } }), 409, 'idempotency_key_conflict');
    expectError(await call(platform.app, 'POST', '/api/v1/services/crm/companies', { key, headers, body: { name: 'Ada' } }), 409, 'idempotency_key_conflict');
    expectError(await call(platform.app, 'PATCH', `${CONTACTS}/${id}`, { key, headers, body: { name: 'Ada' } }), 409, 'idempotency_key_conflict');
    expect(await contactCount(key)).toBe(1);
  });

  it('stores nothing for a request refused by validation, so the key stays usable', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'fix-and-retry' };
    expectError(await call(platform.app, 'POST', CONTACTS, { key, headers, body: { name: '' } }), 400, 'validation_failed');
    const fixed = await call(platform.app, 'POST', CONTACTS, { key, headers, body: { name: 'Ada' } });
    expect(fixed.statusCode).toBe(201);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
  });

  it('replays a business-rule refusal as it was answered', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'stale-write' };
    const { id } = (await call(platform.app, 'POST', CONTACTS, { key, body: { name: 'Ada' } })).json().data;
    const body = { name: 'Ada L.', expected_updated_at: '2000-01-01T00:00:00.000Z' };
    const first = await call(platform.app, 'PATCH', `${CONTACTS}/${id}`, { key, headers, body });
    expectError(first, 409, 'stale_update');
    const second = await call(platform.app, 'PATCH', `${CONTACTS}/${id}`, { key, headers, body });
    expect(second.statusCode).toBe(409);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
  });

  it('acts once when 20 requests with one key arrive at the same time', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'stampede' };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => call(platform.app, 'POST', CONTACTS, { key, headers, body: { name: 'Once' } })),
    );
    for (const response of responses) {
      if (response.statusCode === 409) expectError(response, 409, 'idempotency_key_in_use');
      else expect(response.statusCode).toBe(201);
    }
    const created = responses.filter((response) => response.statusCode === 201);
    expect(new Set(created.map((response) => response.json().data.id)).size).toBe(1);
    expect(await contactCount(key)).toBe(1);
  });

  it('keeps keys per tenant and mode: the same key elsewhere is a new request', async () => {
    const tenant = await platform.newTenant();
    const testKey = await tenant.key({ mode: 'test' });
    const liveKey = await tenant.key({ mode: 'live' });
    const otherTenantKey = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'shared-name' };
    for (const key of [testKey, liveKey, otherTenantKey]) {
      const response = await call(platform.app, 'POST', CONTACTS, { key, headers, body: { name: 'Ada' } });
      expect(response.statusCode).toBe(201);
      expect(response.headers['idempotent-replayed']).toBeUndefined();
    }
  });

  it('shares keys between API keys of the same tenant and mode', async () => {
    const tenant = await platform.newTenant();
    const one = await tenant.key();
    const two = await tenant.key();
    const headers = { 'idempotency-key': 'two-keys' };
    await call(platform.app, 'POST', CONTACTS, { key: one, headers, body: { name: 'Ada' } });
    const replay = await call(platform.app, 'POST', CONTACTS, { key: two, headers, body: { name: 'Ada' } });
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('forgets a key after 24 hours, and the sweep job deletes it', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'day-old' };
    platform.clock.freeze();
    try {
      await call(platform.app, 'POST', CONTACTS, { key, headers, body: { name: 'Ada' } });
      platform.clock.advance(23 * HOUR_MS);
      expect((await call(platform.app, 'POST', CONTACTS, { key, headers, body: { name: 'Ada' } })).headers['idempotent-replayed']).toBe('true');
      platform.clock.advance(1 * HOUR_MS + 1);
      const fresh = await call(platform.app, 'POST', CONTACTS, { key, headers, body: { name: 'Ada' } });
      expect(fresh.statusCode).toBe(201);
      expect(fresh.headers['idempotent-replayed']).toBeUndefined();
      expect(await contactCount(key)).toBe(2);

      await call(platform.app, 'POST', CONTACTS, { key, headers: { 'idempotency-key': 'to-sweep' }, body: { name: 'Sweep me' } });
      platform.clock.advance(25 * HOUR_MS);
      await platform.runtime.jobs.runDue();
      const left = await platform.database.db
        .selectFrom('idempotency_keys')
        .select('idempotency_key')
        .where('idempotency_key', 'in', ['day-old', 'to-sweep'])
        .where('expires_at', '<=', platform.clock.now())
        .execute();
      expect(left).toEqual([]);
    } finally {
      platform.clock.resume();
    }
  });

  it.each([
    ['longer than 255 characters', 'k'.repeat(256)],
    ['with spaces', 'has space'],
  ])('refuses a key %s with 400 validation_failed', async (_label, idempotencyKey) => {
    const key = await (await platform.newTenant()).key();
    const response = await call(platform.app, 'POST', CONTACTS, { key, headers: { 'idempotency-key': idempotencyKey }, body: { name: 'Ada' } });
    const error = expectError(response, 400, 'validation_failed');
    expect(error.details[0]!.path).toBe('Idempotency-Key');
    expect(await contactCount(key)).toBe(0);
  });

  it('accepts a key of exactly 255 characters', async () => {
    const key = await (await platform.newTenant()).key();
    const response = await call(platform.app, 'POST', CONTACTS, { key, headers: { 'idempotency-key': 'k'.repeat(255) }, body: { name: 'Ada' } });
    expect(response.statusCode).toBe(201);
  });
});
