import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../lib/clock.js';
import { presentEvent } from '../../platform/events/event-log.js';
import { call, expectError, startTestPlatform, type TestPlatform, type TestTenant } from '../../../test/harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/blogs';
const PUBLISHED = 'blogs.post.published';

async function eventsOf(tenantId: string, type: string) {
  const { rows } = await platform.runtime.events.list({ tenantId, mode: 'test' }, { type }, { limit: 50, offset: 0 });
  return rows.map(presentEvent);
}

function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

async function newTenant(): Promise<{ tenant: TestTenant; key: string }> {
  const tenant = await platform.newTenant();
  return { tenant, key: await tenant.key() };
}

async function createPost(key: string, body: Record<string, unknown> = { title: 'Hello world', content: '# Hi' }): Promise<{ id: string; updated_at: string }> {
  const response = await call(platform.app, 'POST', `${BASE}/posts`, { key, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

async function moveTo(key: string, id: string, body: Record<string, unknown>): Promise<void> {
  const response = await call(platform.app, 'POST', `${BASE}/posts/${id}/status`, { key, body });
  expect(response.statusCode, response.body).toBe(200);
}

async function getPost(key: string, id: string): Promise<unknown> {
  return (await call(platform.app, 'GET', `${BASE}/posts/${id}`, { key })).json().data;
}

describe('blogs.post.published', () => {
  it('records the post as GET returns it when it is published directly', async () => {
    const { tenant, key } = await newTenant();
    const post = await createPost(key);
    expect(await eventsOf(tenant.id, PUBLISHED)).toEqual([]);
    await moveTo(key, post.id, { status: 'published' });
    const published = await getPost(key, post.id);

    const events = await eventsOf(tenant.id, PUBLISHED);
    expect(events).toHaveLength(1);
    expect(events[0]!.livemode).toBe(false);
    expect(asJson(events[0]!.data.object)).toEqual(published);
  });

  it('records each real publication: published, archived, then published again', async () => {
    const { tenant, key } = await newTenant();
    const post = await createPost(key);
    await moveTo(key, post.id, { status: 'published' });
    await moveTo(key, post.id, { status: 'archived' });
    platform.clock.advance(1000);
    await moveTo(key, post.id, { status: 'published' });
    const republished = await getPost(key, post.id);

    const events = await eventsOf(tenant.id, PUBLISHED);
    expect(events).toHaveLength(2);
    // Newest first.
    expect(asJson(events[0]!.data.object)).toEqual(republished);
  });

  it('records nothing for a refused move, a post already published, an edit of a published post or a create asking for published', async () => {
    const { tenant, key } = await newTenant();
    const ignoredStatus = await createPost(key, { title: 'Asks to be published', status: 'published' });
    expect(await getPost(key, ignoredStatus.id)).toMatchObject({ status: 'draft' });

    const archived = await createPost(key, { title: 'Archived' });
    await moveTo(key, archived.id, { status: 'archived' });
    expectError(
      await call(platform.app, 'POST', `${BASE}/posts/${archived.id}/status`, {
        key,
        body: { status: 'scheduled', scheduled_for: new Date(platform.clock.now().getTime() + HOUR_MS).toISOString() },
      }),
      409,
      'invalid_status_transition',
    );
    const draft = await createPost(key, { title: 'Draft' });
    platform.clock.advance(1);
    await call(platform.app, 'PATCH', `${BASE}/posts/${draft.id}`, { key, body: { title: 'Edited' } });
    expectError(
      await call(platform.app, 'POST', `${BASE}/posts/${draft.id}/status`, { key, body: { status: 'published', expected_updated_at: draft.updated_at } }),
      409,
      'stale_update',
    );
    expect(await eventsOf(tenant.id, PUBLISHED)).toEqual([]);

    const published = await createPost(key, { title: 'Published' });
    await moveTo(key, published.id, { status: 'published' });
    await moveTo(key, published.id, { status: 'published' });
    expect((await call(platform.app, 'PATCH', `${BASE}/posts/${published.id}`, { key, body: { title: 'Edited after publishing' } })).statusCode).toBe(200);
    expect(await eventsOf(tenant.id, PUBLISHED)).toHaveLength(1);
  });

  it('records one event when a publish is replayed with the same Idempotency-Key', async () => {
    const { tenant, key } = await newTenant();
    const post = await createPost(key);
    const request = { key, headers: { 'idempotency-key': `publish-${post.id}` }, body: { status: 'published' } };
    const first = await call(platform.app, 'POST', `${BASE}/posts/${post.id}/status`, request);
    const again = await call(platform.app, 'POST', `${BASE}/posts/${post.id}/status`, request);
    expect(again.headers['idempotent-replayed']).toBe('true');

    const events = await eventsOf(tenant.id, PUBLISHED);
    expect(events).toHaveLength(1);
    expect(asJson(events[0]!.data.object)).toEqual(first.json().data);
  });

  it('records the publication by the scheduled-publish job, once, in the job that publishes', async () => {
    const { tenant, key } = await newTenant();
    const post = await createPost(key);
    await moveTo(key, post.id, { status: 'scheduled', scheduled_for: new Date(platform.clock.now().getTime() + HOUR_MS).toISOString() });
    await platform.runtime.jobs.runDue();
    expect(await eventsOf(tenant.id, PUBLISHED)).toEqual([]);

    platform.clock.advance(HOUR_MS);
    await platform.runtime.jobs.runDue();
    const published = await getPost(key, post.id);
    expect(published).toMatchObject({ status: 'published' });
    await platform.runtime.jobs.runDue();

    const events = await eventsOf(tenant.id, PUBLISHED);
    expect(events).toHaveLength(1);
    expect(events[0]!.livemode).toBe(false);
    expect(asJson(events[0]!.data.object)).toEqual(published);
  });

  it('records nothing when the job finds its post unscheduled before its time', async () => {
    const { tenant, key } = await newTenant();
    const post = await createPost(key);
    await moveTo(key, post.id, { status: 'scheduled', scheduled_for: new Date(platform.clock.now().getTime() + HOUR_MS).toISOString() });
    await moveTo(key, post.id, { status: 'draft' });
    platform.clock.advance(2 * HOUR_MS);
    await platform.runtime.jobs.runDue();
    expect(await eventsOf(tenant.id, PUBLISHED)).toEqual([]);
  });
});
