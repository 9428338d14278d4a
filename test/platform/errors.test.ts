import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
let key: string;
beforeAll(async () => {
  platform = await startTestPlatform();
  key = await (await platform.newTenant()).key();
});
afterAll(() => platform.close());

const CONTACTS = '/api/v1/services/crm/contacts';

describe('the error shape on every failure', () => {
  it('answers malformed JSON with 400 invalid_json', async () => {
    expectError(await call(platform.app, 'POST', CONTACTS, { key, body: '{"name": "Ada"' }), 400, 'invalid_json');
    expectError(await call(platform.app, 'POST', CONTACTS, { key, body: '{"name": \'Ada\'}' }), 400, 'invalid_json');
  });

  it('answers an empty JSON body with 400 invalid_json', async () => {
    expectError(await call(platform.app, 'POST', CONTACTS, { key, headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
  });

  it('refuses prototype-poisoning bodies without a 5xx', async () => {
    const response = await call(platform.app, 'POST', CONTACTS, { key, body: '{"name":"Ada","__proto__":{"admin":true}}', invalid: true });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toMatch(/invalid_json|validation_failed/);
  });

  it('answers a body that is not JSON with 415 unsupported_media_type', async () => {
    expectError(
      await call(platform.app, 'POST', CONTACTS, { key, body: 'name=Ada', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported_media_type',
    );
    expectError(await call(platform.app, 'POST', CONTACTS, { key, body: 'Ada', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
  });

  it('answers a body over 1 MiB with 413 payload_too_large', async () => {
    const response = await call(platform.app, 'POST', CONTACTS, { key, body: { name: 'x'.repeat(1024 * 1024 + 10) } });
    expectError(response, 413, 'payload_too_large');
  });

  it('answers an unknown route with 404 not_found', async () => {
    expectError(await call(platform.app, 'GET', '/api/v1/services/crm/nothing-here', { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', '/nowhere'), 404, 'not_found');
  });

  it('answers a known path with another method with 405 and Allow', async () => {
    const response = await call(platform.app, 'DELETE', CONTACTS, { key });
    expectError(response, 405, 'method_not_allowed');
    expect(response.headers.allow).toBe('GET, POST');
    expectError(await call(platform.app, 'PUT', `${CONTACTS}/some-id`, { key, body: {} }), 405, 'method_not_allowed');
  });

  it('answers /api/v2 with 404 in the error shape', async () => {
    expectError(await call(platform.app, 'GET', '/api/v2/services/crm/contacts', { key }), 404, 'not_found');
  });

  it('answers a wrong ADMIN_TOKEN with 401', async () => {
    const response = await call(platform.app, 'POST', '/admin/v1/tenants', { headers: { authorization: 'Bearer wrong' }, body: { name: 'x' } });
    expectError(response, 401, 'unauthorized');
    expectError(await call(platform.app, 'POST', '/admin/v1/tenants', { body: { name: 'x' } }), 401, 'unauthorized');
  });
});

describe('validation_failed', () => {
  it('reports one detail per problem with path, code and message', async () => {
    const response = await call(platform.app, 'POST', CONTACTS, { key, body: { email: 'not-an-email', phone: 42, nickname: 'x' } });
    const error = expectError(response, 400, 'validation_failed');
    const byPath = Object.fromEntries(error.details.map((detail) => [detail.path, detail.code]));
    expect(byPath).toEqual({ name: 'required', email: 'invalid_format', phone: 'invalid_type', nickname: 'unknown_field' });
    for (const detail of error.details) expect(typeof detail.message).toBe('string');
  });

  it('does not coerce JSON values: null, numbers-as-strings and booleans stay what they are', async () => {
    const error = expectError(await call(platform.app, 'POST', CONTACTS, { key, body: { name: null } }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: 'name', code: 'invalid_type' });
    expectError(await call(platform.app, 'POST', CONTACTS, { key, body: { name: 12 } }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', CONTACTS, { key, body: { name: true } }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', CONTACTS, { key, body: { name: ['Ada'] } }), 400, 'validation_failed');
  });

  it('refuses a body that is not an object', async () => {
    expectError(await call(platform.app, 'POST', CONTACTS, { key, body: '[]' }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', CONTACTS, { key, body: '"Ada"' }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', CONTACTS, { key, body: 'null' }), 400, 'validation_failed');
  });

  it.each([
    'limit=0',
    'limit=201',
    'limit=-1',
    'limit=1.5',
    'limit=abc',
    'limit=Infinity',
    'limit=1e3',
    'offset=-1',
    'offset=Infinity',
    'offset=99999999999999999999',
    'offset=NaN',
    'unknown=1',
    'limit=10&limit=20',
  ])('answers hostile query %s with 400, never 5xx', async (query) => {
    expectError(await call(platform.app, 'GET', `${CONTACTS}?${query}`, { key }), 400, 'validation_failed');
  });

  it('names query parameters in messages', async () => {
    const error = expectError(await call(platform.app, 'GET', `${CONTACTS}?limit=500`, { key }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: 'limit', code: 'out_of_range' });
    expect(error.details[0]!.message).toContain('query');
  });
});

describe('URLs the router cannot read', () => {
  it('answers bad percent-encoding and over-long path parameters with 404 in the error shape', async () => {
    const badEncoding = await call(platform.app, 'GET', `${CONTACTS}/%E0%A4%A`, { key });
    expectError(badEncoding, 404, 'not_found');
    expect(badEncoding.headers['service-request-id']).toBeTruthy();
    expectError(await call(platform.app, 'GET', `${CONTACTS}/${'a'.repeat(600)}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${CONTACTS}/${'a'.repeat(300)}`, { key }), 404, 'not_found');
  });
});
