import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
  // A route scheduled for removal, declared the way a service would declare one.
  platform.app.get('/api/v1/services/crm/legacy-ping', {
    config: { scope: 'service.crm.view', deprecated: { since: '2026-06-01T00:00:00Z', sunset: '2027-06-01T00:00:00Z' } },
    schema: { operationId: 'legacyPing', response: { 200: Type.Object({ data: Type.Object({ pong: Type.Boolean() }) }) } },
    handler: async () => ({ data: { pong: true } }),
  });
});
afterAll(() => platform.close());

describe('versioning', () => {
  it('marks a deprecated route with Deprecation (RFC 9745) and Sunset (RFC 8594) headers', async () => {
    const key = await (await platform.newTenant()).key();
    const response = await call(platform.app, 'GET', '/api/v1/services/crm/legacy-ping', { key });
    expect(response.statusCode).toBe(200);
    expect(response.headers.deprecation).toBe(`@${Date.parse('2026-06-01T00:00:00Z') / 1000}`);
    expect(response.headers.sunset).toBe('Tue, 01 Jun 2027 00:00:00 GMT');
  });

  it('does not mark routes that are not deprecated', async () => {
    const key = await (await platform.newTenant()).key();
    const response = await call(platform.app, 'GET', '/api/v1/services/crm/contacts', { key });
    expect(response.headers.deprecation).toBeUndefined();
    expect(response.headers.sunset).toBeUndefined();
  });

  it('flags the deprecated operation in the OpenAPI document', async () => {
    const document = (await call(platform.app, 'GET', '/api/v1/openapi.json')).json();
    expect(document.paths['/api/v1/services/crm/legacy-ping'].get.deprecated).toBe(true);
  });

  it('answers /api/v2 with a 404 in the error shape', async () => {
    const key = await (await platform.newTenant()).key();
    expectError(await call(platform.app, 'GET', '/api/v2/services/crm/contacts', { key }), 404, 'not_found');
  });
});
