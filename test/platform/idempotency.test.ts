import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../src/lib/clock.js';
import { requestContext } from '../../src/platform/http/request-context.js';
import { crmModule } from '../../src/services/crm/index.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
/** Lets the test decide when the slow route's handler finishes; `entered` resolves once it runs. */
let slowRoute: { entered: Promise<void>; enter: () => void; release: () => void; released: Promise<void> };

beforeAll(async () => {
  platform = await startTestPlatform();
  addTestRoutes();
});
afterAll(() => platform.close());

const CONTACTS = '/api/v1/services/crm/contacts';
const TEST_ROUTES = '/api/v1/services/crm/idempotency-test';

/** Routes of this file only, to reach replies no real route gives on demand. */
function addTestRoutes(): void {
  const crm = crmModule.create(platform.serviceDeps());
  const config = { scope: 'service.crm.manage' };
  const anything = { 200: Type.Unknown(), 201: Type.Unknown() };
  let calls = 0;
  platform.app.post(`${TEST_ROUTES}/write-then-fail`, { config, schema: { response: anything } }, async (request) => {
    await crm.createContact(requestContext(request), { name: 'Written before a failure' });
    throw new Error('failed after writing');
  });
  platform.app.post(`${TEST_ROUTES}/no-database`, { config, schema: { response: anything } }, async (_request, reply) => {
    calls += 1;
    return reply.code(201).send({ data: { call: calls } });
  });
  const streamedText = { 200: { description: 'A streamed text reply.', content: { 'text/plain': { schema: Type.String() } } } };
  platform.app.post(`${TEST_ROUTES}/stream`, { config, schema: { response: streamedText } }, async (_request, reply) => {
    calls += 1;
    return reply.type('text/plain; charset=utf-8').send(Readable.from(['streamed ', 'reply ', `#${calls}`]));
  });
  platform.app.post(`${TEST_ROUTES}/slow`, { config, schema: { response: anything } }, async (request, reply) => {
    slowRoute.enter();
    await slowRoute.released;
    const contact = await crm.createContact(requestContext(request), { name: 'Slow' });
    return reply.code(201).send({ data: contact });
  });
}

function resetSlowRoute(): void {
  let enter = () => {};
  let release = () => {};
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  slowRoute = { entered, enter, release, released };
}

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
    const responses = await Promise.all(Array.from({ length: 20 }, () => call(platform.app, 'POST', CONTACTS, { key, headers, body: { name: 'Once' } })));
    // Each is refused as in use while the first runs, or replays it once it has committed.
    for (const response of responses) {
      if (response.statusCode === 409) expectError(response, 409, 'idempotency_key_in_use');
      else expect(response.statusCode).toBe(201);
    }
    expect(responses.filter((response) => response.statusCode === 201 && response.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    const created = responses.filter((response) => response.statusCode === 201);
    expect(new Set(created.map((response) => response.json().data.id)).size).toBe(1);
    expect(await contactCount(key)).toBe(1);
  });

  it('keeps nothing of a request that fails with 5xx, writes included, so a retry acts afresh', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'fails-after-writing' };
    expectError(await call(platform.app, 'POST', `${TEST_ROUTES}/write-then-fail`, { key, headers }), 500, 'internal_error');
    expect(await contactCount(key)).toBe(0);
    const retried = await call(platform.app, 'POST', `${TEST_ROUTES}/write-then-fail`, { key, headers });
    expectError(retried, 500, 'internal_error');
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await contactCount(key)).toBe(0);

    // Without a key each statement commits on its own, as before.
    expectError(await call(platform.app, 'POST', `${TEST_ROUTES}/write-then-fail`, { key }), 500, 'internal_error');
    expect(await contactCount(key)).toBe(1);
  });

  it('replays the reply of a handler that never touches the database', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'no-database' };
    const first = await call(platform.app, 'POST', `${TEST_ROUTES}/no-database`, { key, headers });
    const second = await call(platform.app, 'POST', `${TEST_ROUTES}/no-database`, { key, headers });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
  });

  it('stores a streamed reply as sent and replays it with its content type', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'streamed' };
    const first = await call(platform.app, 'POST', `${TEST_ROUTES}/stream`, { key, headers });
    const second = await call(platform.app, 'POST', `${TEST_ROUTES}/stream`, { key, headers });
    expect(first.statusCode).toBe(200);
    expect(first.body).toMatch(/^streamed reply #\d+$/);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
    expect(second.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('replays a refusal its service decided after a statement of its own failed (a taken coupon code)', async () => {
    const key = await (await platform.newTenant()).key();
    const coupons = '/api/v1/services/catalog/catalog/coupons';
    expect((await call(platform.app, 'POST', coupons, { key, body: { code: 'TAKEN', percent_off: 10 } })).statusCode).toBe(201);
    const headers = { 'idempotency-key': 'taken-code' };
    const body = { code: 'taken', percent_off: 20 };
    // The insert fails on the unique index and the service reads the existing code to answer:
    // the failed statement must not spoil the request's transaction.
    const first = await call(platform.app, 'POST', coupons, { key, headers, body });
    expectError(first, 409, 'coupon_code_taken');
    const second = await call(platform.app, 'POST', coupons, { key, headers, body });
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
  });

  it('answers a duplicate arriving while the first still runs: in use on PostgreSQL; on the embedded database it waits and replays', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'slow' };
    resetSlowRoute();
    const first = call(platform.app, 'POST', `${TEST_ROUTES}/slow`, { key, headers });
    await slowRoute.entered;
    const duplicate = call(platform.app, 'POST', `${TEST_ROUTES}/slow`, { key, headers });
    if (platform.database.backend === 'postgres') {
      const refused = expectError(await duplicate, 409, 'idempotency_key_in_use');
      expect(refused).toBeDefined();
      expect((await duplicate).headers['retry-after']).toBe('1');
      slowRoute.release();
      expect((await first).statusCode).toBe(201);
    } else {
      // The first holds the embedded database's one session until it has committed.
      slowRoute.release();
      const [original, replayed] = [await first, await duplicate];
      expect(original.statusCode).toBe(201);
      expect(replayed.headers['idempotent-replayed']).toBe('true');
      expect(replayed.body).toBe(original.body);
    }
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

  it('replays a DELETE sent again with the same key, where a second DELETE without one is 404', async () => {
    const key = await (await platform.newTenant()).key();
    const subscribers = '/api/v1/services/blogs/subscribers';
    const created = (await call(platform.app, 'POST', subscribers, { key, body: { email: 'gone@example.com' } })).json().data;
    const headers = { 'idempotency-key': 'delete-subscriber-1' };

    const first = await call(platform.app, 'DELETE', `${subscribers}/${created.id}`, { key, headers });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ data: { id: created.id, deleted: true } });

    const retried = await call(platform.app, 'DELETE', `${subscribers}/${created.id}`, { key, headers });
    expect(retried.statusCode).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.json()).toEqual(first.json());

    expectError(await call(platform.app, 'DELETE', `${subscribers}/${created.id}`, { key }), 404, 'not_found');
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
