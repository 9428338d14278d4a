import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, expectError, startTestPlatform, type Response, type TestPlatform } from '../harness.js';

const APP_ORIGIN = 'https://app.example.com';
const OTHER_ORIGIN = 'https://evil.example.net';
const CONTACTS = '/api/v1/services/crm/contacts';

function corsHeadersOf(response: Response): string[] {
  return Object.keys(response.headers).filter((name) => name.startsWith('access-control-'));
}

function preflight(platform: TestPlatform, url: string, origin: string, method = 'PATCH') {
  return call(platform.app, 'OPTIONS', url, {
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type, idempotency-key' },
  });
}

async function contactOf(platform: TestPlatform, key: string): Promise<string> {
  const created = await call(platform.app, 'POST', CONTACTS, { key, body: { name: 'Ada Lovelace', email: 'ada@example.com' } });
  expect(created.statusCode).toBe(201);
  return `${CONTACTS}/${created.json().data.id}`;
}

describe('with CORS_ORIGINS listing origins', () => {
  let platform: TestPlatform;
  let key: string;
  let contact: string;
  beforeAll(async () => {
    platform = await startTestPlatform({ env: { CORS_ORIGINS: `${APP_ORIGIN}, http://localhost:5173` } });
    key = await (await platform.newTenant()).key();
    contact = await contactOf(platform, key);
  });
  afterAll(() => platform.close());

  it('answers the preflight of an allowed origin with 204 before any authentication', async () => {
    const response = await preflight(platform, contact, APP_ORIGIN);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expect(response.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(String(response.headers.vary)).toMatch(/\bOrigin\b/);
    expect(String(response.headers['access-control-allow-methods']).split(', ').sort()).toEqual(['GET', 'HEAD', 'PATCH']);
    const allowedHeaders = String(response.headers['access-control-allow-headers']).toLowerCase().split(', ');
    expect(allowedHeaders).toEqual(expect.arrayContaining(['authorization', 'content-type', 'idempotency-key', 'x-request-id', 'if-match', 'if-none-match']));
    expect(Number(response.headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('answers preflights of parameterised and collection paths, and of the second origin listed', async () => {
    const collection = await preflight(platform, CONTACTS, 'http://localhost:5173', 'POST');
    expect(collection.statusCode).toBe(204);
    expect(collection.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(String(collection.headers['access-control-allow-methods']).split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
    const document = await preflight(platform, '/api/v1/openapi.json', APP_ORIGIN, 'GET');
    expect(document.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
  });

  it('sends no CORS header to a refused origin: its preflight is the plain OPTIONS reply', async () => {
    const response = await preflight(platform, contact, OTHER_ORIGIN);
    expect(response.statusCode).toBe(204);
    expect(corsHeadersOf(response)).toEqual([]);
    expect(response.headers.allow).toBe('GET, PATCH, HEAD, OPTIONS');
    const read = await call(platform.app, 'GET', contact, { key, headers: { origin: OTHER_ORIGIN } });
    expect(read.statusCode).toBe(200);
    expect(corsHeadersOf(read)).toEqual([]);
    // An origin must match exactly: no other scheme, port or suffix.
    for (const origin of ['http://app.example.com', 'https://app.example.com:8443', 'https://app.example.com.evil.net', 'null']) {
      expect(corsHeadersOf(await preflight(platform, contact, origin)), origin).toEqual([]);
    }
  });

  it('lets an allowed origin read the documented headers of a reply, errors included', async () => {
    const read = await call(platform.app, 'GET', contact, { key, headers: { origin: APP_ORIGIN } });
    expect(read.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(String(read.headers.vary)).toMatch(/\bOrigin\b/);
    const exposed = String(read.headers['access-control-expose-headers']).split(', ');
    expect(exposed).toEqual(
      expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Service-Request-Id', 'Deprecation', 'Sunset', 'ETag']),
    );
    const refused = await call(platform.app, 'GET', contact, { headers: { origin: APP_ORIGIN } });
    expectError(refused, 401, 'unauthorized');
    expect(refused.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
  });

  it('answers a preflight of an unknown path 404, and a plain OPTIONS with Allow', async () => {
    const unknown = await preflight(platform, '/api/v1/services/crm/nothing-here', APP_ORIGIN, 'GET');
    expectError(unknown, 404, 'not_found');
    expect(corsHeadersOf(unknown)).toEqual([]);
    const plain = await call(platform.app, 'OPTIONS', contact, { headers: { origin: APP_ORIGIN } });
    expect(plain.statusCode).toBe(204);
    expect(plain.headers.allow).toBe('GET, PATCH, HEAD, OPTIONS');
  });

  it('never sends CORS headers on the operator API, the hosted pages or /docs', async () => {
    const operator = await call(platform.app, 'GET', `/admin/v1/tenants/${(await platform.newTenant()).id}/api-keys`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, origin: APP_ORIGIN },
    });
    expect(operator.statusCode).toBe(200);
    expect(corsHeadersOf(operator)).toEqual([]);
    expect(operator.headers.vary).toBeUndefined();
    const operatorPreflight = await preflight(platform, '/admin/v1/tenants', APP_ORIGIN, 'POST');
    expect(operatorPreflight.statusCode).toBe(204);
    expect(corsHeadersOf(operatorPreflight)).toEqual([]);

    const page = await call(platform.app, 'GET', `/checkout/${randomUUID()}`, { headers: { origin: APP_ORIGIN } });
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(corsHeadersOf(page)).toEqual([]);
    expect(page.headers.vary).toBeUndefined();
    expect(corsHeadersOf(await preflight(platform, `/checkout/${randomUUID()}`, APP_ORIGIN, 'POST'))).toEqual([]);

    const docs = await call(platform.app, 'GET', '/docs', { headers: { origin: APP_ORIGIN } });
    expect(corsHeadersOf(docs)).toEqual([]);
  });
});

describe('with CORS_ORIGINS=*', () => {
  let platform: TestPlatform;
  let key: string;
  beforeAll(async () => {
    platform = await startTestPlatform({ env: { CORS_ORIGINS: '*' } });
    key = await (await platform.newTenant()).key();
  });
  afterAll(() => platform.close());

  it('allows any origin with *, and never with credentials', async () => {
    const response = await preflight(platform, CONTACTS, OTHER_ORIGIN, 'POST');
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    const list = await call(platform.app, 'GET', CONTACTS, { key, headers: { origin: OTHER_ORIGIN } });
    expect(list.headers['access-control-allow-origin']).toBe('*');
    expect(list.headers['access-control-expose-headers']).toContain('ETag');
  });
});

describe('without CORS_ORIGINS', () => {
  let platform: TestPlatform;
  let key: string;
  let contact: string;
  beforeAll(async () => {
    platform = await startTestPlatform();
    key = await (await platform.newTenant()).key();
    contact = await contactOf(platform, key);
  });
  afterAll(() => platform.close());

  it('sends no CORS headers, even to a browser preflight', async () => {
    const response = await preflight(platform, contact, APP_ORIGIN);
    expect(response.statusCode).toBe(204);
    expect(corsHeadersOf(response)).toEqual([]);
    const read = await call(platform.app, 'GET', contact, { key, headers: { origin: APP_ORIGIN } });
    expect(corsHeadersOf(read)).toEqual([]);
  });

  it('answers OPTIONS on a known path 204 with Allow listing its methods, and 404 on an unknown one', async () => {
    const one = await call(platform.app, 'OPTIONS', contact);
    expect(one.statusCode).toBe(204);
    expect(one.headers.allow).toBe('GET, PATCH, HEAD, OPTIONS');
    expect(one.body).toBe('');
    const collection = await call(platform.app, 'OPTIONS', CONTACTS);
    expect(collection.headers.allow).toBe('GET, POST, HEAD, OPTIONS');
    expectError(await call(platform.app, 'OPTIONS', '/api/v1/services/crm/nothing-here'), 404, 'not_found');
    // Other methods keep their 405.
    expectError(await call(platform.app, 'DELETE', contact, { key }), 405, 'method_not_allowed');
  });
});
