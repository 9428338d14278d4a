import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../lib/clock.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/blogs';
type Status = 'draft' | 'scheduled' | 'published' | 'archived';
interface PostData {
  id: string;
  title: string;
  slug: string;
  status: Status;
  view_count: number;
  updated_at: string;
  [field: string]: unknown;
}

async function newKey(): Promise<string> {
  return (await platform.newTenant()).key();
}

async function createPost(key: string, body: Record<string, unknown>): Promise<PostData> {
  const response = await call(platform.app, 'POST', `${BASE}/posts`, { key, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

async function moveTo(key: string, id: string, status: Status): Promise<PostData> {
  const body = status === 'scheduled' ? { status, scheduled_for: new Date(platform.clock.now().getTime() + HOUR_MS).toISOString() } : { status };
  const response = await call(platform.app, 'POST', `${BASE}/posts/${id}/status`, { key, body });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

async function postIn(key: string, status: Status, body: Record<string, unknown>): Promise<PostData> {
  const post = await createPost(key, body);
  return status === 'draft' ? post : moveTo(key, post.id, status);
}

async function publishedTitles(key: string, query = ''): Promise<string[]> {
  const response = await call(platform.app, 'GET', `${BASE}/posts/published?${query}`, { key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.map((post: PostData) => post.title);
}

function read(key: string, slug: string) {
  return call(platform.app, 'GET', `${BASE}/posts/published/${slug}`, { key });
}

async function analytics(key: string, query = '') {
  const response = await call(platform.app, 'GET', `${BASE}/analytics?${query}`, { key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

describe('published posts, for a public site', () => {
  it('lists published posts only, most recently published first, filtered by category and tag', async () => {
    const key = await newKey();
    const old = await postIn(key, 'published', { title: 'Old', categories: ['News'], tags: ['intro'] });
    platform.clock.advance(MINUTE_MS);
    await postIn(key, 'published', { title: 'New', categories: ['news', 'Tech'] });
    platform.clock.advance(MINUTE_MS);
    await postIn(key, 'draft', { title: 'Draft', categories: ['News'] });
    await postIn(key, 'scheduled', { title: 'Scheduled', categories: ['News'] });
    await postIn(key, 'archived', { title: 'Archived', categories: ['News'] });
    platform.clock.advance(MINUTE_MS);

    expect(await publishedTitles(key)).toEqual(['New', 'Old']);
    expect(await publishedTitles(key, 'category=NEWS')).toEqual(['New', 'Old']);
    expect(await publishedTitles(key, 'category=tech')).toEqual(['New']);
    expect(await publishedTitles(key, 'tag=Intro')).toEqual(['Old']);
    expect(await publishedTitles(key, 'tag=intro&category=tech')).toEqual([]);
    const page = (await call(platform.app, 'GET', `${BASE}/posts/published?limit=1`, { key })).json();
    expect(page.meta).toEqual({ limit: 1, offset: 0, total: 2, has_more: true });

    // Republishing keeps the original date, so the post keeps its place.
    await moveTo(key, old.id, 'archived');
    expect(await publishedTitles(key)).toEqual(['New']);
    await moveTo(key, old.id, 'published');
    expect(await publishedTitles(key)).toEqual(['New', 'Old']);

    for (const query of ['status=draft', 'search=x', 'limit=0', 'category=', 'tag=' + 'x'.repeat(201)]) {
      expectError(await call(platform.app, 'GET', `${BASE}/posts/published?${query}`, { key }), 400, 'validation_failed');
    }
  });

  it('fetches a published post by slug, counting each read, and finds no other status', async () => {
    const key = await newKey();
    const post = await postIn(key, 'published', { title: 'Readable', content: 'Hello *there*' });
    for (const status of ['draft', 'scheduled', 'archived'] as const) {
      const hidden = await postIn(key, status, { title: `Hidden ${status}` });
      expectError(await read(key, hidden.slug), 404, 'not_found');
    }
    for (const slug of ['missing', 'UPPER', 'a%20b', '-x-', 'x'.repeat(100)]) {
      expectError(await read(key, slug), 404, 'not_found');
    }
    // A control character is refused before any lookup, like in every other input.
    expectError(await read(key, '%00'), 404, 'not_found');

    const first = await read(key, post.slug);
    expect(first.statusCode).toBe(200);
    expect(first.json().data).toMatchObject({ id: post.id, content_html: '<p>Hello <em>there</em></p>\n', view_count: 1 });
    expect((await read(key, post.slug)).json().data.view_count).toBe(2);
    await Promise.all([read(key, post.slug), read(key, post.slug), read(key, post.slug)]);
    const stored = (await call(platform.app, 'GET', `${BASE}/posts/${post.id}`, { key })).json().data;
    expect(stored.view_count).toBe(5);
    // A read is not an edit: updated_at (and so expected_updated_at) is untouched.
    expect(stored.updated_at).toBe(post.updated_at);
    expect((await analytics(key)).views.total).toBe(5);

    // Unpublished, it is gone from the public side; its count stays.
    await moveTo(key, post.id, 'draft');
    expectError(await read(key, post.slug), 404, 'not_found');
  });

  it("does not show another tenant's or mode's published posts", async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const post = await postIn(key, 'published', { title: 'Mine' });
    expect(await publishedTitles(await tenant.key({ mode: 'live' }))).toEqual([]);
    expect(await publishedTitles(await newKey())).toEqual([]);
    expectError(await read(await tenant.key({ mode: 'live' }), post.slug), 404, 'not_found');
  });
});

describe('analytics', () => {
  it('counts posts and subscribers by status, and views per day range with the top posts', async () => {
    const key = await newKey();
    // Noon of a coming day, so the day's reads cannot spill over midnight.
    const today = platform.clock.now();
    platform.clock.freeze(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + 1, 12)));
    const day0 = platform.clock.now();
    const popular = await postIn(key, 'published', { title: 'Popular' });
    const quiet = await postIn(key, 'published', { title: 'Quiet' });
    await postIn(key, 'draft', { title: 'Draft' });
    await postIn(key, 'scheduled', { title: 'Scheduled' });
    const archived = await postIn(key, 'published', { title: 'Archived later' });
    await read(key, archived.slug);
    await moveTo(key, archived.id, 'archived');
    for (let i = 0; i < 3; i += 1) await read(key, popular.slug);

    const subscriber = async (body: Record<string, unknown>) => {
      const response = await call(platform.app, 'POST', `${BASE}/subscribers`, { key, body });
      expect(response.statusCode, response.body).toBe(201);
      return response.json().data;
    };
    await subscriber({ email: 'a@example.com' });
    const leaving = await subscriber({ email: 'b@example.com' });
    await subscriber({ email: 'c@example.com', status: 'bounced' });
    await subscriber({ email: 'd@example.com', subscribed_at: '2020-01-01T00:00:00.000Z' });

    platform.clock.advance(DAY_MS);
    const day1 = platform.clock.now();
    await read(key, popular.slug);
    await read(key, quiet.slug);
    await read(key, quiet.slug);
    await call(platform.app, 'PATCH', `${BASE}/subscribers/${leaving.id}`, { key, body: { status: 'unsubscribed' } });

    const all = await analytics(key);
    expect(all).toEqual({
      range: { from: null, to: null },
      posts: { total: 5, draft: 1, scheduled: 1, published: 2, archived: 1, published_in_range: 2 },
      subscribers: { total: 4, active: 2, unsubscribed: 1, bounced: 1, new_in_range: 4, unsubscribed_in_range: 1 },
      views: {
        total: 7,
        top_posts: [
          { id: popular.id, title: 'Popular', slug: popular.slug, status: 'published', views: 4 },
          { id: quiet.id, title: 'Quiet', slug: quiet.slug, status: 'published', views: 2 },
          { id: archived.id, title: 'Archived later', slug: archived.slug, status: 'archived', views: 1 },
        ],
      },
    });

    const second = await analytics(key, `from=${utcDay(day1)}&to=${utcDay(day1)}`);
    expect(second.range).toEqual({ from: utcDay(day1), to: utcDay(day1) });
    expect(second.views).toEqual({
      total: 3,
      top_posts: [
        { id: quiet.id, title: 'Quiet', slug: quiet.slug, status: 'published', views: 2 },
        { id: popular.id, title: 'Popular', slug: popular.slug, status: 'published', views: 1 },
      ],
    });
    expect(second.posts).toMatchObject({ published: 2, published_in_range: 0 });
    expect(second.subscribers).toMatchObject({ total: 4, new_in_range: 0, unsubscribed_in_range: 1 });

    const first = await analytics(key, `from=${utcDay(day0)}&to=${utcDay(day0)}&top=1`);
    expect(first.views).toEqual({ total: 4, top_posts: [{ id: popular.id, title: 'Popular', slug: popular.slug, status: 'published', views: 3 }] });
    expect(first.posts.published_in_range).toBe(2);
    expect(first.subscribers).toMatchObject({ new_in_range: 3, unsubscribed_in_range: 0 });

    expect((await analytics(key, `from=${utcDay(day1)}`)).views.total).toBe(3);
    expect((await analytics(key, `to=${utcDay(day0)}`)).views.total).toBe(4);
    expect((await analytics(key, 'from=2019-12-31&to=2020-01-01')).subscribers.new_in_range).toBe(1);
    expect((await analytics(key, 'to=2000-01-01')).views).toEqual({ total: 0, top_posts: [] });

    // Deleting a post takes its views with it.
    await call(platform.app, 'DELETE', `${BASE}/posts/${quiet.id}`, { key });
    expect((await analytics(key)).views.total).toBe(5);
    platform.clock.resume();
  });

  it('answers an empty blog with zeros', async () => {
    expect(await analytics(await newKey())).toEqual({
      range: { from: null, to: null },
      posts: { total: 0, draft: 0, scheduled: 0, published: 0, archived: 0, published_in_range: 0 },
      subscribers: { total: 0, active: 0, unsubscribed: 0, bounced: 0, new_in_range: 0, unsubscribed_in_range: 0 },
      views: { total: 0, top_posts: [] },
    });
  });

  it('refuses bad ranges with validation_failed', async () => {
    const key = await newKey();
    const reversed = expectError(await call(platform.app, 'GET', `${BASE}/analytics?from=2026-02-02&to=2026-02-01`, { key }), 400, 'validation_failed');
    expect(reversed.details[0]).toMatchObject({ path: 'to', code: 'out_of_range' });
    for (const query of [
      'from=yesterday',
      'from=2026-02-30',
      'from=2026-13-01',
      'to=0000-01-01',
      'from=2026-01-01T00:00:00Z',
      'from=20260101',
      'top=0',
      'top=101',
      'top=x',
      'limit=5',
      'from=2026-01-01&from=2026-01-02',
    ]) {
      expectError(await call(platform.app, 'GET', `${BASE}/analytics?${query}`, { key }), 400, 'validation_failed');
    }
  });
});

describe('categories', () => {
  it('lists the categories used by posts of any status with their counts, by name, case-insensitively', async () => {
    const key = await newKey();
    await postIn(key, 'draft', { title: 'One', categories: ['News', 'tech'] });
    await postIn(key, 'published', { title: 'Two', categories: ['news'] });
    await postIn(key, 'published', { title: 'Three', categories: ['News', 'Art'] });
    await postIn(key, 'archived', { title: 'Four', categories: ['Zoology'] });
    await postIn(key, 'draft', { title: 'Five' });
    const gone = await postIn(key, 'draft', { title: 'Six', categories: ['Deleted'] });
    await call(platform.app, 'DELETE', `${BASE}/posts/${gone.id}`, { key });
    await postIn(await newKey(), 'published', { title: 'Elsewhere', categories: ['Other tenant'] });

    const response = await call(platform.app, 'GET', `${BASE}/categories`, { key });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      data: [
        { name: 'Art', post_count: 1, published_count: 1 },
        { name: 'News', post_count: 3, published_count: 2 },
        { name: 'tech', post_count: 1, published_count: 0 },
        { name: 'Zoology', post_count: 1, published_count: 0 },
      ],
      meta: { limit: 50, offset: 0, total: 4, has_more: false },
    });
    const page = (await call(platform.app, 'GET', `${BASE}/categories?limit=2&offset=1`, { key })).json();
    expect(page.data.map((category: { name: string }) => category.name)).toEqual(['News', 'tech']);
    expect(page.meta).toEqual({ limit: 2, offset: 1, total: 4, has_more: true });
    expectError(await call(platform.app, 'GET', `${BASE}/categories?status=draft`, { key }), 400, 'validation_failed');
    expect((await call(platform.app, 'GET', `${BASE}/categories`, { key: await newKey() })).json()).toEqual({
      data: [],
      meta: { limit: 50, offset: 0, total: 0, has_more: false },
    });
  });
});

describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.blogs.read', url: () => `${BASE}/posts/published`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.blogs.read',
  setup: (key) => postIn(key, 'published', { title: 'Public' }),
  url: (post: PostData) => `${BASE}/posts/published/${post.slug}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.blogs.view', url: () => `${BASE}/analytics`, addressesOneRow: false });
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.blogs.view', url: () => `${BASE}/categories`, addressesOneRow: false });
