import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS, MINUTE_MS } from '../../lib/clock.js';
import { JobRunner } from '../../platform/jobs/runner.js';
import { createLogger } from '../../runtime.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { PUBLISH_SCHEDULED_JOB, publishJobKey, registerBlogJobs } from './index.js';
import { createPublishScheduledHandler } from './scheduler.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/blogs';
type Status = 'draft' | 'scheduled' | 'published' | 'archived';
interface PostData {
  id: string;
  slug: string;
  status: Status;
  published_at: string | null;
  scheduled_for: string | null;
  updated_at: string;
  [field: string]: unknown;
}

async function newKey(): Promise<string> {
  return (await platform.newTenant()).key();
}

async function createPost(key: string, body: Record<string, unknown> = { title: 'Hello world' }): Promise<PostData> {
  const response = await call(platform.app, 'POST', `${BASE}/posts`, { key, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

function setStatus(key: string, id: string, body: Record<string, unknown>) {
  return call(platform.app, 'POST', `${BASE}/posts/${id}/status`, { key, body });
}

async function moveTo(key: string, id: string, status: Status, scheduledFor?: Date): Promise<PostData> {
  const body = status === 'scheduled' ? { status, scheduled_for: (scheduledFor ?? inFuture(HOUR_MS)).toISOString() } : { status };
  const response = await setStatus(key, id, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

function inFuture(ms: number): Date {
  return new Date(platform.clock.now().getTime() + ms);
}

async function getPost(key: string, id: string): Promise<PostData> {
  return (await call(platform.app, 'GET', `${BASE}/posts/${id}`, { key })).json().data;
}

async function publishJob(postId: string) {
  return platform.database.db
    .selectFrom('jobs')
    .select(['status', 'run_at', 'tenant_id', 'mode', 'payload'])
    .where('kind', '=', PUBLISH_SCHEDULED_JOB)
    .where('dedupe_key', '=', publishJobKey(postId))
    .executeTakeFirst();
}

/** A post of `key` brought to `status` the way a client would. */
async function postIn(key: string, status: Status): Promise<PostData> {
  const post = await createPost(key, { title: `A ${status} post` });
  return status === 'draft' ? post : moveTo(key, post.id, status);
}

describe('the status state machine', () => {
  const legal: Record<Status, Status[]> = {
    draft: ['scheduled', 'published', 'archived'],
    scheduled: ['draft', 'scheduled', 'published', 'archived'],
    published: ['draft', 'archived'],
    archived: ['draft', 'published'],
  };
  const statuses: Status[] = ['draft', 'scheduled', 'published', 'archived'];
  const cases = statuses.flatMap((from) => statuses.map((to) => ({ from, to })));

  it.each(cases)('$from -> $to', async ({ from, to }) => {
    const key = await newKey();
    const post = await postIn(key, from);
    platform.clock.advance(5);
    const body = to === 'scheduled' ? { status: to, scheduled_for: inFuture(2 * HOUR_MS).toISOString() } : { status: to };
    const response = await setStatus(key, post.id, body);
    if (legal[from].includes(to)) {
      expect(response.statusCode, response.body).toBe(200);
      const moved = response.json().data;
      expect(moved.status).toBe(to);
      expect(Date.parse(moved.updated_at)).toBeGreaterThan(Date.parse(post.updated_at));
      expect(moved.scheduled_for).toBe(to === 'scheduled' ? body.scheduled_for : null);
    } else if (from === to) {
      // Asking for the current status is a no-op answered with the post as it is.
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().data).toEqual(await getPost(key, post.id));
      expect(response.json().data.updated_at).toBe(post.updated_at);
    } else {
      const error = expectError(response, 409, 'invalid_status_transition');
      expect(error.details[0]).toEqual({
        path: 'status',
        code: 'invalid_transition',
        message: expect.stringContaining(from),
        from,
        to,
        allowed: expect.any(Array),
      });
      expect([...(error.details[0]!.allowed as string[])].sort()).toEqual([...legal[from]].sort());
      expect((await getPost(key, post.id)).status).toBe(from);
    }
  });

  it('sets published_at on the first publication only and keeps it through unpublish, archive and republish', async () => {
    const key = await newKey();
    const post = await createPost(key);
    platform.clock.freeze();
    const publishedAt = platform.clock.now().toISOString();
    const published = await moveTo(key, post.id, 'published').finally(() => platform.clock.resume());
    expect(published.published_at).toBe(publishedAt);
    platform.clock.advance(MINUTE_MS);
    expect((await moveTo(key, post.id, 'draft')).published_at).toBe(published.published_at);
    platform.clock.advance(MINUTE_MS);
    expect((await moveTo(key, post.id, 'published')).published_at).toBe(published.published_at);
    const archived = await moveTo(key, post.id, 'archived');
    expect(archived).toMatchObject({ status: 'archived', published_at: published.published_at, scheduled_for: null });
    platform.clock.advance(MINUTE_MS);
    expect(await moveTo(key, post.id, 'published')).toMatchObject({ status: 'published', published_at: published.published_at });
  });

  it('publishes a scheduled post at once on request, clearing scheduled_for and the queued job', async () => {
    const key = await newKey();
    const post = await createPost(key);
    await moveTo(key, post.id, 'scheduled', inFuture(HOUR_MS));
    expect(await publishJob(post.id)).toMatchObject({ status: 'queued' });
    platform.clock.freeze();
    const now = platform.clock.now().toISOString();
    const published = await moveTo(key, post.id, 'published').finally(() => platform.clock.resume());
    expect(published).toMatchObject({ status: 'published', scheduled_for: null, published_at: now });
    expect(await publishJob(post.id)).toBeUndefined();
  });

  it('requires a future scheduled_for with status scheduled, and refuses it with any other status', async () => {
    const key = await newKey();
    const post = await createPost(key);
    const now = platform.clock.now();
    const required = expectError(await setStatus(key, post.id, { status: 'scheduled' }), 400, 'validation_failed');
    expect(required.details[0]).toMatchObject({ path: 'scheduled_for', code: 'required' });
    for (const when of [new Date(now.getTime() - 1000).toISOString(), '2001-01-01T00:00:00.000Z', '0000-01-01T00:00:00.000Z']) {
      const past = expectError(await setStatus(key, post.id, { status: 'scheduled', scheduled_for: when }), 400, 'validation_failed');
      expect(past.details[0]).toMatchObject({ path: 'scheduled_for', code: 'out_of_range' });
    }
    const misplaced = expectError(await setStatus(key, post.id, { status: 'published', scheduled_for: inFuture(HOUR_MS).toISOString() }), 400, 'validation_failed');
    expect(misplaced.details[0]).toMatchObject({ path: 'scheduled_for', code: 'invalid' });
    for (const body of [
      {},
      { status: 'live' },
      { status: null },
      { status: 'scheduled', scheduled_for: 'tomorrow' },
      { status: 'scheduled', scheduled_for: 1893456000000 },
      { status: 'scheduled', scheduled_for: '2030-01-01' },
      { status: 'published', extra: true },
    ]) {
      expectError(await setStatus(key, post.id, body), 400, 'validation_failed');
    }
    expect((await getPost(key, post.id)).status).toBe('draft');
  });

  it('refuses a status change based on a stale read with 409 stale_update', async () => {
    const key = await newKey();
    const post = await createPost(key);
    await call(platform.app, 'PATCH', `${BASE}/posts/${post.id}`, { key, body: { title: 'Edited' } });
    expectError(await setStatus(key, post.id, { status: 'published', expected_updated_at: post.updated_at }), 409, 'stale_update');
    const fresh = await getPost(key, post.id);
    expect((await setStatus(key, post.id, { status: 'published', expected_updated_at: fresh.updated_at })).statusCode).toBe(200);
  });

  it('replays a status change sent again with the same Idempotency-Key', async () => {
    const key = await newKey();
    const post = await createPost(key);
    const headers = { 'idempotency-key': `publish-${post.id}` };
    const first = await call(platform.app, 'POST', `${BASE}/posts/${post.id}/status`, { key, body: { status: 'published' }, headers });
    await moveTo(key, post.id, 'archived');
    const again = await call(platform.app, 'POST', `${BASE}/posts/${post.id}/status`, { key, body: { status: 'published' }, headers });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect((await getPost(key, post.id)).status).toBe('archived');
  });
});

describe('scheduled publishing', () => {
  it('publishes a scheduled post when its time comes, not before, with published_at = scheduled_for', async () => {
    const key = await newKey();
    const post = await createPost(key);
    const when = new Date(inFuture(HOUR_MS).getTime() - (inFuture(HOUR_MS).getTime() % 1000)); // a whole second, as clients send
    const scheduled = await moveTo(key, post.id, 'scheduled', when);
    expect(scheduled).toMatchObject({ status: 'scheduled', scheduled_for: when.toISOString(), published_at: null });
    expect(await publishJob(post.id)).toMatchObject({ status: 'queued', run_at: when, mode: 'test', payload: { post_id: post.id } });

    await platform.runtime.jobs.runDue();
    expect((await getPost(key, post.id)).status).toBe('scheduled');
    expect((await call(platform.app, 'GET', `${BASE}/posts/published`, { key })).json().data).toEqual([]);

    platform.clock.advance(HOUR_MS);
    await platform.runtime.jobs.runDue();
    const published = await getPost(key, post.id);
    expect(published).toMatchObject({ status: 'published', published_at: when.toISOString(), scheduled_for: null });
    expect(Date.parse(published.updated_at)).toBeGreaterThan(Date.parse(scheduled.updated_at));
    expect((await call(platform.app, 'GET', `${BASE}/posts/published`, { key })).json().data.map((p: PostData) => p.id)).toEqual([post.id]);
    expect(await publishJob(post.id)).toBeUndefined(); // finished jobs give their dedupe key up
  });

  it('moves the job when a post is rescheduled, later or earlier', async () => {
    const key = await newKey();
    const later = await createPost(key, { title: 'Later' });
    const earlier = await createPost(key, { title: 'Earlier' });
    await moveTo(key, later.id, 'scheduled', inFuture(HOUR_MS));
    await moveTo(key, earlier.id, 'scheduled', inFuture(3 * HOUR_MS));
    const laterTime = inFuture(2 * HOUR_MS);
    await moveTo(key, later.id, 'scheduled', laterTime);
    await moveTo(key, earlier.id, 'scheduled', inFuture(30 * MINUTE_MS));
    expect((await publishJob(later.id))?.run_at).toEqual(laterTime);

    platform.clock.advance(HOUR_MS);
    await platform.runtime.jobs.runDue();
    expect((await getPost(key, earlier.id)).status).toBe('published');
    expect((await getPost(key, later.id)).status).toBe('scheduled');
    platform.clock.advance(HOUR_MS);
    await platform.runtime.jobs.runDue();
    expect(await getPost(key, later.id)).toMatchObject({ status: 'published', published_at: laterTime.toISOString() });
  });

  it('does not publish a post unscheduled, archived or deleted before its time', async () => {
    const key = await newKey();
    const unscheduled = await createPost(key, { title: 'Unscheduled' });
    const archived = await createPost(key, { title: 'Archived' });
    const deleted = await createPost(key, { title: 'Deleted' });
    for (const post of [unscheduled, archived, deleted]) await moveTo(key, post.id, 'scheduled', inFuture(HOUR_MS));
    expect((await moveTo(key, unscheduled.id, 'draft')).scheduled_for).toBeNull();
    await moveTo(key, archived.id, 'archived');
    expect((await call(platform.app, 'DELETE', `${BASE}/posts/${deleted.id}`, { key })).statusCode).toBe(200);
    for (const post of [unscheduled, archived, deleted]) expect(await publishJob(post.id)).toBeUndefined();

    platform.clock.advance(2 * HOUR_MS);
    await platform.runtime.jobs.runDue();
    expect((await getPost(key, unscheduled.id)).status).toBe('draft');
    expect((await getPost(key, archived.id)).status).toBe('archived');
    expect((await call(platform.app, 'GET', `${BASE}/posts/published`, { key })).json().meta.total).toBe(0);
  });

  it('leaves a post alone when the job finds it no longer due, and asks to run again at a later time', async () => {
    const key = await newKey();
    const post = await createPost(key);
    const when = inFuture(HOUR_MS);
    await moveTo(key, post.id, 'scheduled', when);
    const tenant = await platform.database.db.selectFrom('jobs').select(['tenant_id']).where('dedupe_key', '=', publishJobKey(post.id)).executeTakeFirstOrThrow();
    const handler = createPublishScheduledHandler(platform.serviceDeps());
    const job = {
      id: '0',
      kind: PUBLISH_SCHEDULED_JOB,
      tenantId: tenant.tenant_id,
      mode: 'test' as const,
      payload: { post_id: post.id },
      attempts: 1,
      maxAttempts: 5,
      runAt: platform.clock.now(),
    };
    // A job that fired early (its post was moved later while it ran) comes back at the post's time.
    expect(await handler(job, platform.clock.now())).toEqual({ rescheduleAt: when });
    expect((await getPost(key, post.id)).status).toBe('scheduled');
    // Wrong mode, unknown post, or a payload without a post: nothing happens.
    expect(await handler({ ...job, mode: 'live' }, when)).toBeUndefined();
    expect(await handler({ ...job, payload: { post_id: '00000000-0000-4000-8000-000000000000' } }, when)).toBeUndefined();
    expect(await handler({ ...job, payload: { post_id: 'nope' } }, when)).toBeUndefined();
    expect(await handler({ ...job, payload: {} }, when)).toBeUndefined();
    expect((await getPost(key, post.id)).status).toBe('scheduled');
    expect(await handler(job, when)).toBeUndefined();
    expect((await getPost(key, post.id)).status).toBe('published');
  });

  it('publishes after a restart: the schedule lives in the database, not in the process', async () => {
    const key = await newKey();
    const post = await createPost(key);
    await moveTo(key, post.id, 'scheduled', inFuture(HOUR_MS));
    // A process started later knows nothing but what the database holds.
    const restarted = new JobRunner({ db: platform.database.db, clock: platform.clock, log: createLogger('silent') });
    registerBlogJobs(restarted, platform.serviceDeps());
    platform.clock.advance(HOUR_MS);
    expect(await restarted.runDue()).toBeGreaterThanOrEqual(1);
    expect((await getPost(key, post.id)).status).toBe('published');
  });

  it('publishes each post exactly once when several processes run the jobs at the same time', async () => {
    const key = await newKey();
    const posts = await Promise.all(Array.from({ length: 5 }, (_, i) => createPost(key, { title: `Post ${i}` })));
    const when = inFuture(HOUR_MS);
    for (const post of posts) await moveTo(key, post.id, 'scheduled', when);
    const tenantId = (await publishJob(posts[0]!.id))!.tenant_id!;

    const publications: string[] = [];
    const runners = [0, 1, 2].map(() => {
      const runner = new JobRunner({ db: platform.database.db, clock: platform.clock, log: createLogger('silent') });
      registerBlogJobs(runner, platform.serviceDeps(), { onPublished: (post) => void publications.push(post.id) });
      return runner;
    });
    // A duplicate job per post (as if delivered twice): the post's state still allows one publication.
    for (const post of posts) {
      await runners[0]!.enqueue({ kind: PUBLISH_SCHEDULED_JOB, runAt: when, tenantId, mode: 'test', payload: { post_id: post.id } });
    }
    platform.clock.advance(HOUR_MS);
    await Promise.all(runners.map((runner) => runner.runDue()));

    expect(publications.sort()).toEqual(posts.map((post) => post.id).sort());
    for (const post of posts) expect(await getPost(key, post.id)).toMatchObject({ status: 'published', published_at: when.toISOString() });
    await Promise.all(runners.map((runner) => runner.runDue()));
    expect(publications).toHaveLength(posts.length);
    const events = await platform.runtime.events.list({ tenantId, mode: 'test' }, { type: 'blogs.post.published' }, { limit: 50, offset: 0 });
    expect(events.rows.map((event) => JSON.parse(event.object_json).id).sort()).toEqual(posts.map((post) => post.id).sort());
  });
});

describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.blogs.publish',
  setup: (key) => createPost(key),
  url: (post: PostData) => `${BASE}/posts/${post.id}/status`,
  body: () => ({ status: 'published' }),
  addressesOneRow: true,
});
