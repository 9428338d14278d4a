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
    expect(tenant).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Acme Ltd', created_at: expect.stringMatching(/\.\d{3}Z$/), key_count: 0 });
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

describe('operator API: finding and renaming tenants', () => {
  type TenantJson = { id: string; name: string; created_at: string; key_count: number };

  /** Every tenant, page by page: on PostgreSQL other test files share the database and make tenants at later clock times. */
  async function allTenants(): Promise<TenantJson[]> {
    const listed: TenantJson[] = [];
    for (let offset = 0; ; offset += 200) {
      const page = (await call(platform.app, 'GET', `/admin/v1/tenants?limit=200&offset=${offset}`, { headers: operator })).json();
      listed.push(...(page.data as TenantJson[]));
      if (!page.meta.has_more) return listed;
    }
  }

  async function createKey(tenantId: string) {
    const response = await call(platform.app, 'POST', `/admin/v1/tenants/${tenantId}/api-keys`, { headers: operator, body: { mode: 'test', scopes: ['*'] } });
    expect(response.statusCode).toBe(201);
    return response.json().data as { id: string; key: string };
  }

  it('lists tenants newest first with their active key count, paginated like every list', async () => {
    const older = await createTenant('List older');
    platform.clock.advance(1000);
    const newer = await createTenant('List newer');
    await createKey(newer.id);
    const revoked = await createKey(newer.id);
    await call(platform.app, 'DELETE', `/admin/v1/api-keys/${revoked.id}`, { headers: operator });

    const first = await call(platform.app, 'GET', '/admin/v1/tenants?limit=1', { headers: operator });
    expect(first.statusCode).toBe(200);
    const total = first.json().meta.total as number;
    expect(total).toBeGreaterThanOrEqual(2);
    expect(first.json()).toEqual({ data: [expect.any(Object)], meta: { limit: 1, offset: 0, total, has_more: true } });

    const listed = await allTenants();
    expect(listed).toHaveLength(total);
    const createdTimes = listed.map((tenant) => Date.parse(tenant.created_at));
    expect(createdTimes).toEqual([...createdTimes].sort((a, b) => b - a));
    const newerAt = listed.findIndex((tenant) => tenant.id === newer.id);
    const olderAt = listed.findIndex((tenant) => tenant.id === older.id);
    expect(newerAt).toBeGreaterThanOrEqual(0);
    expect(olderAt).toBeGreaterThan(newerAt);
    expect(listed[newerAt]).toEqual({ ...newer, key_count: 1 });
    expect(listed[olderAt]).toEqual({ ...older, key_count: 0 });

    const second = await call(platform.app, 'GET', `/admin/v1/tenants?limit=1&offset=${olderAt}`, { headers: operator });
    expect(second.json().data).toEqual([{ ...older, key_count: 0 }]);

    const all = await call(platform.app, 'GET', '/admin/v1/tenants', { headers: operator });
    expect(all.json().meta).toMatchObject({ limit: 50, offset: 0 });
    const past = await call(platform.app, 'GET', `/admin/v1/tenants?offset=${total}`, { headers: operator });
    expect(past.json()).toEqual({ data: [], meta: { limit: 50, offset: total, total, has_more: false } });
  });

  it('refuses a limit out of range', async () => {
    expectError(await call(platform.app, 'GET', '/admin/v1/tenants?limit=0', { headers: operator }), 400, 'validation_failed');
    expectError(await call(platform.app, 'GET', '/admin/v1/tenants?limit=201', { headers: operator }), 400, 'validation_failed');
  });

  it('gets one tenant and renames it (trimmed)', async () => {
    const tenant = await createTenant('Before');
    await createKey(tenant.id);
    const got = await call(platform.app, 'GET', `/admin/v1/tenants/${tenant.id}`, { headers: operator });
    expect(got.json().data).toEqual({ ...tenant, key_count: 1 });

    const renamed = await call(platform.app, 'PATCH', `/admin/v1/tenants/${tenant.id}`, { headers: operator, body: { name: '  After Ltd ' } });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json().data).toEqual({ ...tenant, name: 'After Ltd', key_count: 1 });
    const again = (await call(platform.app, 'GET', `/admin/v1/tenants/${tenant.id}`, { headers: operator })).json().data as TenantJson;
    expect(again.name).toBe('After Ltd');
  });

  it.each([
    ['no name', {}, 'name'],
    ['a blank name', { name: '   ' }, 'name'],
    ['a name over 200 characters', { name: 'x'.repeat(201) }, 'name'],
    ['a name with a line break', { name: 'Two\nlines' }, 'name'],
    ['a name with a tab', { name: 'Tab\there' }, 'name'],
    ['a name that is not a string', { name: 42 }, 'name'],
    ['an unknown field', { name: 'Fine', slug: 'fine' }, 'slug'],
  ])('refuses a rename with %s', async (_label, body, path) => {
    const tenant = await createTenant('Keeps its name');
    const error = expectError(await call(platform.app, 'PATCH', `/admin/v1/tenants/${tenant.id}`, { headers: operator, body }), 400, 'validation_failed');
    expect(error.details.map((detail) => detail.path)).toContain(path);
    expect((await call(platform.app, 'GET', `/admin/v1/tenants/${tenant.id}`, { headers: operator })).json().data.name).toBe('Keeps its name');
  });

  it('refuses a blank tenant name on create too', async () => {
    expectError(await call(platform.app, 'POST', '/admin/v1/tenants', { headers: operator, body: { name: ' \t ' } }), 400, 'validation_failed');
  });

  it('answers an unknown or malformed tenant id with 404', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    expectError(await call(platform.app, 'GET', `/admin/v1/tenants/${unknown}`, { headers: operator }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', '/admin/v1/tenants/not-a-uuid', { headers: operator }), 404, 'not_found');
    expectError(await call(platform.app, 'PATCH', `/admin/v1/tenants/${unknown}`, { headers: operator, body: { name: 'x' } }), 404, 'not_found');
  });

  it('refuses the tenant routes without the operator token', async () => {
    const tenant = await createTenant();
    expectError(await call(platform.app, 'GET', '/admin/v1/tenants'), 401, 'unauthorized');
    expectError(await call(platform.app, 'GET', `/admin/v1/tenants/${tenant.id}`, { headers: { authorization: 'Bearer wrong-token-0123456789' } }), 401, 'unauthorized');
    expectError(await call(platform.app, 'PATCH', `/admin/v1/tenants/${tenant.id}`, { body: { name: 'x' } }), 401, 'unauthorized');
  });

  it('finds a tenant after every key is lost: revoke all, list, mint a new key that works', async () => {
    const tenant = await createTenant('Lost keys Ltd');
    const keys = [await createKey(tenant.id), await createKey(tenant.id)];
    for (const key of keys) await call(platform.app, 'DELETE', `/admin/v1/api-keys/${key.id}`, { headers: operator });
    expectError(await call(platform.app, 'GET', '/api/v1/services/crm/contacts', { key: keys[0]!.key }), 401, 'unauthorized');

    const found = (await allTenants()).find((row) => row.id === tenant.id);
    expect(found).toEqual({ ...tenant, key_count: 0 });

    const fresh = await createKey(found!.id);
    expect((await call(platform.app, 'GET', '/api/v1/services/crm/contacts', { key: fresh.key })).statusCode).toBe(200);
  });
});

describe('without ADMIN_TOKEN', () => {
  // A second platform starts in a hook (whose timeout allows for a busy machine), not in the test.
  let bare: TestPlatform;
  beforeAll(async () => {
    bare = await startTestPlatform({ env: { ADMIN_TOKEN: undefined } });
  });
  afterAll(() => bare.close());

  it('does not mount the operator API at all', async () => {
    expectError(await call(bare.app, 'POST', '/admin/v1/tenants', { headers: operator, body: { name: 'x' } }), 404, 'not_found');
  });
});

describe('health probes', () => {
  it('answers /healthz and /readyz without auth', async () => {
    expect((await call(platform.app, 'GET', '/healthz')).json()).toEqual({ status: 'ok' });
    expect((await call(platform.app, 'GET', '/readyz')).json()).toEqual({ status: 'ready' });
  });
});
