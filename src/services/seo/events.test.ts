import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { asJson, recordedEvents } from '../../../test/recorded-events.js';
import { JobRunner } from '../../platform/jobs/runner.js';
import { createLogger } from '../../runtime.js';
import { registerSeoJobs } from './index.js';

let platform: TestPlatform;
let runner: JobRunner;
let server: http.Server;
let origin: string;
beforeAll(async () => {
  platform = await startTestPlatform();
  runner = new JobRunner({ db: platform.database.db, clock: platform.clock, log: createLogger('silent') });
  registerSeoJobs({ db: platform.database.db, clock: platform.clock, events: platform.runtime.events, outbound: platform.runtime.outbound, jobs: runner });
  server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' }).end('<title>Shipping</title><h2>How long does shipping take?</h2><p>Two days at most.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await platform.close();
});

const BASE = '/api/v1/services/seo';

async function send(key: string, method: string, path: string, body?: unknown, status = 200, headers: Record<string, string> = {}) {
  const response = await call(platform.app, method, `${BASE}${path}`, { key, headers, ...(body === undefined ? {} : { body }) });
  expect(response.statusCode, response.body).toBe(status);
  return response.json().data;
}

async function newTenant() {
  const tenant = await platform.newTenant();
  return { tenantId: tenant.id, key: await tenant.key() };
}

/** Exactly `count` events of `type`, the newest deep-equal to `current` (what GET shows now). */
async function expectEvents(tenantId: string, type: string, current: unknown, count = 1) {
  const recorded = await recordedEvents(platform, tenantId, type);
  expect(recorded, type).toHaveLength(count);
  if (count > 0 && current !== undefined) expect(asJson(recorded[0]!.data.object)).toEqual(asJson(current));
}

describe('seo events', () => {
  it('records site created, updated and deleted once each, as GET shows the site', async () => {
    const { tenantId, key } = await newTenant();
    const idempotency = { 'idempotency-key': '9a1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c' };
    const site = await send(key, 'POST', '/sites', { domain: 'events.example' }, 201, idempotency);
    await send(key, 'POST', '/sites', { domain: 'events.example' }, 201, idempotency);
    await expectEvents(tenantId, 'seo.site.created', await send(key, 'GET', `/sites/${site.id}`));
    expectError(await call(platform.app, 'POST', `${BASE}/sites`, { key, body: { domain: 'events.example' } }), 409, 'conflict');
    await expectEvents(tenantId, 'seo.site.created', undefined);
    const updated = await send(key, 'PATCH', `/sites/${site.id}`, { name: 'Renamed' });
    await expectEvents(tenantId, 'seo.site.updated', updated);
    await send(key, 'DELETE', `/sites/${site.id}`);
    await expectEvents(tenantId, 'seo.site.deleted', updated);
  });

  it('records a question once when added, updated when reopened, not for a repeat, deleted once', async () => {
    const { tenantId, key } = await newTenant();
    const site = await send(key, 'POST', '/sites', { domain: 'q.example' }, 201);
    const [question] = (await send(key, 'POST', `/sites/${site.id}/questions`, { questions: [{ question: 'Why?' }] })).questions;
    await expectEvents(tenantId, 'seo.question.created', question);
    await send(key, 'POST', `/sites/${site.id}/questions`, { questions: [{ question: 'why' }] });
    await expectEvents(tenantId, 'seo.question.created', question);
    await expectEvents(tenantId, 'seo.question.updated', undefined, 0);
    const ignored = await send(key, 'PATCH', `/sites/${site.id}/questions/${question.id}`, { status: 'ignored' });
    await expectEvents(tenantId, 'seo.question.updated', ignored);
    const [reopened] = (await send(key, 'POST', `/sites/${site.id}/questions`, { questions: [{ question: 'WHY?' }] })).questions;
    expect(reopened.status).toBe('open');
    await expectEvents(tenantId, 'seo.question.updated', reopened, 2);
    await send(key, 'DELETE', `/sites/${site.id}/questions/${question.id}`);
    await expectEvents(tenantId, 'seo.question.deleted', reopened);
  });

  it('records crawl queued and completed, the site updated, topics rebuilt and competitor created/deleted', async () => {
    const { tenantId, key } = await newTenant();
    const site = await send(key, 'POST', '/sites', { domain: `${origin}/` }, 201);
    const crawl = await send(key, 'POST', `/sites/${site.id}/crawl`, { max_pages: 2 }, 202);
    await expectEvents(tenantId, 'seo.crawl.queued', crawl);
    await runner.runDue();
    await expectEvents(tenantId, 'seo.crawl.completed', await send(key, 'GET', `/sites/${site.id}/crawls/${crawl.id}`));
    await expectEvents(tenantId, 'seo.site.updated', await send(key, 'GET', `/sites/${site.id}`));
    await send(key, 'POST', `/sites/${site.id}/search-data`, { rows: [{ query: 'shipping', page: `${origin}/`, impressions: 3, clicks: 1, position: 1.5, date: '2026-10-01' }] });
    await expectEvents(tenantId, 'seo.topics.rebuilt', await send(key, 'GET', `/sites/${site.id}`));
    const competitor = await send(key, 'POST', `/sites/${site.id}/competitors`, { domain: 'rival.example' }, 201);
    await expectEvents(tenantId, 'seo.competitor.created', competitor);
    await send(key, 'DELETE', `/sites/${site.id}/competitors/${competitor.id}`);
    await expectEvents(tenantId, 'seo.competitor.deleted', competitor);
  });
});
