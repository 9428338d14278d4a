import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { DAY_MS } from '../../lib/clock.js';
import { JobRunner } from '../../platform/jobs/runner.js';
import { createLogger } from '../../runtime.js';
import { registerSeoJobs } from './index.js';
import { clusterQueries, normalizeText } from './text.js';

let platform: TestPlatform;
/** Runs SEO jobs only (crawls and AI checks), as outreach's scheduler tests do. */
let runner: JobRunner;
const servers: http.Server[] = [];
/** The tracked site and a competitor, each served by its own loopback server. */
let origin: string;
let rivalOrigin: string;

async function serve(pages: Record<string, string>): Promise<string> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    const body = pages[path];
    if (!body) return void response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const OWN_PAGES: Record<string, string> = {
  '/': '<html><head><title>Acme shipping</title><meta name="description" content="All about Acme orders."></head><body><h1>Acme</h1><a href="/faq">FAQ</a> <a href="/about">About</a></body></html>',
  '/faq': `<html><head><title>Shipping FAQ</title><meta name="description" content="Answers about shipping."></head><body>
    <h1>Shipping questions</h1>
    <h2>How long does shipping take?</h2><p>Orders ship within two days. Delivery takes three to five days.</p>
    <h2>Returns</h2><p>Send items back within 30 days for a full refund of the order.</p>
    <script type="application/ld+json">{"@context":"https://schema.org","@type":"FAQPage","mainEntity":[{"@type":"Question","name":"Do you ship internationally?","acceptedAnswer":{"@type":"Answer","text":"Yes, we ship to 40 countries."}}]}</script>
    </body></html>`,
  '/about': '<html><head><title>About Acme</title></head><body><h1>About</h1><p>We sell garden tools and pay attention to returns policy details.</p></body></html>',
};
const RIVAL_PAGES: Record<string, string> = {
  '/': '<html><head><title>Rival</title></head><body><a href="/gift-cards">Gift cards</a> <a href="/warranty">Warranty</a></body></html>',
  '/gift-cards': '<html><head><title>Gift cards for gardeners</title></head><body><h1>Gift cards</h1></body></html>',
  '/warranty': '<html><head><title>Tool warranty explained</title></head><body><h1>Warranty</h1></body></html>',
};

beforeAll(async () => {
  platform = await startTestPlatform();
  runner = new JobRunner({ db: platform.database.db, clock: platform.clock, log: createLogger('silent') });
  registerSeoJobs({ db: platform.database.db, clock: platform.clock, events: platform.runtime.events, outbound: platform.runtime.outbound, jobs: runner });
  origin = await serve(OWN_PAGES);
  rivalOrigin = await serve(RIVAL_PAGES);
});
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  await platform.close();
});

const BASE = '/api/v1/services/seo';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function send(key: string, method: string, path: string, body?: unknown, status = 200) {
  const response = await call(platform.app, method, `${BASE}${path}`, { key, ...(body === undefined ? {} : { body }) });
  expect(response.statusCode, response.body).toBe(status);
  return response.json();
}

async function newKey() {
  return (await platform.newTenant()).key();
}

async function createSite(key: string, domain = 'example.com') {
  return (await send(key, 'POST', '/sites', { domain }, 201)).data;
}

/** A site served from this file's loopback server (`/own/`), crawled. */
async function crawledSite(key: string) {
  const site = await createSite(key, `${origin}/`);
  const crawl = (await send(key, 'POST', `/sites/${site.id}/crawl`, {}, 202)).data;
  await runner.runDue();
  expect((await send(key, 'GET', `/sites/${site.id}/crawls/${crawl.id}`)).data.status).toBe('completed');
  return (await send(key, 'GET', `/sites/${site.id}`)).data;
}

const SEARCH_ROWS = [
  { query: 'how long does shipping take', page: 'https://example.com/faq', impressions: 500, clicks: 40, position: 3, date: '2026-10-01' },
  { query: 'shipping time', page: 'https://example.com/faq', impressions: 300, clicks: 20, position: 5, date: '2026-10-02' },
  { query: 'gift cards', page: 'https://example.com/', impressions: 900, clicks: 10, position: 12, date: '2026-10-01' },
  { query: 'buy gift cards online', page: 'https://example.com/', impressions: 100, clicks: 1, position: 20, date: '2026-10-03' },
  { query: 'tool warranty', page: 'https://example.com/', impressions: 200, clicks: 5, position: 9, date: '2026-10-03' },
  { query: 'returns policy', page: 'https://example.com/about', impressions: 50, clicks: 5, position: 2, date: '2026-10-03' },
];

describe('sites', () => {
  it('creates a site with a normalised domain, reads, lists, renames and deletes it', async () => {
    const key = await newKey();
    const site = await createSite(key, '  HTTPS://Www.Example.COM/blog ');
    expect(site).toEqual({
      id: expect.stringMatching(UUID),
      domain: 'www.example.com',
      name: 'www.example.com',
      start_url: 'https://www.example.com/blog',
      crawl_status: 'never',
      last_crawled_at: null,
      page_count: 0,
      topics_revision: null,
      created_at: expect.any(String),
      updated_at: site.created_at,
    });
    expect((await send(key, 'GET', `/sites/${site.id}`)).data).toEqual(site);
    expect((await createSite(key, 'bücher.example')).domain).toBe('xn--bcher-kva.example');
    const list = await send(key, 'GET', '/sites?limit=1');
    expect(list.meta).toEqual({ limit: 1, offset: 0, total: 2, has_more: true });
    const renamed = (await send(key, 'PATCH', `/sites/${site.id}`, { name: ' Blog ' })).data;
    expect(renamed).toMatchObject({ name: 'Blog', domain: 'www.example.com' });
    expectError(await call(platform.app, 'PATCH', `${BASE}/sites/${site.id}`, { key, body: { name: 'X', expected_updated_at: site.updated_at } }), 409, 'stale_update');
    expect((await send(key, 'DELETE', `/sites/${site.id}`)).data).toEqual({ id: site.id, deleted: true });
    expectError(await call(platform.app, 'GET', `${BASE}/sites/${site.id}`, { key }), 404, 'not_found');
  });

  it('refuses bad domains and duplicates', async () => {
    const key = await newKey();
    for (const domain of ['localhost', 'ftp://example.com', 'exa mple.com', 'example', 'user:pw@example.com', '-bad-.com', '1.2.3']) {
      expectError(await call(platform.app, 'POST', `${BASE}/sites`, { key, body: { domain } }), 400, 'validation_failed');
    }
    expectError(await call(platform.app, 'POST', `${BASE}/sites`, { key, body: { domain: '' } }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', `${BASE}/sites`, { key, body: { domain: 'example.com', extra: 1 } }), 400, 'validation_failed');
    await createSite(key, 'example.com');
    expectError(await call(platform.app, 'POST', `${BASE}/sites`, { key, body: { domain: 'https://EXAMPLE.com/' } }), 409, 'conflict');
  });
});

describe('tracked questions', () => {
  it('adds questions, detects normalised duplicates (also within one request) and reopens ignored ones', async () => {
    const key = await newKey();
    const site = await createSite(key);
    const first = (await send(key, 'POST', `/sites/${site.id}/questions`, { questions: [{ question: 'How long does shipping take?' }, { question: 'What is Acme?' }] })).data;
    expect(first.created).toBe(2);
    expect(first.existing).toBe(0);
    const [shipping, acme] = first.questions;
    expect(shipping).toMatchObject({
      id: expect.stringMatching(UUID),
      question: 'How long does shipping take?',
      kind: 'how_to',
      intent: 'informational',
      sources: ['api'],
      status: 'open',
      coverage: 'none',
      match_basis: 'none',
      answer_score: 0,
      checks: [],
      best_page_url: null,
      evaluated_at: null,
      demand: { impressions: 0, clicks: 0, position: 0, measured: false, period: '' },
      ai_monitored: false,
      ai_models: null,
      ai_next_check_at: null,
      ai_latest: null,
      topic_id: null,
      query_id: null,
    });
    expect(acme.kind).toBe('definition');

    const ignored = (await send(key, 'PATCH', `/sites/${site.id}/questions/${shipping.id}`, { status: 'ignored' })).data;
    expect(ignored.status).toBe('ignored');
    const again = (
      await send(key, 'POST', `/sites/${site.id}/questions`, {
        questions: [{ question: '  how LONG does “shipping” take ' }, { question: 'Is Acme open on Sundays?' }, { question: 'is acme open on sundays' }],
      })
    ).data;
    expect(again.created).toBe(1);
    expect(again.existing).toBe(2);
    expect(again.questions).toHaveLength(3);
    expect(again.questions[0]).toMatchObject({ id: shipping.id, status: 'open', question: 'How long does shipping take?' });
    expect(again.questions[1].id).toBe(again.questions[2].id);
    const list = await send(key, 'GET', `/sites/${site.id}/questions`);
    expect(list.meta.total).toBe(3);
    expect((await send(key, 'GET', `/sites/${site.id}/questions?status=open&limit=2`)).meta).toEqual({ limit: 2, offset: 0, total: 3, has_more: true });
    await send(key, 'PATCH', `/sites/${site.id}/questions/${acme.id}`, { status: 'answered' });
    expect((await send(key, 'GET', `/sites/${site.id}/questions?status=answered`)).data.map((q: { id: string }) => q.id)).toEqual([acme.id]);
    expect((await send(key, 'GET', `/sites/${site.id}/questions?coverage=full`)).meta.total).toBe(0);
    expect((await send(key, 'GET', `/sites/${site.id}/questions/${acme.id}`)).data.status).toBe('answered');
    expect((await send(key, 'DELETE', `/sites/${site.id}/questions/${acme.id}`)).data).toEqual({ id: acme.id, deleted: true });
    expectError(await call(platform.app, 'GET', `${BASE}/sites/${site.id}/questions/${acme.id}`, { key }), 404, 'not_found');
  });

  it('refuses more than 50 questions, empty questions, bad statuses and other sites', async () => {
    const key = await newKey();
    const site = await createSite(key);
    const many = Array.from({ length: 51 }, (_, index) => ({ question: `Question number ${index}?` }));
    expectError(await call(platform.app, 'POST', `${BASE}/sites/${site.id}/questions`, { key, body: { questions: many } }), 400, 'validation_failed');
    const fifty = (await send(key, 'POST', `/sites/${site.id}/questions`, { questions: many.slice(0, 50) })).data;
    expect(fifty.created).toBe(50);
    expectError(await call(platform.app, 'POST', `${BASE}/sites/${site.id}/questions`, { key, body: { questions: [] } }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', `${BASE}/sites/${site.id}/questions`, { key, body: { questions: [{ question: '???' }] } }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', `${BASE}/sites/${site.id}/questions`, { key, body: { questions: [{ question: 'Q?', extra: true }] } }), 400, 'validation_failed');
    const id = fifty.questions[0].id;
    expectError(await call(platform.app, 'PATCH', `${BASE}/sites/${site.id}/questions/${id}`, { key, body: { status: 'closed' } }), 400, 'validation_failed');
    const other = await createSite(key, 'other.example');
    expectError(await call(platform.app, 'GET', `${BASE}/sites/${other.id}/questions/${id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/sites/${site.id}/questions/not-a-uuid`, { key }), 404, 'not_found');
  });

  it('evaluates questions against crawled pages: full, partial and none with weighted checks', async () => {
    const key = await newKey();
    const site = await crawledSite(key);
    expect(site).toMatchObject({ crawl_status: 'completed', page_count: 3 });
    const added = (
      await send(key, 'POST', `/sites/${site.id}/questions`, {
        questions: [
          { question: 'How long does shipping take?' },
          { question: 'Do you ship internationally?' },
          { question: 'What is your returns policy?' },
          { question: 'Who makes quantum sprockets?' },
        ],
      })
    ).data.questions;
    const [shipping, international, returns, none] = added;
    expect(shipping).toMatchObject({ best_page_url: `${origin}/faq`, match_basis: 'question_heading', coverage: 'full', evaluated_at: expect.any(String) });
    expect(shipping.checks.map((check: { key: string }) => check.key)).toEqual([
      'question_on_page',
      'direct_answer',
      'faq_markup',
      'key_terms',
      'title_match',
      'content_depth',
      'meta_description',
    ]);
    expect(shipping.checks.reduce((sum: number, check: { weight: number }) => sum + check.weight, 0)).toBe(100);
    const passed = (question: { checks: { passed: boolean; weight: number }[] }) => question.checks.filter((check) => check.passed).reduce((sum, check) => sum + check.weight, 0);
    expect(shipping.answer_score).toBe(passed(shipping));
    expect(shipping.answer_score).toBe(25 + 20 + 15 + 5); // asked, answered, key terms, meta; the title names 1 of 3 key terms, the page is short, no FAQ markup for it
    expect(international).toMatchObject({ match_basis: 'faq_schema', coverage: 'full' });
    expect(international.checks.find((check: { key: string }) => check.key === 'faq_markup').passed).toBe(true);
    expect(returns).toMatchObject({ coverage: 'partial', answer_score: passed(returns) });
    expect(['body_text', 'heading', 'title']).toContain(returns.match_basis);
    expect(none).toMatchObject({ coverage: 'none', best_page_url: null, match_basis: 'none', answer_score: 0 });
    expect((await send(key, 'GET', `/sites/${site.id}/questions?coverage=full`)).meta.total).toBe(2);
  });
});

describe('search data and topics', () => {
  it('clusters queries deterministically, with text similarity and a threshold', () => {
    const inputs = [
      { id: 'a', text: 'gift cards', impressions: 900, clicks: 10 },
      { id: 'b', text: 'buy gift cards online', impressions: 100, clicks: 1 },
      { id: 'c', text: 'tool warranty', impressions: 200, clicks: 5 },
      { id: 'd', text: 'shipping time', impressions: 300, clicks: 20 },
    ];
    const clusters = clusterQueries(inputs);
    expect(clusters.map((cluster) => cluster.members.map((member) => member.id))).toEqual([['a', 'b'], ['d'], ['c']]);
    expect(clusterQueries([...inputs].reverse())).toEqual(clusters);
    expect(normalizeText('  What’s  "SEO"?? ')).toBe('whats seo');
  });

  it('imports rows, rebuilds topics with a growing revision and gives questions their demand', async () => {
    const key = await newKey();
    const site = await createSite(key);
    const question = (await send(key, 'POST', `/sites/${site.id}/questions`, { questions: [{ question: 'How long does shipping take?' }] })).data.questions[0];
    const first = (await send(key, 'POST', `/sites/${site.id}/search-data`, { rows: SEARCH_ROWS })).data;
    expect(first).toEqual({ imported: 6, queries: 6, topics: expect.any(Number), revision: 1 });
    const topics = await send(key, 'GET', `/sites/${site.id}/topics`);
    expect(topics.data[0]).toMatchObject({ label: 'gift cards', query_count: 2, impressions: 1000, clicks: 11, revision: 1 });
    const again = (await send(key, 'POST', `/sites/${site.id}/search-data`, { rows: [{ ...SEARCH_ROWS[0], impressions: 700, clicks: 50, position: 2, date: '2026-10-04' }] })).data;
    expect(again.revision).toBe(2);
    const topics2 = await send(key, 'GET', `/sites/${site.id}/topics`);
    expect(topics2.data.find((topic: { label: string }) => topic.label === 'gift cards')).toMatchObject({ id: topics.data[0].id, revision: 2 });
    const evaluated = (await send(key, 'GET', `/sites/${site.id}/questions/${question.id}`)).data;
    expect(evaluated.demand).toEqual({ impressions: 1200, clicks: 90, position: 2.42, measured: true, period: '2026-10-01/2026-10-04' });
    expect(evaluated.query_id).toMatch(UUID);
    expect(evaluated.topic_label).toBe('how long does shipping take');
    expect((await send(key, 'GET', `/sites/${site.id}/questions?topic_id=${evaluated.topic_id}`)).meta.total).toBe(1);
    expect((await send(key, 'GET', `/sites/${site.id}`)).data.topics_revision).toBe(2);
  });

  it('refuses bad rows', async () => {
    const key = await newKey();
    const site = await createSite(key);
    const row = SEARCH_ROWS[0]!;
    for (const bad of [
      { ...row, clicks: 600 },
      { ...row, page: 'not a url' },
      { ...row, date: '2026-02-30' },
      { ...row, date: '01/10/2026' },
      { ...row, position: 0 },
      { ...row, impressions: -1 },
      { ...row, query: '' },
      { ...row, query: '?!' },
    ]) {
      expectError(await call(platform.app, 'POST', `${BASE}/sites/${site.id}/search-data`, { key, body: { rows: [bad] } }), 400, 'validation_failed');
    }
    expectError(
      await call(platform.app, 'POST', `${BASE}/sites/${site.id}/search-data`, { key, body: { rows: Array.from({ length: 1001 }, () => row) } }),
      400,
      'validation_failed',
    );
  });
});

describe('competitors and gaps', () => {
  it('answers needs_crawl, then no_topics, then gaps largest first', async () => {
    const key = await newKey();
    const site = await createSite(key, `${origin}/`);
    const rival = (await send(key, 'POST', `/sites/${site.id}/competitors`, { domain: `http://localhost.test/`, name: 'Rival' }, 201)).data;
    expect(rival).toMatchObject({ site_id: site.id, domain: 'localhost.test', name: 'Rival', crawl_status: 'never', last_crawled_at: null, page_count: 0 });
    await send(key, 'DELETE', `/sites/${site.id}/competitors/${rival.id}`);
    expectError(await call(platform.app, 'DELETE', `${BASE}/sites/${site.id}/competitors/${rival.id}`, { key }), 404, 'not_found');

    const competitor = (await send(key, 'POST', `/sites/${site.id}/competitors`, { domain: `${rivalOrigin}/` }, 201)).data;
    expectError(await call(platform.app, 'POST', `${BASE}/sites/${site.id}/competitors`, { key, body: { domain: `${rivalOrigin}/` } }), 409, 'conflict');
    let view = (await send(key, 'GET', `/sites/${site.id}/competitors`)).data;
    expect(view).toEqual({ competitors: [competitor], gaps: [], crawled: false, measurable: false, reason: 'needs_crawl', revision: null, note: expect.any(String) });

    await send(key, 'POST', `/sites/${site.id}/crawl`, {}, 202);
    await runner.runDue();
    view = (await send(key, 'GET', `/sites/${site.id}/competitors`)).data;
    expect(view).toMatchObject({ gaps: [], crawled: false, measurable: false, reason: 'no_topics', revision: null });

    await send(key, 'POST', `/sites/${site.id}/search-data`, { rows: SEARCH_ROWS });
    const crawl = (await send(key, 'POST', `/sites/${site.id}/competitors/${competitor.id}/crawl`, { max_pages: 10 }, 202)).data;
    expect(crawl).toMatchObject({ competitor_id: competitor.id, status: 'queued', budget: { max_pages: 10, max_depth: 3, max_seconds: 60 } });
    await runner.runDue();
    view = (await send(key, 'GET', `/sites/${site.id}/competitors`)).data;
    expect(view).toMatchObject({ crawled: true, measurable: true, reason: null, revision: 1 });
    expect(view.competitors[0]).toMatchObject({ crawl_status: 'completed', page_count: 3 });
    expect(view.gaps.map((gap: { topic_label: string }) => gap.topic_label)).toEqual(['gift cards', 'tool warranty']);
    expect(view.gaps[0]).toMatchObject({ impressions: 1000, clicks: 11, query_count: 2, competitors: [{ competitor_id: competitor.id, url: `${rivalOrigin}/gift-cards` }] });
    const pages = await send(key, 'GET', `/sites/${site.id}/pages?competitor_id=${competitor.id}`);
    expect(pages.meta.total).toBe(3);
  });
});

describe('AI monitoring', () => {
  it('schedules checks with the sandbox engine within the plan limit, no credits used', async () => {
    const key = await newKey();
    const site = await crawledSite(key);
    const added = (await send(key, 'POST', `/sites/${site.id}/questions`, { questions: [{ question: 'How long does shipping take?', monitor_in_ai: true }] })).data;
    expect(added.ai_monitoring).toEqual({ limit: 25, monitored: 1, not_monitored: 0 });
    const question = added.questions[0];
    expect(question).toMatchObject({ ai_monitored: true, ai_models: ['sandbox'], ai_next_check_at: expect.any(String), ai_latest: null });
    await runner.runDue();
    const checked = (await send(key, 'GET', `/sites/${site.id}/questions/${question.id}`)).data;
    expect(checked.ai_last_checked_at).not.toBeNull();
    expect(checked.ai_latest).toMatchObject({ engine: 'sandbox', mentioned: true, position: expect.any(Number), cited_urls: expect.arrayContaining([`${origin}/faq`]) });
    expect(Date.parse(checked.ai_next_check_at) - Date.parse(checked.ai_last_checked_at)).toBe(7 * DAY_MS);
    const off = (await send(key, 'PATCH', `/sites/${site.id}/questions/${question.id}`, { ai_monitored: false })).data;
    expect(off).toMatchObject({ ai_monitored: false, ai_next_check_at: null, ai_models: null });

    const many = Array.from({ length: 26 }, (_, index) => ({ question: `Monitored question ${index}?`, monitor_in_ai: true }));
    const first = (await send(key, 'POST', `/sites/${site.id}/questions`, { questions: many })).data;
    expect(first.ai_monitoring).toEqual({ limit: 25, monitored: 25, not_monitored: 1 });
    expect(first.questions[25].ai_monitored).toBe(false);
    expectError(await call(platform.app, 'PATCH', `${BASE}/sites/${site.id}/questions/${question.id}`, { key, body: { ai_monitored: true } }), 409, 'ai_monitor_limit_reached');
  });
});

const SITE = 'a1b5c8e2-2a4d-4b7e-9c1a-5d6e7f8a9b0c';
async function siteOf(key: string) {
  return (await call(platform.app, 'POST', `${BASE}/sites`, { key, body: { domain: 'sec.example' } })).json().data.id as string;
}
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.seo.manage',
  url: () => `${BASE}/sites`,
  body: () => ({ domain: `s${Math.random().toString(36).slice(2)}.example` }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.seo.view', url: () => `${BASE}/sites`, addressesOneRow: false });
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.seo.view', setup: siteOf, url: (id) => `${BASE}/sites/${id}`, addressesOneRow: true });
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.seo.view', setup: siteOf, url: (id) => `${BASE}/sites/${id}/questions`, addressesOneRow: true });
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.seo.manage',
  setup: siteOf,
  url: (id) => `${BASE}/sites/${id}/questions`,
  body: () => ({ questions: [{ question: 'Why?' }] }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.seo.view', setup: siteOf, url: (id) => `${BASE}/sites/${id}/competitors`, addressesOneRow: true });
describeRouteSecurity(() => platform, { method: 'DELETE', scope: 'service.seo.manage', setup: siteOf, url: (id) => `${BASE}/sites/${id}`, addressesOneRow: true });
void SITE;
