import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

async function createPost(key: string, body: Record<string, unknown> = { title: 'Hello world' }) {
  const response = await call(platform.app, 'POST', `${BASE}/posts`, { key, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

async function listTitles(key: string, query: string): Promise<string[]> {
  const response = await call(platform.app, 'GET', `${BASE}/posts?${query}`, { key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.map((post: { title: string }) => post.title);
}

describe('creating posts', () => {
  it('creates a draft with every field, a derived slug, rendered HTML and a reading time', async () => {
    const key = await newKey();
    const post = await createPost(key, {
      title: '  Ten years of the Analytical Engine ',
      excerpt: ' What we learned. ',
      content: '# A decade\n\nIt started with a **punch card**.',
      categories: [' History ', 'Engineering'],
      tags: ['engines'],
      author_name: 'Ada Lovelace',
      cover_image_url: 'https://images.example.com/engine.jpg',
      seo_title: 'Ten years',
      seo_description: 'A decade of engines.',
    });
    expect(post).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: 'Ten years of the Analytical Engine',
      slug: 'ten-years-of-the-analytical-engine',
      excerpt: 'What we learned.',
      content: '# A decade\n\nIt started with a **punch card**.',
      content_html: '<h1>A decade</h1>\n<p>It started with a <strong>punch card</strong>.</p>\n',
      status: 'draft',
      published_at: null,
      scheduled_for: null,
      categories: ['History', 'Engineering'],
      tags: ['engines'],
      author_name: 'Ada Lovelace',
      cover_image_url: 'https://images.example.com/engine.jpg',
      seo_title: 'Ten years',
      seo_description: 'A decade of engines.',
      reading_time_minutes: 1,
      view_count: 0,
      created_at: expect.stringMatching(ISO),
      updated_at: post.created_at,
    });
    expect((await call(platform.app, 'GET', `${BASE}/posts/${post.id}`, { key })).json().data).toEqual(post);
  });

  it('creates a draft whatever status the body asks for', async () => {
    const key = await newKey();
    for (const status of ['published', 'scheduled', 'archived', 'draft']) {
      const post = await createPost(key, { title: `Asked ${status}`, status });
      expect(post).toMatchObject({ status: 'draft', published_at: null, scheduled_for: null });
    }
    expect(await call(platform.app, 'GET', `${BASE}/posts/published`, { key }).then((r) => r.json().meta.total)).toBe(0);
  });

  it('fills in defaults for a post with only a title', async () => {
    const post = await createPost(await newKey(), { title: 'Bare' });
    expect(post).toMatchObject({
      slug: 'bare',
      excerpt: null,
      content: '',
      content_html: '',
      categories: [],
      tags: [],
      author_name: null,
      cover_image_url: null,
      seo_title: null,
      seo_description: null,
      reading_time_minutes: 0,
    });
  });

  it('derives a free slug from the title, and refuses a taken explicit slug with 409 slug_taken', async () => {
    const key = await newKey();
    expect((await createPost(key, { title: 'Crème brûlée!' })).slug).toBe('creme-brulee');
    expect((await createPost(key, { title: 'Crème Brûlée' })).slug).toBe('creme-brulee-2');
    expect((await createPost(key, { title: '日本語' })).slug).toBe('untitled');
    expect((await createPost(key, { title: 'Custom', slug: 'my-own' })).slug).toBe('my-own');

    const error = expectError(await call(platform.app, 'POST', `${BASE}/posts`, { key, body: { title: 'Other', slug: 'creme-brulee' } }), 409, 'slug_taken');
    expect(error.details[0]).toMatchObject({ path: 'slug', code: 'taken' });

    // Slugs are unique per tenant and mode only.
    expect((await createPost(await newKey(), { title: 'x', slug: 'creme-brulee' })).slug).toBe('creme-brulee');
    const tenant = await platform.newTenant();
    await createPost(await tenant.key(), { title: 'x', slug: 'shared' });
    expect((await createPost(await tenant.key({ mode: 'live' }), { title: 'x', slug: 'shared' })).slug).toBe('shared');
  });

  it('gives concurrent creates of one title different slugs', async () => {
    const key = await newKey();
    const replies = await Promise.all(Array.from({ length: 4 }, () => call(platform.app, 'POST', `${BASE}/posts`, { key, body: { title: 'Same title' } })));
    expect(replies.map((reply) => reply.statusCode)).toEqual([201, 201, 201, 201]);
    const slugs = replies.map((reply) => reply.json().data.slug).sort();
    expect(slugs).toEqual(['same-title', 'same-title-2', 'same-title-3', 'same-title-4']);
  });

  it('trims categories and tags and drops duplicates differing only in case, keeping the first spelling', async () => {
    const post = await createPost(await newKey(), { title: 'Labels', categories: ['News', ' news ', 'NEWS', 'Tech'], tags: ['a', 'A', ' b'] });
    expect(post.categories).toEqual(['News', 'Tech']);
    expect(post.tags).toEqual(['a', 'b']);
  });
});

describe('Markdown rendering', () => {
  it('renders hostile content inert: raw HTML is escaped and unsafe links are dropped', async () => {
    const key = await newKey();
    const hostile = [
      '<script>alert(1)</script>',
      '<img src=x onerror="alert(1)">',
      '<a href="https://evil.example" onclick="steal()">raw link</a>',
      '[click](javascript:alert(1))',
      '[upper](JAVASCRIPT:alert(1))',
      '[vb](vbscript:msgbox(1))',
      '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
      '![img](javascript:alert(1))',
      '<javascript:alert(1)>',
      '[ok](https://example.com "title")',
      '<iframe src="https://evil.example"></iframe>',
      '<div style="background:url(javascript:alert(1))">styled</div>',
    ].join('\n\n');
    const html: string = (await createPost(key, { title: 'Hostile', content: hostile })).content_html;
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    expect(html).toContain('<a href="https://example.com" title="title" rel="noopener noreferrer nofollow">ok</a>');
    // Every element left is one Markdown itself makes, with only harmless attributes and http(s) links.
    for (const [, tag, attributes] of html.matchAll(/<([a-z0-9]+)([^>]*)>/gi)) {
      expect(['p', 'a'], tag).toContain(tag!.toLowerCase());
      for (const [, name, value] of attributes!.matchAll(/\s([a-z-]+)="([^"]*)"/gi)) {
        expect(['href', 'title', 'rel'], name).toContain(name);
        if (name === 'href') expect(value).toMatch(/^https?:\/\//);
      }
    }
  });

  it('keeps safe Markdown: links get rel, images with http(s) sources stay', async () => {
    const html: string = (
      await createPost(await newKey(), { title: 'Safe', content: 'See https://example.com and ![cat](https://img.example.com/cat.png)\n\n- one\n- two\n\n`code`' })
    ).content_html;
    expect(html).toContain('<a href="https://example.com" rel="noopener noreferrer nofollow">https://example.com</a>');
    expect(html).toContain('<img src="https://img.example.com/cat.png" alt="cat">');
    expect(html).toContain('<li>one</li>');
    expect(html).toContain('<code>code</code>');
  });

  it('computes the reading time at 275 words a minute, rounded up', async () => {
    const key = await newKey();
    const words = (count: number) => Array.from({ length: count }, (_, i) => `word${i}`).join(' ');
    expect((await createPost(key, { title: 'a', content: '' })).reading_time_minutes).toBe(0);
    expect((await createPost(key, { title: 'b', content: '   \n  ' })).reading_time_minutes).toBe(0);
    expect((await createPost(key, { title: 'c', content: 'One word' })).reading_time_minutes).toBe(1);
    expect((await createPost(key, { title: 'd', content: '![only an image](https://img.example.com/x.png)' })).reading_time_minutes).toBe(1);
    expect((await createPost(key, { title: 'e', content: words(550) })).reading_time_minutes).toBe(2);
    expect((await createPost(key, { title: 'f', content: `**${words(551)}**` })).reading_time_minutes).toBe(3);
  });
});

describe('listing posts', () => {
  it('lists posts of any status newest first, filtered by status, category, tag and title search', async () => {
    const key = await newKey();
    const first = await createPost(key, { title: 'Engines of 1843', categories: ['History'], tags: ['engines'] });
    platform.clock.advance(5);
    await createPost(key, { title: 'Looms and cards', categories: ['history', 'Textiles'], tags: ['looms'] });
    platform.clock.advance(5);
    await createPost(key, { title: '50% off engines', categories: ['News'] });
    expect((await call(platform.app, 'POST', `${BASE}/posts/${first.id}/status`, { key, body: { status: 'published' } })).statusCode).toBe(200);

    expect(await listTitles(key, '')).toEqual(['50% off engines', 'Looms and cards', 'Engines of 1843']);
    expect(await listTitles(key, 'status=published')).toEqual(['Engines of 1843']);
    expect(await listTitles(key, 'status=draft')).toEqual(['50% off engines', 'Looms and cards']);
    expect(await listTitles(key, 'category=HISTORY')).toEqual(['Looms and cards', 'Engines of 1843']);
    expect(await listTitles(key, 'category=textiles')).toEqual(['Looms and cards']);
    expect(await listTitles(key, 'category=Hist')).toEqual([]);
    expect(await listTitles(key, 'tag=Engines')).toEqual(['Engines of 1843']);
    expect(await listTitles(key, 'search=ENGINES')).toEqual(['50% off engines', 'Engines of 1843']);
    expect(await listTitles(key, 'search=%25')).toEqual(['50% off engines']);
    expect(await listTitles(key, 'search=_')).toEqual([]);
    expect(await listTitles(key, 'search=engines&status=draft')).toEqual(['50% off engines']);

    const page = (await call(platform.app, 'GET', `${BASE}/posts?limit=2&offset=1`, { key })).json();
    expect(page.meta).toEqual({ limit: 2, offset: 1, total: 3, has_more: false });
    expect(page.data.map((post: { title: string }) => post.title)).toEqual(['Looms and cards', 'Engines of 1843']);
  });

  it('refuses bad list queries with validation_failed', async () => {
    const key = await newKey();
    for (const query of ['status=live', 'limit=0', 'limit=201', 'limit=abc', 'offset=-1', 'nope=1', `search=${'x'.repeat(201)}`, 'category=', 'limit=Infinity']) {
      expectError(await call(platform.app, 'GET', `${BASE}/posts?${query}`, { key }), 400, 'validation_failed');
    }
  });
});

describe('updating posts', () => {
  it('updates only the fields sent, re-renders changed content, and null clears a field', async () => {
    const key = await newKey();
    const post = await createPost(key, { title: 'Draft', content: 'Old', excerpt: 'Short', seo_title: 'SEO', categories: ['A'] });
    platform.clock.advance(10);
    const response = await call(platform.app, 'PATCH', `${BASE}/posts/${post.id}`, {
      key,
      body: { content: 'New *text*', excerpt: null, seo_title: '   ', categories: ['B', 'b'], cover_image_url: 'http://img.example.com/a.png' },
    });
    expect(response.statusCode, response.body).toBe(200);
    const updated = response.json().data;
    expect(updated).toMatchObject({
      title: 'Draft',
      slug: 'draft',
      content: 'New *text*',
      content_html: '<p>New <em>text</em></p>\n',
      excerpt: null,
      seo_title: null,
      categories: ['B'],
      cover_image_url: 'http://img.example.com/a.png',
      status: 'draft',
    });
    expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(post.updated_at));
    expect(updated.created_at).toBe(post.created_at);

    // The title changes alone; the slug stays unless sent.
    const renamed = (await call(platform.app, 'PATCH', `${BASE}/posts/${post.id}`, { key, body: { title: 'Renamed' } })).json().data;
    expect(renamed).toMatchObject({ title: 'Renamed', slug: 'draft', content: 'New *text*' });
  });

  it('changes the slug, refusing one another post uses with 409 slug_taken', async () => {
    const key = await newKey();
    const post = await createPost(key, { title: 'First' });
    await createPost(key, { title: 'Second' });
    const taken = expectError(await call(platform.app, 'PATCH', `${BASE}/posts/${post.id}`, { key, body: { slug: 'second' } }), 409, 'slug_taken');
    expect(taken.details[0]).toMatchObject({ path: 'slug' });
    expect((await call(platform.app, 'PATCH', `${BASE}/posts/${post.id}`, { key, body: { slug: 'first' } })).statusCode).toBe(200);
    const moved = await call(platform.app, 'PATCH', `${BASE}/posts/${post.id}`, { key, body: { slug: 'brand-new' } });
    expect(moved.json().data.slug).toBe('brand-new');
    expect((await createPost(key, { title: 'First' })).slug).toBe('first');
  });

  it('refuses a stale expected_updated_at with 409 stale_update', async () => {
    const key = await newKey();
    const post = await createPost(key);
    const first = await call(platform.app, 'PATCH', `${BASE}/posts/${post.id}`, { key, body: { title: 'One', expected_updated_at: post.updated_at } });
    expect(first.statusCode).toBe(200);
    const stale = await call(platform.app, 'PATCH', `${BASE}/posts/${post.id}`, { key, body: { title: 'Two', expected_updated_at: post.updated_at } });
    expect(expectError(stale, 409, 'stale_update').details[0]).toMatchObject({ current_updated_at: first.json().data.updated_at });
    expect((await call(platform.app, 'GET', `${BASE}/posts/${post.id}`, { key })).json().data.title).toBe('One');
  });

  it('refuses hostile and invalid bodies with validation_failed, never 5xx', async () => {
    const key = await newKey();
    const post = await createPost(key);
    const creates: unknown[] = [
      {},
      { title: null },
      { title: '   ' },
      { title: 42 },
      { title: 'x'.repeat(201) },
      { title: 'ok', slug: 'Not A Slug' },
      { title: 'ok', slug: '-x-' },
      { title: 'ok', slug: 'x'.repeat(121) },
      { title: 'ok', content: 'x'.repeat(200_001) },
      { title: 'ok', content: null },
      { title: 'ok', excerpt: 'x'.repeat(301) },
      { title: 'ok', categories: 'News' },
      { title: 'ok', categories: [1] },
      { title: 'ok', categories: [''] },
      { title: 'ok', categories: ['   '] },
      { title: 'ok', categories: ['x'.repeat(51)] },
      { title: 'ok', categories: Array.from({ length: 21 }, (_, i) => `c${i}`) },
      { title: 'ok', tags: ['bad\u0000tag'] },
      { title: 'ok', tags: [null] },
      { title: 'ok', cover_image_url: 'javascript:alert(1)' },
      { title: 'ok', cover_image_url: 'ftp://example.com/a.png' },
      { title: 'ok', cover_image_url: '/relative.png' },
      { title: 'ok', cover_image_url: 'https://' },
      { title: 'ok', cover_image_url: `https://example.com/${'x'.repeat(2100)}` },
      { title: 'ok', seo_title: 'x'.repeat(301) },
      { title: 'ok', seo_description: 'x'.repeat(501) },
      { title: 'ok', author_name: '' },
      { title: 'ok', status: 'live' },
      { title: 'ok', scheduled_for: '2030-01-01T00:00:00.000Z' },
      { title: 'ok', view_count: 5 },
      { title: 'ok', id: post.id },
      ['title'],
      '"just a string"',
      'null',
    ];
    for (const body of creates) {
      expectError(await call(platform.app, 'POST', `${BASE}/posts`, { key, body }), 400, 'validation_failed');
    }
    expectError(await call(platform.app, 'POST', `${BASE}/posts`, { key, body: '{"title":' }), 400, 'invalid_json');
    const patches: unknown[] = [{ title: null }, { slug: null }, { status: 'published' }, { content: 5 }, { expected_updated_at: 'yesterday' }, { published_at: null }];
    for (const body of patches) {
      expectError(await call(platform.app, 'PATCH', `${BASE}/posts/${post.id}`, { key, body }), 400, 'validation_failed');
    }
    expect((await call(platform.app, 'GET', `${BASE}/posts/${post.id}`, { key })).json().data).toEqual(post);
  });
});

describe('reading and deleting posts', () => {
  it('answers unknown and malformed ids with 404', async () => {
    const key = await newKey();
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope', "1' or '1'='1", 'x'.repeat(100)]) {
      expectError(await call(platform.app, 'GET', `${BASE}/posts/${encodeURIComponent(id)}`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'PATCH', `${BASE}/posts/${encodeURIComponent(id)}`, { key, body: { title: 'x' } }), 404, 'not_found');
      expectError(await call(platform.app, 'DELETE', `${BASE}/posts/${encodeURIComponent(id)}`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'POST', `${BASE}/posts/${encodeURIComponent(id)}/status`, { key, body: { status: 'published' } }), 404, 'not_found');
    }
  });

  it('deletes a post, freeing its slug; a second delete is 404', async () => {
    const key = await newKey();
    const post = await createPost(key, { title: 'Gone soon' });
    const deleted = await call(platform.app, 'DELETE', `${BASE}/posts/${post.id}`, { key });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ data: { id: post.id, deleted: true } });
    expectError(await call(platform.app, 'GET', `${BASE}/posts/${post.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'DELETE', `${BASE}/posts/${post.id}`, { key }), 404, 'not_found');
    expect((await createPost(key, { title: 'Gone soon' })).slug).toBe('gone-soon');
  });

  it("keeps another tenant's posts out of lists", async () => {
    const key = await newKey();
    await createPost(key, { title: 'Mine' });
    await createPost(await newKey(), { title: 'Theirs' });
    expect(await listTitles(key, '')).toEqual(['Mine']);
  });
});

describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.blogs.view', url: () => `${BASE}/posts`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.blogs.manage',
  url: () => `${BASE}/posts`,
  body: () => ({ title: 'Secured' }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.blogs.view',
  setup: (key) => createPost(key),
  url: (post: { id: string }) => `${BASE}/posts/${post.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.blogs.manage',
  setup: (key) => createPost(key),
  url: (post: { id: string }) => `${BASE}/posts/${post.id}`,
  body: () => ({ title: 'Renamed' }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'DELETE',
  scope: 'service.blogs.manage',
  setup: (key) => createPost(key),
  url: (post: { id: string }) => `${BASE}/posts/${post.id}`,
  addressesOneRow: true,
});
