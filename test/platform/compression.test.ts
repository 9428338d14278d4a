import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestPlatform, type TestPlatform } from '../harness.js';

const CONTACTS = '/api/v1/services/crm/contacts';
const FORMS = '/api/v1/services/forms';
const OPENAPI = '/api/v1/openapi.json';

describe('with compression on (the default)', () => {
  let platform: TestPlatform;
  let key: string;
  beforeAll(async () => {
    platform = await startTestPlatform();
    key = await (await platform.newTenant()).key();
    for (let index = 0; index < 30; index += 1) {
      const created = await call(platform.app, 'POST', CONTACTS, { key, body: { name: `Contact number ${index}`, email: `contact${index}@example.com` } });
      expect(created.statusCode).toBe(201);
    }
  });
  afterAll(() => platform.close());

  it('sends the OpenAPI document with brotli, decoding to the same JSON as without', async () => {
    const plain = await call(platform.app, 'GET', OPENAPI);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const compressed = await call(platform.app, 'GET', OPENAPI, { headers: { 'accept-encoding': 'br' } });
    expect(compressed.statusCode).toBe(200);
    expect(compressed.headers['content-encoding']).toBe('br');
    expect(String(compressed.headers.vary).toLowerCase()).toContain('accept-encoding');
    expect(compressed.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
    const decoded = brotliDecompressSync(compressed.rawPayload).toString('utf8');
    expect(JSON.parse(decoded)).toEqual(plain.json());
    expect(compressed.headers.etag).toBe(plain.headers.etag);
  });

  it('prefers brotli, and sends gzip to a client that takes only gzip', async () => {
    expect((await call(platform.app, 'GET', OPENAPI, { headers: { 'accept-encoding': 'gzip, deflate, br' } })).headers['content-encoding']).toBe('br');
    const list = await call(platform.app, 'GET', `${CONTACTS}?limit=30`, { key, headers: { 'accept-encoding': 'gzip' } });
    expect(list.statusCode).toBe(200);
    expect(list.headers['content-encoding']).toBe('gzip');
    const page = JSON.parse(gunzipSync(list.rawPayload).toString('utf8'));
    expect(page.data).toHaveLength(30);
    expect(page.meta.total).toBe(30);
  });

  it('leaves small replies and clients that ask for none alone', async () => {
    const small = await call(platform.app, 'GET', `${CONTACTS}?limit=1`, { key, headers: { 'accept-encoding': 'gzip, br' } });
    expect(small.rawPayload.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.json().data).toHaveLength(1);
    const identity = await call(platform.app, 'GET', `${CONTACTS}?limit=30`, { key, headers: { 'accept-encoding': 'identity' } });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.json().data).toHaveLength(30);
    const none = await call(platform.app, 'GET', `${CONTACTS}?limit=30`, { key });
    expect(none.headers['content-encoding']).toBeUndefined();
  });

  it('compresses a CSV export as it streams', async () => {
    const form = await call(platform.app, 'POST', `${FORMS}/forms`, {
      key,
      body: { name: 'Feedback', status: 'published', fields: [{ key: 'comment', label: 'Comment', type: 'text' }] },
    });
    expect(form.statusCode).toBe(201);
    const { id, slug } = form.json().data;
    for (let index = 0; index < 40; index += 1) {
      const submitted = await call(platform.app, 'POST', `${FORMS}/forms/${slug}/submit`, { key, body: { data: { comment: `Comment number ${index}, all fine.` } } });
      expect(submitted.statusCode).toBe(201);
    }
    const plain = await call(platform.app, 'GET', `${FORMS}/forms/${id}/submissions.csv`, { key });
    const compressed = await call(platform.app, 'GET', `${FORMS}/forms/${id}/submissions.csv`, { key, headers: { 'accept-encoding': 'br, gzip' } });
    expect(compressed.statusCode).toBe(200);
    expect(compressed.headers['content-encoding']).toBe('br');
    expect(compressed.headers['content-type']).toMatch(/^text\/csv/);
    expect(compressed.headers['content-disposition']).toMatch(/^attachment/);
    const csv = brotliDecompressSync(compressed.rawPayload).toString('utf8');
    expect(csv).toBe(plain.body);
    expect(csv.split('\r\n').filter((line) => line !== '')).toHaveLength(41);
  });

  it('compresses the /docs scripts', async () => {
    const plain = await platform.app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
    const script = await platform.app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js', headers: { 'accept-encoding': 'br' } });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(script.rawPayload).equals(plain.rawPayload)).toBe(true);
  });
});

describe('with COMPRESSION=false', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform({ env: { COMPRESSION: 'false' } });
  });
  afterAll(() => platform.close());

  it('sends everything as it is', async () => {
    const document = await call(platform.app, 'GET', OPENAPI, { headers: { 'accept-encoding': 'gzip, br' } });
    expect(document.statusCode).toBe(200);
    expect(document.headers['content-encoding']).toBeUndefined();
    expect(document.json().openapi).toBe('3.1.0');
  });
});
