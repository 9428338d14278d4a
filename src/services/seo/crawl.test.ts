import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { JobRunner } from '../../platform/jobs/runner.js';
import { createOutboundHttp } from '../../platform/outbound/http.js';
import { createLogger } from '../../runtime.js';
import { crawl, CrawlError } from './crawler.js';
import { extractPage, faqEntries } from './html.js';
import { registerSeoJobs } from './index.js';
import { parseRobots } from './robots.js';

let platform: TestPlatform;
let runner: JobRunner;
/** Runs crawls with the outbound client as production has it: loopback refused. */
let strictRunner: JobRunner;
const servers: http.Server[] = [];
let origin: string;
const hits: string[] = [];

const ROBOTS = `# robots for the test site
User-agent: *
Disallow: /

User-agent: OtherBot
User-agent: PlatformSEOBot
Disallow: /no-bot
Allow: /no-bot/allowed
Disallow: /*.pdf$
`;

const html = (title: string, body: string) => `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;

const SITE: Record<string, { status?: number; headers?: Record<string, string>; body?: string }> = {
  '/robots.txt': { headers: { 'content-type': 'text/plain' }, body: ROBOTS },
  '/': {
    body: html(
      'Home',
      `<a href="/faq">FAQ</a> <a href="/faq#top">FAQ again</a> <a href="/no-bot/secret">secret</a> <a href="/no-bot/allowed">allowed</a>
       <a href="/file.pdf">pdf</a> <a href="/missing">broken</a> <a href="/old">old</a> <a href="/loop-a">loop</a>
       <a href="http://other.example/page">elsewhere</a> <a href="mailto:a@b.example">mail</a> <a href="/deep1">deep</a> <a href="/offsite">offsite</a>
       <a href="/nofollow" rel="nofollow">nofollow</a> <a href="/noindex">noindex</a>`,
    ),
  },
  '/faq': {
    body: `<html><head><title>FAQ &amp; help</title><meta name="description" content="Common questions"><script>var x = "<h2>Not a heading?</h2>";</script>
      <script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"FAQPage","mainEntity":[{"@type":"Question","name":"Can I pay by card?","acceptedAnswer":{"@type":"Answer","text":"<p>Yes, all major cards.</p>"}}]}]}</script></head>
      <body><!-- <h2>Commented out?</h2> --><h1>Help</h1><h2>How do I reset my password?</h2><p>Use the <b>reset</b> link on the login page.</p><h3>Opening hours</h3><p>9 to 5.</p></body></html>`,
  },
  '/no-bot/secret': { body: html('Secret', 'should not be read') },
  '/no-bot/allowed': { body: html('Allowed', 'readable') },
  '/file.pdf': { headers: { 'content-type': 'application/pdf' }, body: '%PDF' },
  '/old': { status: 301, headers: { location: '/new' } },
  '/new': { body: html('New page', 'moved here') },
  '/loop-a': { status: 302, headers: { location: '/loop-b' } },
  '/loop-b': { status: 302, headers: { location: '/loop-a' } },
  '/offsite': { status: 302, headers: { location: 'http://other.example/' } },
  '/deep1': { body: html('Deep 1', '<a href="/deep2">next</a>') },
  '/deep2': { body: html('Deep 2', '<a href="/deep3">next</a>') },
  '/deep3': { body: html('Deep 3', '<a href="/deep4">next</a>') },
  '/deep4': { body: html('Deep 4', 'end') },
  '/nofollow': { body: html('Nofollow', 'x') },
  '/noindex': { body: '<html><head><meta name="robots" content="noindex, nofollow"><title>Hidden</title></head><body><a href="/hidden-child">x</a></body></html>' },
  '/hidden-child': { body: html('Hidden child', 'x') },
};

async function serve(pages: typeof SITE): Promise<string> {
  const server = http.createServer((request, response) => {
    const path = request.url ?? '/';
    hits.push(path);
    const page = pages[path];
    if (!page) return void response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    response.writeHead(page.status ?? 200, { 'content-type': 'text/html; charset=utf-8', ...page.headers }).end(page.body ?? '');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  platform = await startTestPlatform(process.env.SEO_DEBUG ? { logger: createLogger('error') } : {});
  const deps = { db: platform.database.db, clock: platform.clock, events: platform.runtime.events };
  runner = new JobRunner({ ...deps, log: createLogger('silent') });
  registerSeoJobs({ ...deps, outbound: platform.runtime.outbound, jobs: runner });
  strictRunner = new JobRunner({ ...deps, log: createLogger('silent') });
  registerSeoJobs({ ...deps, outbound: createOutboundHttp({ connectTimeoutMs: 1000, totalTimeoutMs: 5000, allowPrivateTargets: false }), jobs: strictRunner });
  origin = await serve(SITE);
});
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  await platform.close();
});

const BASE = '/api/v1/services/seo';

async function send(key: string, method: string, path: string, body?: unknown, status = 200) {
  const response = await call(platform.app, method, `${BASE}${path}`, { key, ...(body === undefined ? {} : { body }) });
  expect(response.statusCode, response.body).toBe(status);
  return response.json().data;
}

describe('HTML extraction', () => {
  it('reads title, description, headings, questions, links and words, ignoring scripts and comments', () => {
    const page = extractPage(SITE['/faq']!.body!);
    expect(page.title).toBe('FAQ & help');
    expect(page.metaDescription).toBe('Common questions');
    expect(page.headings).toEqual([
      { level: 1, text: 'Help' },
      { level: 2, text: 'How do I reset my password?' },
      { level: 3, text: 'Opening hours' },
    ]);
    expect(page.questions).toEqual([
      { question: 'How do I reset my password?', answer: 'Use the reset link on the login page.', source: 'heading' },
      { question: 'Can I pay by card?', answer: 'Yes, all major cards.', source: 'faq_schema' },
    ]);
    expect(page.text).not.toContain('Not a heading');
    expect(page.text).not.toContain('Commented');
    expect(page.wordCount).toBe(page.text.split(' ').length);
  });

  it('survives broken markup and odd attributes', () => {
    const page = extractPage(
      `<title>A &#x27;quoted&#39; &unknown; title</title><a href=/x>x</a><a HREF='/y' >y<a href="/z" rel="nofollow">z<h2>Unclosed what is this<p>body <  text & more`,
    );
    expect(page.title).toBe("A 'quoted' &unknown; title");
    expect(page.links).toEqual(['/x', '/y']);
    expect(page.headings[0]!.text).toContain('Unclosed what is this');
    expect(extractPage('').title).toBeNull();
    expect(faqEntries('{not json')).toEqual([]);
    expect(faqEntries(JSON.stringify({ '@type': ['FAQPage'], mainEntity: { '@type': 'Question', name: 'Q?', acceptedAnswer: [{ text: 'A.' }] } }))).toEqual([
      { question: 'Q?', answer: 'A.', source: 'faq_schema' },
    ]);
  });
});

describe('robots.txt', () => {
  it('applies the group naming the crawler, else *, with the longest match and Allow on ties', () => {
    const robots = parseRobots(ROBOTS, 'PlatformSEOBot');
    expect(robots.isAllowed('/')).toBe(true);
    expect(robots.isAllowed('/no-bot')).toBe(false);
    expect(robots.isAllowed('/no-bot/secret')).toBe(false);
    expect(robots.isAllowed('/no-bot/allowed/page')).toBe(true);
    expect(robots.isAllowed('/file.pdf')).toBe(false);
    expect(robots.isAllowed('/file.pdf?x=1')).toBe(true);
    const other = parseRobots(ROBOTS, 'SomeoneElse');
    expect(other.isAllowed('/anything')).toBe(false);
    const tie = parseRobots('User-agent: *\nDisallow: /page\nAllow: /page\n', 'PlatformSEOBot');
    expect(tie.isAllowed('/page')).toBe(true);
    expect(parseRobots('User-agent: *\nDisallow:\n', 'PlatformSEOBot').isAllowed('/x')).toBe(true);
    expect(parseRobots('', 'PlatformSEOBot').isAllowed('/x')).toBe(true);
  });
});

describe('crawling a site on loopback', () => {
  it('records pages within robots.txt, follows same-host links and redirects, survives broken links and loops', async () => {
    const key = await (await platform.newTenant()).key();
    const site = await send(key, 'POST', '/sites', { domain: `${origin}/` }, 201);
    const queued = await send(key, 'POST', `/sites/${site.id}/crawl`, { max_depth: 2 }, 202);
    expect(queued).toMatchObject({ status: 'queued', competitor_id: null, budget: { max_pages: 50, max_depth: 2, max_seconds: 60 }, started_at: null });
    expect((await send(key, 'GET', `/sites/${site.id}`)).crawl_status).toBe('queued');
    expect(await send(key, 'POST', `/sites/${site.id}/crawl`, {}, 202)).toMatchObject({ id: queued.id });
    hits.length = 0;
    await runner.runDue();
    const done = await send(key, 'GET', `/sites/${site.id}/crawls/${queued.id}`);
    expect(done).toMatchObject({ status: 'completed', stop_reason: 'completed', error: null, started_at: expect.any(String), finished_at: expect.any(String) });
    const pages = await send(key, 'GET', `/sites/${site.id}/pages`);
    const byUrl = new Map(pages.map((page: { url: string }) => [page.url.slice(origin.length), page]));
    expect([...byUrl.keys()].sort()).toEqual(['/', '/deep1', '/deep2', '/faq', '/missing', '/new', '/no-bot/allowed']);
    expect(byUrl.get('/missing')).toMatchObject({ status_code: 404, title: null });
    expect(byUrl.get('/faq')).toMatchObject({ depth: 1, status_code: 200, title: 'FAQ & help', meta_description: 'Common questions', word_count: expect.any(Number) });
    expect((byUrl.get('/faq') as { questions: unknown[] }).questions).toHaveLength(2);
    expect(byUrl.get('/new')).toMatchObject({ depth: 1, title: 'New page' });
    expect(hits).not.toContain('/no-bot/secret');
    expect(hits).not.toContain('/file.pdf');
    expect(hits).not.toContain('/deep3'); // depth 3 > max_depth 2
    expect(hits).not.toContain('/hidden-child'); // nofollow meta
    expect(hits).not.toContain('/nofollow'); // rel=nofollow link
    expect(hits).toContain('/noindex'); // read, but not recorded
    expect(hits.filter((path) => path === '/loop-a')).toHaveLength(1);
    expect(hits.filter((path) => path === '/faq')).toHaveLength(1);
    expect(done.progress).toEqual({ pages_crawled: 7, pages_failed: 3, urls_blocked: 2, urls_queued: expect.any(Number) });
    const updated = await send(key, 'GET', `/sites/${site.id}`);
    expect(updated).toMatchObject({ crawl_status: 'completed', page_count: 6, last_crawled_at: expect.any(String) });
    expect((await send(key, 'GET', `/sites/${site.id}/crawls`)).map((row: { id: string }) => row.id)).toEqual([queued.id]);
  });

  it('honours the page budget, and reads a site given without a scheme over http when https cannot be reached', async () => {
    const key = await (await platform.newTenant()).key();
    const site = await send(key, 'POST', '/sites', { domain: origin.slice('http://'.length) }, 201);
    expect(site.start_url).toBe(`https://${origin.slice('http://'.length)}/`);
    const queued = await send(key, 'POST', `/sites/${site.id}/crawl`, { max_pages: 3 }, 202);
    await runner.runDue();
    const done = await send(key, 'GET', `/sites/${site.id}/crawls/${queued.id}`);
    expect(done).toMatchObject({ status: 'completed', stop_reason: 'max_pages' });
    expect(done.progress.pages_crawled + done.progress.pages_failed).toBe(3);
    expect((await send(key, 'GET', `/sites/${site.id}/pages`))[0].url).toBe(`${origin}/`);
  });

  it('honours the time budget', async () => {
    let now = 0;
    const outcome = await crawl({
      startUrl: `${origin}/`,
      budget: { maxPages: 50, maxDepth: 5, maxSeconds: 1 },
      http: platform.runtime.outbound,
      elapsedMs: () => (now += 150),
    });
    expect(outcome.stopReason).toBe('time_budget');
    expect(outcome.progress.pagesCrawled).toBeLessThan(5);
  });

  it('refuses a loopback target when ALLOW_PRIVATE_TARGETS is not set', async () => {
    await expect(
      crawl({
        startUrl: `${origin}/`,
        budget: { maxPages: 5, maxDepth: 1, maxSeconds: 10 },
        http: createOutboundHttp({ connectTimeoutMs: 1000, totalTimeoutMs: 5000, allowPrivateTargets: false }),
        elapsedMs: () => 0,
      }),
    ).rejects.toBeInstanceOf(CrawlError);
    const key = await (await platform.newTenant()).key();
    const site = await send(key, 'POST', '/sites', { domain: `${origin}/` }, 201);
    const queued = await send(key, 'POST', `/sites/${site.id}/crawl`, undefined, 202);
    hits.length = 0;
    await strictRunner.runDue();
    const failed = await send(key, 'GET', `/sites/${site.id}/crawls/${queued.id}`);
    expect(failed).toMatchObject({ status: 'failed', error: expect.stringContaining('not a public address') });
    expect(hits).toEqual([]);
    expect((await send(key, 'GET', `/sites/${site.id}`)).crawl_status).toBe('failed');
  });

  it('answers unknown crawls, competitors and sites with 404 and bad budgets with 400', async () => {
    const key = await (await platform.newTenant()).key();
    const site = await send(key, 'POST', '/sites', { domain: 'example.com' }, 201);
    const unknown = '3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c';
    expectError(await call(platform.app, 'GET', `${BASE}/sites/${site.id}/crawls/${unknown}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'POST', `${BASE}/sites/${site.id}/competitors/${unknown}/crawl`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'POST', `${BASE}/sites/${unknown}/crawl`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/sites/${site.id}/pages?competitor_id=${unknown}`, { key }), 404, 'not_found');
    for (const body of [{ max_pages: 0 }, { max_pages: 501 }, { max_depth: 11 }, { max_seconds: 0 }, { max_seconds: 1.5 }, { budget: 1 }]) {
      expectError(await call(platform.app, 'POST', `${BASE}/sites/${site.id}/crawl`, { key, body }), 400, 'validation_failed');
    }
  });
});
