import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
let key: string;
beforeAll(async () => {
  platform = await startTestPlatform();
  key = await (await platform.newTenant()).key();
});
afterAll(() => platform.close());

const CRM = '/api/v1/services/crm';

async function create(url: string, body: Record<string, unknown>): Promise<{ id: string; updated_at: string }> {
  const response = await call(platform.app, 'POST', url, { key, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

async function contactUrl(): Promise<string> {
  return `${CRM}/contacts/${(await create(`${CRM}/contacts`, { name: 'Ada Lovelace', email: 'ada@example.com' })).id}`;
}

describe('ETag on GET of one resource', () => {
  it('is a strong tag on GET of one resource of several services, and stable while it does not change', async () => {
    const company = await create(`${CRM}/companies`, { name: 'Analytical Engines' });
    const post = await create('/api/v1/services/blogs/posts', { title: 'Notes' });
    const form = await create('/api/v1/services/forms/forms', { name: 'Contact us' });
    for (const url of [await contactUrl(), `${CRM}/companies/${company.id}`, `/api/v1/services/blogs/posts/${post.id}`, `/api/v1/services/forms/forms/${form.id}`]) {
      const first = await call(platform.app, 'GET', url, { key });
      expect(first.statusCode).toBe(200);
      expect(first.headers.etag, url).toMatch(/^"[\w-]+"$/);
      expect((await call(platform.app, 'GET', url, { key })).headers.etag, url).toBe(first.headers.etag);
    }
  });

  it('answers a repeated GET with If-None-Match 304 without a body, keeping ETag and the request id', async () => {
    const url = await contactUrl();
    const first = await call(platform.app, 'GET', url, { key });
    const again = await call(platform.app, 'GET', url, { key, headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['service-request-id']).toBeDefined();
    expect(again.headers['x-ratelimit-remaining']).toBeDefined();
    // In a list, weak, or *: all match under the weak comparison GET uses.
    for (const condition of [`"other", ${first.headers.etag}`, `W/${first.headers.etag}`, '*']) {
      expect((await call(platform.app, 'GET', url, { key, headers: { 'if-none-match': condition } })).statusCode, condition).toBe(304);
    }
    // In process: Prism's validation proxy (CONTRACT_PROXY=prism) resolves no route for HEAD.
    const head = await platform.app.inject({ method: 'HEAD', url, headers: { authorization: `Bearer ${key}`, 'if-none-match': String(first.headers.etag) } });
    expect(head.statusCode).toBe(304);
  });

  it('answers 200 with the new representation once the resource changed', async () => {
    const url = await contactUrl();
    const first = await call(platform.app, 'GET', url, { key });
    expect((await call(platform.app, 'PATCH', url, { key, body: { name: 'Augusta Ada King' } })).statusCode).toBe(200);
    const changed = await call(platform.app, 'GET', url, { key, headers: { 'if-none-match': String(first.headers.etag) } });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().data.name).toBe('Augusta Ada King');
    expect(changed.headers.etag).not.toBe(first.headers.etag);
  });

  it('is not sent on lists, on errors or to another tenant', async () => {
    const url = await contactUrl();
    expect((await call(platform.app, 'GET', `${CRM}/contacts`, { key })).headers.etag).toBeUndefined();
    const other = await (await platform.newTenant()).key();
    const missing = await call(platform.app, 'GET', url, { key: other, headers: { 'if-none-match': '*' } });
    expectError(missing, 404, 'not_found');
    expect(missing.headers.etag).toBeUndefined();
  });

  it('tags the OpenAPI document and answers 304 to a repeat', async () => {
    const document = await call(platform.app, 'GET', '/api/v1/openapi.json');
    expect(document.headers.etag).toMatch(/^"[\w-]+"$/);
    const again = await call(platform.app, 'GET', '/api/v1/openapi.json', { headers: { 'if-none-match': String(document.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('is documented: ETag on 200, 304, If-None-Match on GET; If-Match and 412 on PATCH', async () => {
    const document = (await call(platform.app, 'GET', '/api/v1/openapi.json')).json();
    const operations = document.paths['/api/v1/services/crm/contacts/{id}'];
    expect(operations.get.responses['200'].headers.ETag).toBeDefined();
    expect(operations.get.responses['304']).toBeDefined();
    expect(operations.get.parameters.map((parameter: { name: string }) => parameter.name)).toContain('if-none-match');
    expect(operations.patch.parameters.map((parameter: { name: string }) => parameter.name)).toEqual(expect.arrayContaining(['if-match', 'Idempotency-Key']));
    expect(operations.patch.responses['412'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorResponse' });
    expect(document.paths['/api/v1/services/crm/contacts'].get.responses['304']).toBeUndefined();
  });
});

describe('If-Match on PATCH', () => {
  it('applies the update when If-Match is the current ETag, and returns the new one on the next GET', async () => {
    const url = await contactUrl();
    const read = await call(platform.app, 'GET', url, { key });
    const updated = await call(platform.app, 'PATCH', url, { key, headers: { 'if-match': String(read.headers.etag) }, body: { phone: '+44 20 7946 0000' } });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().data.phone).toBe('+44 20 7946 0000');
  });

  it('refuses with 412 precondition_failed when the ETag is stale after a change, naming the current one', async () => {
    const url = await contactUrl();
    const read = await call(platform.app, 'GET', url, { key });
    expect((await call(platform.app, 'PATCH', url, { key, body: { name: 'Someone else' } })).statusCode).toBe(200);
    const stale = await call(platform.app, 'PATCH', url, { key, headers: { 'if-match': String(read.headers.etag) }, body: { name: 'Too late' } });
    const error = expectError(stale, 412, 'precondition_failed');
    const current = await call(platform.app, 'GET', url, { key });
    expect(current.json().data.name).toBe('Someone else');
    expect(error.details[0]).toMatchObject({ path: 'If-Match', code: 'stale', current_etag: current.headers.etag });
    // A weak tag never matches If-Match (strong comparison); * only needs the resource to exist.
    expectError(await call(platform.app, 'PATCH', url, { key, headers: { 'if-match': `W/${current.headers.etag}` }, body: { name: 'x' } }), 412, 'precondition_failed');
    expect((await call(platform.app, 'PATCH', url, { key, headers: { 'if-match': '*' }, body: { name: 'Any version' } })).statusCode).toBe(200);
  });

  it('answers 404 for an unknown id whatever If-Match says', async () => {
    expectError(
      await call(platform.app, 'PATCH', `${CRM}/contacts/00000000-0000-4000-8000-000000000000`, { key, headers: { 'if-match': '*' }, body: { name: 'x' } }),
      404,
      'not_found',
    );
  });

  it('works with an Idempotency-Key: a retry replays the first reply instead of comparing again', async () => {
    const url = await contactUrl();
    const read = await call(platform.app, 'GET', url, { key });
    const headers = { 'if-match': String(read.headers.etag), 'idempotency-key': `etag-${Date.now()}` };
    const first = await call(platform.app, 'PATCH', url, { key, headers, body: { name: 'Once' } });
    expect(first.statusCode).toBe(200);
    const retry = await call(platform.app, 'PATCH', url, { key, headers, body: { name: 'Once' } });
    expect(retry.statusCode).toBe(200);
    expect(retry.body).toBe(first.body);
  });

  it('counts the request once against the rate limit and needs no read scope', async () => {
    const tenant = await platform.newTenant();
    const writer = await tenant.key({ scopes: ['service.crm.manage'] });
    const reader = await tenant.key({ scopes: ['service.crm.view'] });
    const created = await call(platform.app, 'POST', `${CRM}/contacts`, { key: writer, body: { name: 'Grace Hopper' } });
    const url = `${CRM}/contacts/${created.json().data.id}`;
    const tag = String((await call(platform.app, 'GET', url, { key: reader })).headers.etag);
    const before = Number(created.headers['x-ratelimit-remaining']);
    const updated = await call(platform.app, 'PATCH', url, { key: writer, headers: { 'if-match': tag }, body: { name: 'Rear Admiral Grace Hopper' } });
    expect(updated.statusCode).toBe(200);
    expect(Number(updated.headers['x-ratelimit-remaining'])).toBe(before - 1);
  });

  it('is an alternative to expected_updated_at on services that take it', async () => {
    const product = await create('/api/v1/services/catalog/catalog/products', { name: 'Widget' });
    const url = `/api/v1/services/catalog/catalog/products/${product.id}`;
    const read = await call(platform.app, 'GET', url, { key });
    expect((await call(platform.app, 'PATCH', url, { key, headers: { 'if-match': String(read.headers.etag) }, body: { name: 'Widget 2' } })).statusCode).toBe(200);
    expectError(await call(platform.app, 'PATCH', url, { key, headers: { 'if-match': String(read.headers.etag) }, body: { name: 'Widget 3' } }), 412, 'precondition_failed');
  });
});
