import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, http, startServerProcess, type ServerProcess } from './server-process.js';
import { testDatabaseUrl } from '../database.js';
import { WebhookReceiver } from '../fakes/webhook-receiver.js';

const databaseUrl = testDatabaseUrl();
const redisUrl = process.env.REDIS_URL;
const ADMIN_TOKEN = 'two-process-admin-token-0123456789';

// Several API processes need a shared PostgreSQL and Redis; the embedded database is one process's.
describe.runIf(databaseUrl && redisUrl)('two API processes on one PostgreSQL and one Redis', () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let receiver: WebhookReceiver;
  const operator = { authorization: `Bearer ${ADMIN_TOKEN}` };

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    // The webhook receiver listens on 127.0.0.1.
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
      ALLOW_PRIVATE_TARGETS: 'true',
    };
    await buildServer();
    [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  }, 120_000);
  afterAll(async () => {
    const codes = await Promise.all([a?.stop(), b?.stop()]);
    await receiver?.close();
    expect(codes).toEqual([0, 0]);
  });

  async function newKey(rateLimitPerMinute: number): Promise<{ id: string; key: string }> {
    const tenant = (await http(a.baseUrl, 'POST', '/admin/v1/tenants', { headers: operator, body: { name: 'two processes' } })).json().data;
    const created = await http(a.baseUrl, 'POST', `/admin/v1/tenants/${tenant.id}/api-keys`, {
      headers: operator,
      body: { mode: 'test', scopes: ['*'], rate_limit_per_minute: rateLimitPerMinute },
    });
    return created.json().data;
  }

  it('enforces one rate limit per key across both processes', async () => {
    // Stay inside one minute window so the count cannot reset half-way.
    const secondsLeft = 60 - (Math.floor(Date.now() / 1000) % 60);
    if (secondsLeft < 10) await new Promise((resolve) => setTimeout(resolve, secondsLeft * 1000 + 200));
    const { key } = await newKey(10);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      statuses.push((await http(i % 2 === 0 ? a.baseUrl : b.baseUrl, 'GET', '/api/v1/services/crm/contacts', { key })).status);
    }
    expect(statuses).toEqual(Array(10).fill(200));
    const overA = await http(a.baseUrl, 'GET', '/api/v1/services/crm/contacts', { key });
    const overB = await http(b.baseUrl, 'GET', '/api/v1/services/crm/contacts', { key });
    expect([overA.status, overB.status]).toEqual([429, 429]);
    expect(Number(overB.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(overB.json().error.code).toBe('rate_limited');
  });

  it('acts once for one Idempotency-Key sent to both processes at the same time', async () => {
    const { key } = await newKey(1000);
    const headers = { 'idempotency-key': 'both-processes' };
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => http(i % 2 === 0 ? a.baseUrl : b.baseUrl, 'POST', '/api/v1/services/crm/contacts', { key, headers, body: { name: 'Exactly once' } })),
    );
    for (const response of responses) expect([201, 409]).toContain(response.status);
    const list = await http(b.baseUrl, 'GET', '/api/v1/services/crm/contacts', { key });
    expect(list.json().meta.total).toBe(1);
    const replay = await http(a.baseUrl, 'POST', '/api/v1/services/crm/contacts', { key, headers, body: { name: 'Exactly once' } });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.json().data.id).toBe(list.json().data[0].id);
  });

  it('revokes a key on the other process within 5 seconds, although it is cached there', async () => {
    const { id, key } = await newKey(1000);
    expect((await http(b.baseUrl, 'GET', '/api/v1/services/crm/contacts', { key })).status).toBe(200); // cached on b
    expect((await http(a.baseUrl, 'DELETE', `/admin/v1/api-keys/${id}`, { headers: operator })).status).toBe(200);
    const revokedAt = Date.now();
    expect((await http(a.baseUrl, 'GET', '/api/v1/services/crm/contacts', { key })).status).toBe(401);
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 5_000) {
      status = (await http(b.baseUrl, 'GET', '/api/v1/services/crm/contacts', { key })).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(5_000);
  });

  it('sends each outreach step exactly once, both processes running the scheduler', async () => {
    const { key } = await newKey(10_000);
    const S = '/api/v1/services/outreach';
    const now = { amount: 0, unit: 'minutes' };
    const sequence = await http(a.baseUrl, 'POST', `${S}/sequences`, {
      key,
      body: {
        name: 'Both processes',
        steps: [
          { body: 'One', delay: now },
          { body: 'Two', delay: now },
          { body: 'Three', delay: now },
        ],
      },
    });
    expect(sequence.status).toBe(201);
    const id = sequence.json().data.id as string;
    const batch = (from: number) => Array.from({ length: 10 }, (_, i) => ({ address: `+1415555${1000 + from + i}` }));
    const enrolled = await Promise.all([
      http(a.baseUrl, 'POST', `${S}/sequences/${id}/enrollments`, { key, body: { enrollments: batch(0) } }),
      http(b.baseUrl, 'POST', `${S}/sequences/${id}/enrollments`, { key, body: { enrollments: batch(10) } }),
    ]);
    expect(enrolled.map((response) => response.status)).toEqual([201, 201]);
    const sent = async () => (await http(b.baseUrl, 'GET', `${S}/messages?direction=outbound&sequence_id=${id}&limit=1`, { key })).json().meta.total as number;
    const deadline = Date.now() + 30_000;
    while ((await sent()) < 60 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // time for a second send to show up, if any
    expect(await sent()).toBe(60);
    const completed = await http(a.baseUrl, 'GET', `${S}/sequences/${id}/enrollments?status=completed`, { key });
    expect(completed.json().meta.total).toBe(20);
  });

  it('delivers each event exactly once to a receiver that counts, both processes dispatching', async () => {
    const { key } = await newKey(10_000);
    const url = receiver.newUrl();
    const endpoint = await http(a.baseUrl, 'POST', '/api/v1/services/webhooks/endpoints', { key, body: { url, enabled_events: ['crm.*'] } });
    expect(endpoint.status).toBe(201);
    const created = await Promise.all(
      Array.from({ length: 40 }, (_, i) => http(i % 2 === 0 ? a.baseUrl : b.baseUrl, 'POST', '/api/v1/services/crm/contacts', { key, body: { name: `Contact ${i}` } })),
    );
    for (const response of created) expect(response.status).toBe(201);
    const deadline = Date.now() + 20_000;
    while (receiver.receivedAt(url).length < 40 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // time for a duplicate to show up, if any
    const received = receiver.receivedAt(url);
    expect(received).toHaveLength(40);
    expect(new Set(received.map((request) => request.headers['webhook-id'])).size).toBe(40);
    const contactIds = new Set(created.map((response) => response.json().data.id as string));
    for (const request of received) expect(contactIds.has(JSON.parse(request.body).data.object.id)).toBe(true);
  });
});
