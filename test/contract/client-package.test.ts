import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient, PlatformApiError, retryAfterMs } from '../../clients/typescript/src/index.js';
import { CLIENT_SCHEMA_FILE, clientSchemaSource } from '../../scripts/generate-client.js';
import { OPENAPI_URL } from '../contract.js';
import { call, startTestPlatform, type TestPlatform } from '../harness.js';

/** The TypeScript client of clients/typescript, against a live server. */

const CONTACTS = '/api/v1/services/crm/contacts';

let platform: TestPlatform;
let baseUrl: string;
beforeAll(async () => {
  platform = await startTestPlatform();
  baseUrl = await platform.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => platform.close());

async function newKey(options?: { rateLimitPerMinute?: number }): Promise<string> {
  return (await platform.newTenant()).key(options);
}

/** A fetch that records what it sends and lets a test decide what comes back. */
function recordingFetch(decide: (request: Request, attempt: number) => 'pass' | Response | Error = () => 'pass') {
  const sent: Request[] = [];
  const fetchFn = async (request: Request): Promise<Response> => {
    sent.push(request.clone());
    const decision = decide(request, sent.length);
    if (decision instanceof Response) return decision;
    const response = await fetch(request);
    if (decision instanceof Error) {
      await response.arrayBuffer();
      throw decision;
    }
    return response;
  };
  return { sent, fetch: fetchFn };
}

describe('the typed client', () => {
  it('has types generated from the document this server serves', async () => {
    const document = (await call(platform.app, 'GET', OPENAPI_URL)).json();
    const fresh = await clientSchemaSource(document);
    expect(fs.readFileSync(CLIENT_SCHEMA_FILE, 'utf8') === fresh, 'clients/typescript/src/schema.ts is stale: run `npm run client:generate`').toBe(true);
  });

  it('creates, then lists every page', async () => {
    const recorder = recordingFetch();
    const client = createPlatformClient({ baseUrl, apiKey: await newKey(), fetch: recorder.fetch });
    for (const name of ['Ada', 'Grace', 'Edsger', 'Barbara', 'Donald']) {
      const { data, error, response } = await client.POST(CONTACTS, { body: { name } });
      expect(error).toBeUndefined();
      expect(response.status).toBe(201);
      expect(data?.data.name).toBe(name);
    }
    const names: string[] = [];
    for await (const contact of client.listAll(CONTACTS, { params: { query: { limit: 2 } } })) names.push(contact.name);
    expect(names.sort()).toEqual(['Ada', 'Barbara', 'Donald', 'Edsger', 'Grace']);
    const pages = recorder.sent.filter((request) => request.method === 'GET').map((request) => new URL(request.url).search);
    expect(pages).toEqual(['?limit=2&offset=0', '?limit=2&offset=2', '?limit=2&offset=4']);
  });

  it('sends an Idempotency-Key with every POST, and keeps it when it retries a reply that was lost', async () => {
    const recorder = recordingFetch((_request, attempt) => (attempt === 1 ? new TypeError('fetch failed: connection reset') : 'pass'));
    const key = await newKey();
    const client = createPlatformClient({ baseUrl, apiKey: key, fetch: recorder.fetch, retryBaseDelayMs: 1 });
    const { data, response } = await client.POST(CONTACTS, { body: { name: 'Only once' } });
    expect(response.status).toBe(201);
    expect(recorder.sent).toHaveLength(2);
    const keys = recorder.sent.map((request) => request.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    // The server acted once: the retry got the first reply back.
    const list = await client.GET(CONTACTS);
    expect(list.data?.meta.total).toBe(1);
    expect(list.data?.data[0]?.id).toBe(data?.data.id);
  });

  it('waits as Retry-After says on 429 and 503, and does not retry other errors', async () => {
    const busy = (status: number) =>
      new Response(JSON.stringify({ error: { code: 'rate_limited', message: 'slow down', details: [] } }), {
        status,
        headers: { 'content-type': 'application/json', 'retry-after': '1' },
      });
    const recorder = recordingFetch((_request, attempt) => (attempt === 1 ? busy(429) : attempt === 2 ? busy(503) : 'pass'));
    const client = createPlatformClient({ baseUrl, apiKey: await newKey(), fetch: recorder.fetch });
    const started = Date.now();
    const { response } = await client.GET(CONTACTS);
    expect(response.status).toBe(200);
    expect(recorder.sent).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);

    const refused = recordingFetch();
    const strict = createPlatformClient({ baseUrl, apiKey: await newKey(), fetch: refused.fetch });
    const { error, response: badResponse } = await strict.POST(CONTACTS, { body: { name: '' } });
    expect(badResponse.status).toBe(400);
    expect(error?.error.code).toBe('validation_failed');
    expect(refused.sent).toHaveLength(1);
  });

  it('gives up after maxRetries and returns the last reply', async () => {
    const recorder = recordingFetch(() => new Response('{"error":{"code":"service_unavailable","message":"busy","details":[]}}', { status: 503, headers: { 'retry-after': '0' } }));
    const client = createPlatformClient({ baseUrl, apiKey: await newKey(), fetch: recorder.fetch, maxRetries: 2 });
    const { response } = await client.GET(CONTACTS);
    expect(response.status).toBe(503);
    expect(recorder.sent).toHaveLength(3);
  });

  it('listAll throws a PlatformApiError naming the code and the request id', async () => {
    const client = createPlatformClient({ baseUrl, apiKey: 'sk_test_not_a_real_key_0000000000000000' });
    const failure = await (async () => {
      for await (const _ of client.listAll(CONTACTS)) void _;
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PlatformApiError);
    expect((failure as PlatformApiError).status).toBe(401);
    expect((failure as PlatformApiError).requestId).toBeTruthy();
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});
