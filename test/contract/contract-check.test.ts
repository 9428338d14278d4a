import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ContractChecker } from '../contract.js';

/** A small document in the shapes @fastify/swagger writes, to prove the check catches each kind of disagreement. */
const document = {
  openapi: '3.1.0',
  paths: {
    '/api/v1/services/things/things': {
      get: {
        operationId: 'listThings',
        parameters: [
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
          { name: 'colour', in: 'query', required: true, schema: { type: 'string', enum: ['red', 'blue'] } },
        ],
        responses: {
          '200': {
            description: 'A page of things.',
            headers: { 'X-RateLimit-Limit': { required: true, schema: { type: 'integer' } } },
            content: {
              'application/json': { schema: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: { $ref: '#/components/schemas/Thing' } } } } },
            },
          },
          '400': { description: 'Bad input.', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } },
        },
      },
    },
    '/api/v1/services/things/things/{id}': {
      patch: {
        operationId: 'updateThing',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
        requestBody: {
          required: false,
          content: { 'application/json': { schema: { type: 'object', additionalProperties: false, properties: { name: { type: 'string', maxLength: 3 } } } } },
        },
        responses: { '200': { description: 'The thing.', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
  },
  components: {
    schemas: {
      Thing: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
      ErrorResponse: { type: 'object', required: ['error'], properties: { error: { type: 'object' } } },
    },
  },
};

const checker = new ContractChecker(document as never);
const UUID = '3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c';

function reply(statusCode: number, body: unknown, headers: Record<string, string> = {}): LightMyRequestResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return { statusCode, body: text, rawPayload: Buffer.from(text), headers: { 'content-type': 'application/json; charset=utf-8', ...headers } } as unknown as LightMyRequestResponse;
}

const get = (url: string) => ({ method: 'GET', url, headers: {}, body: undefined });

describe('the contract check', () => {
  it('passes a request and reply that match the document', () => {
    expect(checker.checkRequest(get('/api/v1/services/things/things?colour=red&limit=5'))).toEqual([]);
    expect(checker.checkResponse(get('/api/v1/services/things/things?colour=red'), reply(200, { data: [{ id: 'a' }] }, { 'x-ratelimit-limit': '60' }))).toEqual([]);
    expect(checker.checkRequest({ method: 'PATCH', url: `/api/v1/services/things/things/${UUID}`, headers: {}, body: undefined })).toEqual([]);
  });

  it('names the operation, the status and the JSON pointer of a reply that disagrees', () => {
    const wrongBody = checker.checkResponse(get('/api/v1/services/things/things?colour=red'), reply(200, { data: [{ name: 'no id' }] }, { 'x-ratelimit-limit': '60' }));
    expect(wrongBody.join('\n')).toMatch(/GET \/api\/v1\/services\/things\/things \(listThings\) 200: response body at \/data\/0: must have required property 'id'/);
    expect(checker.checkResponse(get('/api/v1/services/things/things'), reply(418, {})).join('\n')).toMatch(/status 418 is not documented/);
    expect(checker.checkResponse(get('/api/v1/services/things/things'), reply(200, { data: [] })).join('\n')).toMatch(
      /header X-RateLimit-Limit is documented as required but missing/,
    );
    expect(checker.checkResponse(get('/api/v1/services/things/things'), reply(200, 'a,b', { 'content-type': 'text/csv' })).join('\n')).toMatch(
      /content type text\/csv is not documented/,
    );
  });

  it('finds every kind of request disagreement', () => {
    const problems = (url: string, method = 'GET', body?: string) => checker.checkRequest({ method, url, headers: {}, body }).join('\n');
    expect(problems('/api/v1/services/things/things')).toMatch(/query parameter colour is required/);
    expect(problems('/api/v1/services/things/things?colour=green')).toMatch(/query parameter colour at \/: must be equal to one of the allowed values/);
    expect(problems('/api/v1/services/things/things?colour=red&limit=0')).toMatch(/query parameter limit at \/: must be >= 1/);
    expect(problems('/api/v1/services/things/things?colour=red&extra=1')).toMatch(/query parameter extra is not in the document/);
    expect(problems('/api/v1/services/things/things/not-a-uuid', 'PATCH')).toMatch(/path parameter id at \/: must match format "uuid"/);
    expect(problems(`/api/v1/services/things/things/${UUID}`, 'PATCH', '{"name":"long"}')).toMatch(/request body at \/name: must NOT have more than 3 characters/);
    expect(problems(`/api/v1/services/things/things/${UUID}`, 'PATCH', '{"other":1}')).toMatch(/must NOT have additional properties/);
    expect(problems('/api/v1/services/things/things', 'DELETE')).toMatch(/documented, but not with this method/);
    expect(problems('/api/v1/services/things/nowhere')).toMatch(/no documented path matches/);
  });

  it('accepts only a 404 or 405 in the error shape for a request to no operation', () => {
    expect(checker.checkResponse(get('/api/v1/services/things/nowhere'), reply(404, { error: { code: 'not_found' } }))).toEqual([]);
    expect(checker.checkResponse(get('/api/v1/services/things/nowhere'), reply(200, {})).join('\n')).toMatch(/answered 200/);
  });
});
