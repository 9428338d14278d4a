import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

type Operation = {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
};

async function openApiDocument() {
  const response = await call(platform.app, 'GET', '/api/v1/openapi.json');
  expect(response.statusCode).toBe(200);
  return response.json() as { openapi: string; paths: Record<string, Record<string, Operation>>; components: Record<string, Record<string, unknown>> };
}

function publicOperations(document: Awaited<ReturnType<typeof openApiDocument>>) {
  return Object.entries(document.paths)
    .filter(([path]) => path.startsWith('/api/v1/services/'))
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));
}

describe('the OpenAPI document', () => {
  it('is served without auth and is a valid OpenAPI 3.1 document', async () => {
    const document = await openApiDocument();
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('lists every public operation with its scope in the apiKey security requirement', async () => {
    const document = await openApiDocument();
    const operations = publicOperations(document);
    expect(operations.length).toBeGreaterThan(0);
    for (const { path, method, operation } of operations) {
      expect(operation.security, `${method} ${path}`).toHaveLength(1);
      const scopes = operation.security![0]!.apiKey;
      expect(scopes, `${method} ${path}`).toHaveLength(1);
      expect(scopes![0]).toMatch(/^service\.[a-z-]+\.[a-z.]+$/);
      expect(operation.operationId, `${method} ${path}`).toBeTruthy();
    }
    expect(document.paths['/api/v1/services/crm/contacts']!.get!.security).toEqual([{ apiKey: ['service.crm.view'] }]);
    expect(document.paths['/api/v1/services/crm/contacts']!.post!.security).toEqual([{ apiKey: ['service.crm.manage'] }]);
    expect(document.components.securitySchemes!.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('documents the error responses of every public operation with the shared error schema', async () => {
    const document = await openApiDocument();
    expect(document.components.schemas!.ErrorResponse).toBeDefined();
    for (const { path, method, operation } of publicOperations(document)) {
      for (const status of ['400', '401', '403', '404', '429']) {
        const schema = operation.responses[status]?.content?.['application/json']?.schema;
        expect(schema, `${method} ${path} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorResponse' });
      }
    }
  });

  it('declares no request body on no-body actions, and marks a body with no required field optional', async () => {
    const paths = (await openApiDocument()).paths as Record<string, Record<string, { requestBody?: { required?: boolean } }>>;
    for (const path of [
      '/api/v1/services/invoicing/customers/{id}/archive',
      '/api/v1/services/invoicing/invoices/{id}/finalize',
      '/api/v1/services/customer-auth/users/{id}/email-verifications',
      '/api/v1/services/customer-auth/users/{id}/mfa/totp',
      '/api/v1/services/catalog/catalog/coupons/{id}/retire',
    ]) {
      expect(paths[path]!.post!.requestBody, path).toBeUndefined();
    }
    expect(paths['/api/v1/services/catalog/catalog/subscriptions/{id}/pause']!.post!.requestBody!.required).toBe(false);
    expect(paths['/api/v1/services/crm/contacts/{id}']!.patch!.requestBody!.required).toBe(false);
    expect(paths['/api/v1/services/crm/contacts']!.post!.requestBody!.required).toBe(true);
  });

  it('carries examples', async () => {
    const text = JSON.stringify(await openApiDocument());
    expect(text).toContain('"examples"');
  });

  it('renders an interactive reference at /docs', async () => {
    const response = await call(platform.app, 'GET', '/docs/');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.body).toContain('swagger');
  });
});
