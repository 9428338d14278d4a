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
  return response.json<{ openapi: string; paths: Record<string, Record<string, Operation>>; components: Record<string, Record<string, unknown>> }>();
}

/** The one keyless public operation: the social upload PUT, whose one-time token in the URL is its credential. */
const KEYLESS = 'put /api/v1/services/social/uploads/{upload_token}';

function publicOperations(document: Awaited<ReturnType<typeof openApiDocument>>) {
  return Object.entries(document.paths)
    .filter(([path]) => path.startsWith('/api/v1/services/'))
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })))
    .filter(({ path, method }) => `${method} ${path}` !== KEYLESS);
}

describe('the OpenAPI document', () => {
  it('is served without auth and is a valid OpenAPI 3.1 document', async () => {
    const document = await openApiDocument();
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(document);
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
    expect(document.paths['/api/v1/services/social/uploads/{upload_token}']!.put!.security).toEqual([]);
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

  it('names every resource under components.schemas, and every list reply <Resource>List', async () => {
    const document = await openApiDocument();
    const schemas = document.components.schemas!;
    for (const name of ['Contact', 'ContactList', 'Invoice', 'InvoiceList', 'CheckoutSession', 'CheckoutSessionList', 'EndUser', 'EndUserList', 'PageMeta']) {
      expect(schemas[name], name).toBeDefined();
    }
    const contacts = document.paths['/api/v1/services/crm/contacts']!;
    expect(contacts.get!.responses['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/ContactList' });
    expect(contacts.post!.responses['201']!.content!['application/json']!.schema).toMatchObject({
      properties: { data: { $ref: '#/components/schemas/Contact' } },
      additionalProperties: false,
    });
    expect(schemas.ContactList).toMatchObject({ properties: { data: { items: { $ref: '#/components/schemas/Contact' } }, meta: { $ref: '#/components/schemas/PageMeta' } } });
  });

  it('describes every reply, and shows an example of each error code an operation answers with', async () => {
    const document = await openApiDocument();
    expect(JSON.stringify(document)).not.toContain('Default Response');
    const examplesOf = (path: string, method: string, status: string) => {
      const operation = (
        document.paths[path] as Record<
          string,
          Operation & { responses: Record<string, { content?: Record<string, { examples?: Record<string, { value: { error: { code: string } } }> }> }> }
        >
      )[method]!;
      const examples = operation.responses[status]!.content!['application/json']!.examples!;
      for (const [code, example] of Object.entries(examples)) expect(example.value.error.code).toBe(code);
      return Object.keys(examples);
    };
    expect(examplesOf('/api/v1/services/crm/contacts', 'post', '400')).toEqual(['validation_failed', 'invalid_json']);
    expect(examplesOf('/api/v1/services/crm/contacts', 'post', '401')).toEqual(['unauthorized']);
    expect(examplesOf('/api/v1/services/crm/contacts', 'post', '403')).toEqual(['insufficient_scope']);
    expect(examplesOf('/api/v1/services/crm/contacts', 'post', '409')).toEqual(['idempotency_key_conflict', 'idempotency_key_in_use']);
    expect(examplesOf('/api/v1/services/crm/contacts/{id}', 'patch', '409')).toEqual(['stale_update', 'idempotency_key_conflict', 'idempotency_key_in_use']);
    expect(examplesOf('/api/v1/services/blogs/posts', 'post', '409')).toContain('slug_taken');
    expect(examplesOf('/api/v1/services/crm/contacts', 'get', '429')).toEqual(['rate_limited']);
    expect(examplesOf('/api/v1/services/customer-auth/sessions', 'post', '401')).toEqual(['unauthorized', 'invalid_credentials']);
  });

  it('documents the rate-limit, retry and request-id headers, and Idempotency-Key wherever it is honoured', async () => {
    const document = await openApiDocument();
    type Headers = Record<string, { $ref: string }>;
    const list = document.paths['/api/v1/services/crm/contacts']!.get! as unknown as { responses: Record<string, { headers: Headers }> };
    expect(Object.keys(list.responses['200']!.headers)).toEqual(['Service-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
    expect(list.responses['429']!.headers['Retry-After']).toEqual({ $ref: '#/components/headers/RetryAfter' });
    expect(list.responses['401']!.headers['X-RateLimit-Limit']).toBeUndefined();
    expect(document.components.headers!.RetryAfter).toMatchObject({ required: true });
    const headerParameters = (path: string, method: string) =>
      ((document.paths[path]![method] as unknown as { parameters?: Array<{ in: string; name: string }> }).parameters ?? [])
        .filter((parameter) => parameter.in === 'header')
        .map((parameter) => parameter.name);
    expect(headerParameters('/api/v1/services/blogs/subscribers/{id}', 'delete')).toEqual(['Idempotency-Key']);
    expect(headerParameters('/api/v1/services/crm/contacts', 'post')).toEqual(['Idempotency-Key']);
    // Routes whose body holds a password or whose reply a secret do not honour it, so do not offer it.
    expect(headerParameters('/api/v1/services/customer-auth/sessions', 'post')).toEqual([]);
    expect(headerParameters('/api/v1/services/crm/contacts', 'get')).toEqual([]);
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
