import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE_MS } from '../../lib/clock.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/blogs';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function newKey(): Promise<string> {
  return (await platform.newTenant()).key();
}

async function createSubscriber(key: string, body: Record<string, unknown> = { email: 'ada@example.com' }) {
  const response = await call(platform.app, 'POST', `${BASE}/subscribers`, { key, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

function patch(key: string, id: string, body: unknown) {
  return call(platform.app, 'PATCH', `${BASE}/subscribers/${id}`, { key, body });
}

async function listEmails(key: string, query: string): Promise<string[]> {
  const response = await call(platform.app, 'GET', `${BASE}/subscribers?${query}`, { key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.map((subscriber: { email: string }) => subscriber.email);
}

describe('subscribers', () => {
  it('adds a subscriber with a lower-cased email, source api by default', async () => {
    const key = await newKey();
    const subscriber = await createSubscriber(key, { email: 'Ada@Example.COM', name: '  Ada Lovelace ' });
    expect(subscriber).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      status: 'active',
      source: 'api',
      subscribed_at: expect.stringMatching(ISO),
      unsubscribed_at: null,
      created_at: subscriber.subscribed_at,
      updated_at: subscriber.subscribed_at,
    });
    expect((await call(platform.app, 'GET', `${BASE}/subscribers/${subscriber.id}`, { key })).json().data).toEqual(subscriber);
  });

  it('imports a subscriber with its source, status and original subscription date', async () => {
    const key = await newKey();
    const imported = await createSubscriber(key, { email: 'old@example.com', source: 'import', subscribed_at: '2021-03-04T05:06:07.089Z', status: 'unsubscribed' });
    expect(imported).toMatchObject({ source: 'import', subscribed_at: '2021-03-04T05:06:07.089Z', status: 'unsubscribed', unsubscribed_at: expect.stringMatching(ISO) });
    expect(await createSubscriber(key, { email: 'bounce@example.com', status: 'bounced', source: 'form' })).toMatchObject({ status: 'bounced', unsubscribed_at: null });
  });

  it('refuses an email already on the list with 409 subscriber_already_exists, whatever its case', async () => {
    const key = await newKey();
    const existing = await createSubscriber(key, { email: 'ada@example.com' });
    const error = expectError(await call(platform.app, 'POST', `${BASE}/subscribers`, { key, body: { email: 'ADA@example.com' } }), 409, 'subscriber_already_exists');
    expect(error.details[0]).toMatchObject({ path: 'email', code: 'already_exists', subscriber_id: existing.id });

    // Per tenant and mode only.
    await createSubscriber(await newKey(), { email: 'ada@example.com' });
    const tenant = await platform.newTenant();
    await createSubscriber(await tenant.key(), { email: 'ada@example.com' });
    await createSubscriber(await tenant.key({ mode: 'live' }), { email: 'ada@example.com' });
  });

  it('lets exactly one of several concurrent adds of one email succeed', async () => {
    const key = await newKey();
    const replies = await Promise.all(
      Array.from({ length: 5 }, (_, i) => call(platform.app, 'POST', `${BASE}/subscribers`, { key, body: { email: i % 2 ? 'RACE@example.com' : 'race@example.com' } })),
    );
    const statuses = replies.map((reply) => reply.statusCode).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409]);
    for (const reply of replies.filter((r) => r.statusCode === 409)) expectError(reply, 409, 'subscriber_already_exists');
    expect(await listEmails(key, '')).toEqual(['race@example.com']);
  });

  it('moves between statuses: unsubscribed sets unsubscribed_at, active clears it and restarts subscribed_at', async () => {
    const key = await newKey();
    const subscriber = await createSubscriber(key);
    platform.clock.advance(MINUTE_MS);
    const unsubscribed = (await patch(key, subscriber.id, { status: 'unsubscribed' })).json().data;
    expect(unsubscribed).toMatchObject({ status: 'unsubscribed', subscribed_at: subscriber.subscribed_at, unsubscribed_at: expect.stringMatching(ISO) });
    expect(Date.parse(unsubscribed.unsubscribed_at)).toBeGreaterThan(Date.parse(subscriber.subscribed_at));

    platform.clock.advance(MINUTE_MS);
    const again = (await patch(key, subscriber.id, { status: 'unsubscribed' })).json().data;
    expect(again.unsubscribed_at).toBe(unsubscribed.unsubscribed_at); // already unsubscribed: the date stays

    const back = (await patch(key, subscriber.id, { status: 'active' })).json().data;
    expect(back).toMatchObject({ status: 'active', unsubscribed_at: null });
    expect(Date.parse(back.subscribed_at)).toBeGreaterThan(Date.parse(unsubscribed.unsubscribed_at));

    const bounced = (await patch(key, subscriber.id, { status: 'bounced' })).json().data;
    expect(bounced).toMatchObject({ status: 'bounced', unsubscribed_at: null, subscribed_at: back.subscribed_at });
    const fixed = (await patch(key, subscriber.id, { status: 'active' })).json().data;
    expect(fixed).toMatchObject({ status: 'active', subscribed_at: back.subscribed_at });
  });

  it('updates the name and email, refusing an email another subscriber has', async () => {
    const key = await newKey();
    const ada = await createSubscriber(key, { email: 'ada@example.com', name: 'Ada' });
    await createSubscriber(key, { email: 'grace@example.com' });
    const renamed = (await patch(key, ada.id, { name: null, email: 'Countess@Example.com' })).json().data;
    expect(renamed).toMatchObject({ name: null, email: 'countess@example.com', status: 'active' });
    const taken = expectError(await patch(key, ada.id, { email: 'GRACE@example.com' }), 409, 'subscriber_already_exists');
    expect(taken.details[0]).toMatchObject({ path: 'email' });
    expect((await patch(key, ada.id, { email: 'countess@example.com' })).statusCode).toBe(200);
    expectError(await patch(key, ada.id, { name: 'Late', expected_updated_at: ada.updated_at }), 409, 'stale_update');
  });

  it('lists subscribers newest first, filtered by status and by search on email or name', async () => {
    const key = await newKey();
    await createSubscriber(key, { email: 'ada@example.com', name: 'Ada Lovelace' });
    platform.clock.advance(5);
    const grace = await createSubscriber(key, { email: 'grace@navy.example', name: 'Grace Hopper' });
    platform.clock.advance(5);
    await createSubscriber(key, { email: 'alan_t@example.com' });
    await patch(key, grace.id, { status: 'unsubscribed' });

    expect(await listEmails(key, '')).toEqual(['alan_t@example.com', 'grace@navy.example', 'ada@example.com']);
    expect(await listEmails(key, 'status=active')).toEqual(['alan_t@example.com', 'ada@example.com']);
    expect(await listEmails(key, 'status=unsubscribed')).toEqual(['grace@navy.example']);
    expect(await listEmails(key, 'status=bounced')).toEqual([]);
    expect(await listEmails(key, 'search=HOPPER')).toEqual(['grace@navy.example']);
    expect(await listEmails(key, 'search=example.com')).toEqual(['alan_t@example.com', 'ada@example.com']);
    expect(await listEmails(key, 'search=_t')).toEqual(['alan_t@example.com']);
    expect(await listEmails(key, 'search=lovelace&status=unsubscribed')).toEqual([]);
    const page = (await call(platform.app, 'GET', `${BASE}/subscribers?limit=1&offset=2`, { key })).json();
    expect(page.meta).toEqual({ limit: 1, offset: 2, total: 3, has_more: false });
    for (const query of ['status=gone', 'limit=500', 'search=', 'email=ada@example.com']) {
      expectError(await call(platform.app, 'GET', `${BASE}/subscribers?${query}`, { key }), 400, 'validation_failed');
    }
  });

  it('deletes a subscriber, after which the email can subscribe again', async () => {
    const key = await newKey();
    const subscriber = await createSubscriber(key);
    const deleted = await call(platform.app, 'DELETE', `${BASE}/subscribers/${subscriber.id}`, { key });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ data: { id: subscriber.id, deleted: true } });
    expectError(await call(platform.app, 'GET', `${BASE}/subscribers/${subscriber.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'DELETE', `${BASE}/subscribers/${subscriber.id}`, { key }), 404, 'not_found');
    expect((await createSubscriber(key)).id).not.toBe(subscriber.id);
  });

  it('answers unknown and malformed ids with 404', async () => {
    const key = await newKey();
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope', '1;drop table blog_subscribers']) {
      const url = `${BASE}/subscribers/${encodeURIComponent(id)}`;
      expectError(await call(platform.app, 'GET', url, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'PATCH', url, { key, body: { status: 'bounced' } }), 404, 'not_found');
      expectError(await call(platform.app, 'DELETE', url, { key }), 404, 'not_found');
    }
  });

  it('refuses hostile and invalid bodies with validation_failed, never 5xx', async () => {
    const key = await newKey();
    const subscriber = await createSubscriber(key);
    const future = new Date(platform.clock.now().getTime() + MINUTE_MS).toISOString();
    for (const body of [
      {},
      { email: null },
      { email: 'not an email' },
      { email: 'a@b' + 'c'.repeat(320) + '.com' },
      { email: ['ada@example.com'] },
      { email: 'x@example.com', name: '' },
      { email: 'x@example.com', name: 'x'.repeat(201) },
      { email: 'x@example.com', status: 'deleted' },
      { email: 'x@example.com', source: '' },
      { email: 'x@example.com', source: 'x'.repeat(51) },
      { email: 'x@example.com', subscribed_at: future },
      { email: 'x@example.com', subscribed_at: '0000-01-01T00:00:00.000Z' },
      { email: 'x@example.com', subscribed_at: 'last week' },
      { email: 'x@example.com', unsubscribed_at: null },
      { email: 'x@example.com', id: subscriber.id },
    ]) {
      expectError(await call(platform.app, 'POST', `${BASE}/subscribers`, { key, body }), 400, 'validation_failed');
    }
    for (const body of [{ status: null }, { status: 'gone' }, { email: null }, { source: 'form' }, { subscribed_at: future }, { expected_updated_at: 5 }]) {
      expectError(await patch(key, subscriber.id, body), 400, 'validation_failed');
    }
    expect((await call(platform.app, 'GET', `${BASE}/subscribers/${subscriber.id}`, { key })).json().data).toEqual(subscriber);
  });
});

describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.blogs.view', url: () => `${BASE}/subscribers`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.blogs.manage',
  url: () => `${BASE}/subscribers`,
  body: () => ({ email: 'secured@example.com' }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.blogs.view',
  setup: (key) => createSubscriber(key),
  url: (subscriber: { id: string }) => `${BASE}/subscribers/${subscriber.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.blogs.manage',
  setup: (key) => createSubscriber(key),
  url: (subscriber: { id: string }) => `${BASE}/subscribers/${subscriber.id}`,
  body: () => ({ status: 'unsubscribed' }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'DELETE',
  scope: 'service.blogs.manage',
  setup: (key) => createSubscriber(key),
  url: (subscriber: { id: string }) => `${BASE}/subscribers/${subscriber.id}`,
  addressesOneRow: true,
});
