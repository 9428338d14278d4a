import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, expectError, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const LIST = '/api/v1/services/crm/contacts';

describe('API key authentication', () => {
  it('accepts a valid key', async () => {
    const key = await (await platform.newTenant()).key();
    const response = await call(platform.app, 'GET', LIST, { key });
    expect(response.statusCode).toBe(200);
  });

  it.each([
    ['no Authorization header', {}],
    ['a non-Bearer scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['Bearer without a token', { authorization: 'Bearer' }],
    ['a token that is not an API key', { authorization: 'Bearer not-a-key' }],
    ['a customer-auth style session token', { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' }],
    ['an opaque 64-hex session token', { authorization: `Bearer ${'ab'.repeat(32)}` }],
    ['a well-formed but unknown key', { authorization: `Bearer sk_test_${'A'.repeat(32)}` }],
    ['a key with a wrong prefix', { authorization: `Bearer pk_test_${'A'.repeat(32)}` }],
  ])('refuses %s with 401 unauthorized and WWW-Authenticate', async (_label, headers) => {
    const response = await call(platform.app, 'GET', LIST, { headers });
    expectError(response, 401, 'unauthorized');
    expect(response.headers['www-authenticate']).toBe('Bearer');
    expect(response.headers['service-request-id']).toBeTruthy();
  });

  it('refuses a revoked key at once on the process that revoked it', async () => {
    const tenant = await platform.newTenant();
    const created = await call(platform.app, 'POST', `/admin/v1/tenants/${tenant.id}/api-keys`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: { mode: 'test', scopes: ['*'] },
    });
    const { id, key } = created.json().data as { id: string; key: string };
    expect((await call(platform.app, 'GET', LIST, { key })).statusCode).toBe(200); // now cached
    const revoked = await call(platform.app, 'DELETE', `/admin/v1/api-keys/${id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(revoked.statusCode).toBe(200);
    expectError(await call(platform.app, 'GET', LIST, { key }), 401, 'unauthorized');
  });

  it('never accepts the admin token as an API key', async () => {
    expectError(await call(platform.app, 'GET', LIST, { key: ADMIN_TOKEN }), 401, 'unauthorized');
  });
});

describe('scopes', () => {
  it('answers 403 insufficient_scope naming the scope needed', async () => {
    const key = await (await platform.newTenant()).key({ scopes: ['service.crm.view'] });
    const response = await call(platform.app, 'POST', LIST, { key, body: { name: 'Ada' } });
    const error = expectError(response, 403, 'insufficient_scope');
    expect(error.details).toEqual([expect.objectContaining({ scope: 'service.crm.manage' })]);
    expect(error.message).toContain('service.crm.manage');
  });

  it('does not let manage imply view', async () => {
    const key = await (await platform.newTenant()).key({ scopes: ['service.crm.manage'] });
    expectError(await call(platform.app, 'GET', LIST, { key }), 403, 'insufficient_scope');
  });

  it.each([['*'], ['service.crm.*']])('lets %s grant every crm scope', async (scope) => {
    const key = await (await platform.newTenant()).key({ scopes: [scope] });
    expect((await call(platform.app, 'GET', LIST, { key })).statusCode).toBe(200);
    expect((await call(platform.app, 'POST', LIST, { key, body: { name: 'Ada' } })).statusCode).toBe(201);
  });

  it("does not let another service's wildcard grant crm", async () => {
    const key = await (await platform.newTenant()).key({ scopes: ['service.forms.*'] });
    expectError(await call(platform.app, 'GET', LIST, { key }), 403, 'insufficient_scope');
  });

  it('checks authentication before scope, and counts refused requests against the rate limit', async () => {
    const key = await (await platform.newTenant()).key({ scopes: ['service.forms.view'], rateLimitPerMinute: 5 });
    const response = await call(platform.app, 'GET', LIST, { key });
    expectError(response, 403, 'insufficient_scope');
    expect(response.headers['x-ratelimit-remaining']).toBe('4');
  });
});
