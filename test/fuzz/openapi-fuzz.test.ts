import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestPlatform, type Response, type TestPlatform } from '../harness.js';
import { buildWorld, type ExtraIds, type World } from '../world.js';
import { casesFor, type FuzzCase, type JsonSchema, type Operation, type Parameter } from './cases.js';

/**
 * Every operation of the OpenAPI document the app serves, with a valid key and real ids, gets
 * hostile input: control characters and lone surrogates in every string field, bodies of the
 * wrong shape, numbers at ±1e308 and fractions where integers go, values at and beyond the
 * schema's limits, 10,000-level nesting, 1 MB strings, prototype keys, unknown fields, invalid
 * UTF-8, limits and offsets out of range. Not one reply may be a 5xx, every 4xx has the error
 * shape, the server still answers afterwards, and memory does not grow run over run.
 */

let platform: TestPlatform;
let world: World;
let operations: Operation[];
let extra: ExtraIds;

const METHOD_ORDER = ['GET', 'PATCH', 'POST', 'PUT', 'DELETE'];
/** Operations only a draft invoice allows: they get the world's draft, so their rules are reached. */
const DRAFT_ONLY = new Set(['PATCH /api/v1/services/invoicing/invoices/{id}', 'DELETE /api/v1/services/invoicing/invoices/{id}']);
const MEGABYTE = 1024 * 1024;

beforeAll(async () => {
  platform = await startTestPlatform();
  const tenant = await platform.newTenant('fuzz tenant');
  world = await buildWorld(platform.app, await tenant.key(), { tag: 'fuzz' });
  // The operator API's DELETE /api-keys/{id} gets a spare key, never the one the fuzz uses.
  const spare = await call(platform.app, 'POST', `/admin/v1/tenants/${tenant.id}/api-keys`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { mode: 'test', scopes: ['service.crm.view'] },
  });
  expect(spare.statusCode, spare.body).toBe(201);
  extra = { tenant: tenant.id, apiKey: spare.json().data.id };
  operations = await readOperations();
}, 120_000);
afterAll(() => platform.close());

async function readOperations(): Promise<Operation[]> {
  const response = await call(platform.app, 'GET', '/api/v1/openapi.json');
  expect(response.statusCode).toBe(200);
  const document = response.json<{
    paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>;
  }>();
  const found: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    if (!path.startsWith('/api/v1/services/') && !path.startsWith('/admin/v1/')) continue;
    for (const [method, operation] of Object.entries(methods)) {
      found.push({
        method: method.toUpperCase(),
        path,
        parameters: operation.parameters ?? [],
        body: operation.requestBody?.content['application/json']?.schema,
        binary: operation.requestBody !== undefined && operation.requestBody.content['application/json'] === undefined,
      });
    }
  }
  // Reads first, deletes last: a hostile input that is wrongly accepted should not hide later findings.
  return found.sort((a, b) => METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method));
}

function send(operation: Operation, fuzzCase: FuzzCase): Promise<Response> {
  const bearer = operation.path.startsWith('/admin/') ? ADMIN_TOKEN : world.key;
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
  if (fuzzCase.contentType) headers['content-type'] = fuzzCase.contentType;
  return platform.app.inject({
    method: operation.method as 'GET',
    url: fuzzCase.url,
    headers,
    ...(fuzzCase.body === undefined ? {} : { payload: fuzzCase.body }),
  });
}

/** What the run found: every reply that broke a rule, and how many requests were sent. */
interface RunReport {
  requests: number;
  problems: string[];
  /** Replies per status class, to see how deep the run got (2xx: accepted at the limits). */
  statuses: Record<string, number>;
}

async function runAllCases(): Promise<RunReport> {
  const report: RunReport = { requests: 0, problems: [], statuses: {} };
  for (const operation of operations) {
    const ids = { ...extra, ...(DRAFT_ONLY.has(`${operation.method} ${operation.path}`) ? { invoice: world.ids.draftInvoice } : {}) };
    for (const fuzzCase of casesFor(operation, (template) => world.fillPath(template, ids), world.ids)) {
      const response = await send(operation, fuzzCase);
      report.requests += 1;
      report.statuses[response.statusCode] = (report.statuses[response.statusCode] ?? 0) + 1;
      const problem = checkReply(response);
      if (problem) report.problems.push(`${operation.method} ${operation.path} [${fuzzCase.name}] -> ${problem}`);
    }
  }
  return report;
}

/** A reply breaks the rules when it is a 5xx, or a 4xx without the error shape. */
function checkReply(response: Response): string | undefined {
  const summary = `${response.statusCode} ${response.body.slice(0, 200)}`;
  if (response.statusCode >= 500) return summary;
  if (response.statusCode < 400) return undefined;
  try {
    const error = response.json<{ error?: { code?: unknown; message?: unknown; details?: unknown } }>().error;
    if (typeof error?.code !== 'string' || typeof error.message !== 'string' || !Array.isArray(error.details)) return `no error shape: ${summary}`;
  } catch {
    return `not JSON: ${summary}`;
  }
  return undefined;
}

/** A full collection when the process allows one; v8 can expose `gc` at run time without a node flag. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  gc?.();
  gc?.();
}

describe('the world', () => {
  it('gives every path parameter of the document a real id: each GET on one row answers 200', async () => {
    expect(world.skipped).toEqual({});
    const reads = operations.filter((operation) => operation.method === 'GET' && operation.path.includes('{'));
    expect(reads.length).toBeGreaterThan(20);
    for (const operation of reads) {
      const response = await send(operation, { name: 'valid', url: world.fillPath(operation.path, extra) });
      expect(response.statusCode, `${operation.path}: ${response.body.slice(0, 200)}`).toBe(200);
    }
  });
});

describe('bodies on every operation that can take one', () => {
  it('answers null, an array or a number with 400 validation_failed, and invalid UTF-8 with 400 invalid_json', async () => {
    // A raw-bytes body (the social upload PUT) is any bytes by design: no JSON shape to refuse.
    const writes = operations.filter((operation) => ['POST', 'PATCH', 'PUT', 'DELETE'].includes(operation.method) && !operation.binary);
    expect(writes.length).toBeGreaterThan(50);
    const invalidUtf8 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]); // {"a":"<0xff>"}
    for (const operation of writes) {
      const url = world.fillPath(operation.path, extra);
      for (const body of ['null', '[]', '[{"a":1}]', '42']) {
        const response = await send(operation, { name: body, url, body, contentType: 'application/json' });
        expect(`${response.statusCode} ${response.json().error?.code}`, `${operation.method} ${operation.path} with ${body}`).toBe('400 validation_failed');
      }
      const response = await send(operation, { name: 'invalid UTF-8', url, body: invalidUtf8, contentType: 'application/json' });
      expect(`${response.statusCode} ${response.json().error?.code}`, `${operation.method} ${operation.path} with invalid UTF-8`).toBe('400 invalid_json');
    }
  });
});

describe('fuzzing every operation of the OpenAPI document', () => {
  it('never answers 5xx, always answers 4xx in the error shape, stays up, and does not grow', async () => {
    expect(operations.length).toBeGreaterThan(90);

    // First run: the findings. It and the second run are the warm-up for the memory check (JIT,
    // compiled validators, caches, the allocator's arenas), which compares the third with the second.
    const first = await runAllCases();
    expect(first.problems.slice(0, 50), `${first.problems.length} problems in ${first.requests} requests`).toEqual([]);
    const second = await runAllCases();
    expect(second.problems.slice(0, 50)).toEqual([]);
    // The server's memory: on the embedded database, the process also holds the database, whose
    // WebAssembly memory grows with the rows each run adds and is not the server's to give back.
    const serverMemory = () => process.memoryUsage().rss - (platform.database.embeddedMemoryBytes?.() ?? 0);
    collectGarbage();
    const before = serverMemory();

    const third = await runAllCases();
    expect(third.problems.slice(0, 50)).toEqual([]);
    collectGarbage();
    const after = serverMemory();

    console.info(
      `openapi fuzz: ${operations.length} operations, ${first.requests} requests per run (${JSON.stringify(first.statuses)}); RSS less the embedded database ${(before / MEGABYTE).toFixed(0)} MB after the second run, ${(after / MEGABYTE).toFixed(0)} MB after the third`,
    );
    expect((after - before) / MEGABYTE).toBeLessThan(50);

    expect((await call(platform.app, 'GET', '/healthz')).statusCode).toBe(200);
    expect((await call(platform.app, 'GET', '/api/v1/services/crm/contacts?limit=1', { key: world.key })).statusCode).toBe(200);
  }, 300_000);
});
