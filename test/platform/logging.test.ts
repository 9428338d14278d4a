import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestPlatform, type TestPlatform } from '../harness.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform({ logger: pino({ level: 'info' }, sink) });
});
afterAll(() => platform.close());

describe('request logs', () => {
  it('writes one line per request with request id, tenant, route and status', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    lines.length = 0;
    await call(platform.app, 'GET', '/api/v1/services/crm/contacts?limit=5', { key, headers: { 'x-request-id': 'log-check-1' } });
    const entries = lines.map((line) => JSON.parse(line)).filter((entry) => entry.request_id === 'log-check-1');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      msg: 'request',
      request_id: 'log-check-1',
      tenant_id: tenant.id,
      mode: 'test',
      method: 'GET',
      route: '/api/v1/services/crm/contacts',
      status: 200,
    });
  });

  it('never writes API keys, admin tokens or Authorization headers, on success or failure', async () => {
    const key = await (await platform.newTenant()).key();
    lines.length = 0;
    await call(platform.app, 'GET', '/api/v1/services/crm/contacts', { key });
    await call(platform.app, 'POST', '/api/v1/services/crm/contacts', { key, body: '{broken', invalid: true });
    await call(platform.app, 'GET', '/api/v1/services/crm/contacts', { key: `sk_test_${'Z'.repeat(32)}` });
    await call(platform.app, 'POST', '/admin/v1/tenants', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: { name: 'logged?' } });
    const created = await call(platform.app, 'POST', `/admin/v1/tenants/${(await platform.newTenant()).id}/api-keys`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: { mode: 'test', scopes: ['*'] },
    });
    const everything = lines.join('\n');
    expect(lines.length).toBeGreaterThanOrEqual(5);
    expect(everything).not.toContain(key);
    expect(everything).not.toContain(key.slice(8));
    expect(everything).not.toContain('Z'.repeat(32));
    expect(everything).not.toContain(ADMIN_TOKEN);
    expect(everything).not.toContain(created.json().data.key);
    expect(everything.toLowerCase()).not.toContain('authorization');
    expect(everything).not.toContain('Bearer');
  });
});
