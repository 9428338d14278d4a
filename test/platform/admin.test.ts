import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, expectError, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const operator = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function createTenant(name = 'Acme') {
  const response = await call(platform.app, 'POST', '/admin/v1/tenants', { headers: operator, body: { name } });
  expect(response.statusCode).toBe(201);
  return response.json().data as { id: string; name: string; created_at: string };
}

describe('operator API', () => {
  it('creates a tenant', async () => {
    const tenant = await createTenant('  Acme Ltd ');
    expect(tenant).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Acme Ltd', created_at: expect.stringMatching(/\.\d{3}Z$/) });
  });

  it('creates a key whose secret is shown once and only its hash is stored', async () => {
    const tenant = await createTenant();
    const response = await call(platform.app, 'POST', `/admin/v1/tenants/${tenant.id}/api-keys`, {
      headers: operator,
      body: { mode: 'live', scopes: ['service.crm.view', 'service.forms.*'], rate_limit_per_minute: 120, name: 'backend' },
    });
    expect(response.statusCode).toBe(201);
    const created = response.json().data;
    expect(Object.keys(created).sort()).toEqual(['created_at', 'id', 'key', 'mode', 'name', 'rate_limit_per_minute', 'scopes']);
    expect(created).toMatchObject({ mode: 'live', scopes: ['service.crm.view', 'service.forms.*'], rate_limit_per_minute: 120, name: 'backend' });
    expect(created.key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);

    const stored = await platform.database.db.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(created.key);
    expect(stored.key_hash).toMatch(/^[0-9a-f]{64}$/);

    const list = await call(platform.app, 'GET', `/admin/v1/tenants/${tenant.id}/api-keys`, { headers: operator });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(created.key);
    expect(list.json().data[0]).toMatchObject({ id: created.id, key_prefix: created.key.slice(0, 12), revoked_at: null });
    expect(list.json().meta).toEqual({ limit: 50, offset: 0, total: 1, has_more: false });
  });

  it('defaults the rate limit to 60 and the name to null', async () => {
    const tenant = await createTenant();
    const created = (await call(platform.app, 'POST', `/admin/v1/tenants/${tenant.id}/api-keys`, { headers: operator, body: { mode: 'test', scopes: ['*'] } })).json().data;
    expect(created).toMatchObject({ rate_limit_per_minute: 60, name: null });
    expect(created.key).toMatch(/^sk_test_/);
  });

  it('revokes a key, and revoking again is harmless', async () => {
    const tenant = await createTenant();
    const created = (await call(platform.app, 'POST', `/admin/v1/tenants/${tenant.id}/api-keys`, { headers: operator, body: { mode: 'test', scopes: ['*'] } })).json().data;
    const first = await call(platform.app, 'DELETE', `/admin/v1/api-keys/${created.id}`, { headers: operator });
    expect(first.statusCode).toBe(200);
    expect(first.json().data.revoked_at).toMatch(/Z$/);
    const again = await call(platform.app, 'DELETE', `/admin/v1/api-keys/${created.id}`, { headers: operator });
    expect(again.json().data.revoked_at).toBe(first.json().data.revoked_at);
  });

  it.each([
    ['an unknown scope name', { mode: 'test', scopes: ['service.nope.view'] }, 'scopes[0]'],
    ['a malformed scope', { mode: 'test', scopes: ['crm:view'] }, 'scopes[0]'],
    ['no scopes', { mode: 'test', scopes: [] }, 'scopes'],
    ['a bad mode', { mode: 'prod', scopes: ['*'] }, 'mode'],
    ['a zero rate limit', { mode: 'test', scopes: ['*'], rate_limit_per_minute: 0 }, 'rate_limit_per_minute'],
    ['a fractional rate limit', { mode: 'test', scopes: ['*'], rate_limit_per_minute: 1.5 }, 'rate_limit_per_minute'],
  ])('refuses a key with %s', async (_label, body, path) => {
    const tenant = await createTenant();
    const error = expectError(await call(platform.app, 'POST', `/admin/v1/tenants/${tenant.id}/api-keys`, { headers: operator, body }), 400, 'validation_failed');
    expect(error.details.map((detail) => detail.path)).toContain(path);
  });

  it('answers unknown tenants and keys with 404', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    expectError(await call(platform.app, 'POST', `/admin/v1/tenants/${unknown}/api-keys`, { headers: operator, body: { mode: 'test', scopes: ['*'] } }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `/admin/v1/tenants/not-a-uuid/api-keys`, { headers: operator }), 404, 'not_found');
    expectError(await call(platform.app, 'DELETE', `/admin/v1/api-keys/${unknown}`, { headers: operator }), 404, 'not_found');
  });

  it('refuses an API key as the operator token', async () => {
    const key = await (await platform.newTenant()).key();
    expectError(await call(platform.app, 'POST', '/admin/v1/tenants', { key, body: { name: 'x' } }), 401, 'unauthorized');
  });
});

describe('without ADMIN_TOKEN', () => {
  it('does not mount the operator API at all', async () => {
    const bare = await startTestPlatform({ env: { ADMIN_TOKEN: undefined } });
    try {
      expectError(await call(bare.app, 'POST', '/admin/v1/tenants', { headers: operator, body: { name: 'x' } }), 404, 'not_found');
    } finally {
      await bare.close();
    }
  });
});

describe('health probes', () => {
  it('answers /healthz and /readyz without auth', async () => {
    expect((await call(platform.app, 'GET', '/healthz')).json()).toEqual({ status: 'ok' });
    expect((await call(platform.app, 'GET', '/readyz')).json()).toEqual({ status: 'ready' });
  });
});
