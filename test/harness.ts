import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import type { FastifyBaseLogger, FastifyInstance, LightMyRequestResponse } from 'fastify';
import { inject, onTestFinished } from 'vitest';
import { readFileSync } from 'node:fs';
import { ContractChecker, contractOf, isContractPath, type RequestShape } from './contract.js';
import { callThroughContractProxy, isError, isUnresolvedRoute, recordProxyFinding, type Violation } from './contract-proxy-client.js';
import { loadConfig, type Config } from '../src/config/index.js';
import { openDatabase, type Database } from '../src/db/database.js';
import type { Mode } from '../src/db/types.js';
import { ManualClock } from '../src/lib/clock.js';
import { createTenantAdmin, type TenantAdmin } from '../src/platform/tenants/service.js';
import { createLogger, createRuntime, type Runtime } from '../src/runtime.js';
import type { ServiceDeps } from '../src/services/module.js';
import { ServiceRegistry } from '../src/services/registry.js';
import { testDatabaseUrl } from './database.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

export interface TestPlatform {
  app: FastifyInstance;
  runtime: Runtime;
  database: Database;
  clock: ManualClock;
  config: Config;
  admin: TenantAdmin;
  /** Dependencies as the app hands them to services, for tests that build a service directly. */
  serviceDeps(): ServiceDeps;
  /** A fresh tenant, so tests never see each other's rows. */
  newTenant(name?: string): Promise<TestTenant>;
  close(): Promise<void>;
}

export interface TestTenant {
  id: string;
  /** Creates a key of this tenant; defaults: test mode, every scope, a limit no test reaches by accident. */
  key(options?: { scopes?: string[]; mode?: Mode; rateLimitPerMinute?: number }): Promise<string>;
}

export interface StartOptions {
  env?: Record<string, string | undefined>;
  logger?: FastifyBaseLogger;
}

/**
 * One app and one database per test file (the embedded database costs ~1 s and ~200 MB
 * to start); tests isolate themselves by tenant. With DATABASE_URL set for the run, the
 * database is the real PostgreSQL server, in the suite's own schema.
 */
export async function startTestPlatform(options: StartOptions = {}): Promise<TestPlatform> {
  const databaseUrl = testDatabaseUrl();
  const config = loadConfig({
    ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    RUN_JOBS: 'false',
    SECRETS_KEY: TEST_SECRETS_KEY,
    // Fakes of outside services (Stripe) listen on 127.0.0.1.
    ALLOW_PRIVATE_TARGETS: 'true',
    // Every reply written by the projection is also written by fast-json-stringify and compared.
    SERIALIZER_CROSS_CHECK: 'true',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...options.env,
  });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: undefined, poolSize: 5, timeouts: config.database });
  const clock = new ManualClock();
  const runtime = await createRuntime(config, {
    clock,
    database,
    startJobs: false,
    logger: options.logger ?? createLogger('silent'),
  });
  const admin = createTenantAdmin({ db: database.db, clock });
  if (databaseUrl) await forgetWhatEarlierFilesLeft(database, clock.now());

  return {
    app: runtime.app,
    runtime,
    database,
    clock,
    config,
    admin,
    serviceDeps: () => ({ db: database.db, clock, jobs: runtime.jobs, events: runtime.events, outbound: runtime.outbound, services: new ServiceRegistry(), settings: undefined }),
    async newTenant(name = 'test tenant') {
      const tenant = await admin.createTenant(name);
      return {
        id: tenant.id,
        async key({ scopes = ['*'], mode = 'test', rateLimitPerMinute = 100_000 } = {}) {
          const { secret } = await admin.createApiKey(tenant.id, { mode, scopes, rate_limit_per_minute: rateLimitPerMinute });
          return secret;
        },
      };
    },
    async close() {
      await runtime.close();
      await database.close();
    },
  };
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * The test sends input the document forbids on purpose: the request side of the contract
   * check is waived for this call (the reply is still checked). `expectError` on the reply
   * waives it too; a request the document forbids and the server accepts always fails.
   */
  invalid?: boolean;
}

export type Response = LightMyRequestResponse;

/**
 * Calls the app in-process; `key` becomes the bearer token, `body` JSON. Every call under
 * /api/v1, /admin/v1, /healthz and /readyz is checked against the OpenAPI document the app
 * serves (test/contract.ts): a reply that disagrees with it fails the test at once; so does a
 * request that disagrees with it and was accepted. A refused request that disagrees with it
 * must be acknowledged by the test (`expectError` on the reply, or `invalid: true`).
 */
export async function call(app: FastifyInstance, method: string, url: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  const hasBody = options.body !== undefined;
  if (hasBody) headers['content-type'] ??= 'application/json';
  const payload = hasBody ? (typeof options.body === 'string' || Buffer.isBuffer(options.body) ? options.body : JSON.stringify(options.body)) : undefined;
  const underContract = isContractPath(new URL(url, 'http://contract').pathname);
  const request = { method, url, headers: lowerCased(headers), body: payload };
  const proxied = underContract && contractProxy && (await proxyCanCarry(app, request)) ? await callThroughContractProxy(app, contractProxy, request) : undefined;
  const response = proxied?.response ?? (await app.inject({ method: method as never, url, headers, ...(payload !== undefined ? { payload } : {}) }));
  if (underContract) await checkContract(app, request, response, options);
  if (proxied) checkProxyFindings(request, response, proxied.violations);
  return response;
}

/** Prism's validation proxy in front of the app, when the run asks for it (CONTRACT_PROXY=prism). */
const contractProxy = inject('contractProxy');

/**
 * Prism parses a JSON body and forwards it re-serialised, so a body goes through it only when
 * that changes nothing: an object or array in its JSON.stringify form (not `null`, `1e400`,
 * duplicate keys or malformed JSON, which tests of bad input send on purpose). A body sent to
 * an operation that declares none (`{}` or empty, which the server tolerates) goes straight
 * to the app too: Prism would report the body itself.
 */
async function proxyCanCarry(app: FastifyInstance, request: RequestShape): Promise<boolean> {
  // OPTIONS is no documented operation (Prism would find no route for its 204), and Prism reads a
  // compressed reply as it is sent: both are checked by test/contract.ts alone.
  if (request.method.toUpperCase() === 'OPTIONS' || request.headers['accept-encoding'] !== undefined) return false;
  // HEAD is checked by test/contract.ts as the GET it mirrors; Prism knows only documented methods.
  if (request.method.toUpperCase() === 'HEAD' || !readableUrl(request.url)) return false;
  // Routes a test adds to its own app are in that app's document, not in the one Prism holds.
  const inAppDocument = (await contractOf(app)).declaresBody(request.method, request.url) !== undefined;
  if (inAppDocument && proxyDocument().declaresBody(request.method, request.url) === undefined) return false;
  if (request.body === undefined) return true;
  if (!(await contractOf(app)).declaresBody(request.method, request.url)) return false;
  // A body over the server's limit is refused before it is read, which a proxy reports as a broken upstream.
  if (Buffer.byteLength(request.body) > 512 * 1024) return false;
  if (!(request.headers['content-type'] ?? '').includes('json')) return false;
  try {
    const text = typeof request.body === 'string' ? request.body : new TextDecoder('utf-8', { fatal: true }).decode(request.body);
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && JSON.stringify(parsed) === text;
  } catch {
    return false;
  }
}

let proxyChecker: ContractChecker | undefined;
/** The document Prism was started with (the one a fresh server serves). */
function proxyDocument(): ContractChecker {
  return (proxyChecker ??= new ContractChecker(JSON.parse(readFileSync(contractProxy!.documentPath, 'utf8'))));
}

/** Prism cannot survive a URL whose percent-encoding does not decode (the router tests send such URLs on purpose). */
function readableUrl(url: string): boolean {
  try {
    decodeURIComponent(url);
    return true;
  } catch {
    return false;
  }
}

/** What Prism found on a proxied call: a response violation always fails; a request violation fails if the server accepted it. */
function checkProxyFindings(request: RequestShape, response: Response, violations: Violation[]): void {
  const errors = violations.filter(isError);
  const operation = `${request.method} ${new URL(request.url, 'http://contract').pathname}`;
  recordProxyFinding(contractProxy!.reportDir, { operation, status: response.statusCode, violations });
  const responseErrors = errors.filter((violation) => violation.location[0] === 'response');
  if (responseErrors.length > 0) throw new Error(`Prism: the reply of ${operation} (${response.statusCode}) violates the document:\n  - ${describe(responseErrors)}`);
  if (response.statusCode < 400 && violations.some(isUnresolvedRoute))
    throw new Error(`Prism: ${operation} answered ${response.statusCode}, but the document has no such operation`);
  const requestErrors = errors.filter((violation) => violation.location[0] !== 'response');
  if (requestErrors.length > 0 && response.statusCode < 400) {
    throw new Error(`Prism: the server accepted (${response.statusCode}) a request of ${operation} that violates the document:\n  - ${describe(requestErrors)}`);
  }
}

function describe(violations: Violation[]): string {
  return violations.map((violation) => `${violation.location.join('.')}: ${violation.message}`).join('\n  - ');
}

/** Request-side disagreements of refused requests, until the test acknowledges them. */
const unacknowledged = new WeakMap<Response, string[]>();

async function checkContract(app: FastifyInstance, request: RequestShape, response: Response, options: CallOptions): Promise<void> {
  const contract = await contractOf(app);
  const replyProblems = contract.checkResponse(request, decoded(response));
  if (replyProblems.length > 0) throw new Error(`The reply disagrees with the OpenAPI document:\n  - ${replyProblems.join('\n  - ')}`);
  if (options.invalid) return;
  const requestProblems = contract.checkRequest(request);
  if (requestProblems.length === 0) return;
  if (response.statusCode < 400) {
    throw new Error(`The server accepted (${response.statusCode}) a request the OpenAPI document forbids:\n  - ${requestProblems.join('\n  - ')}`);
  }
  unacknowledged.set(response, requestProblems);
  try {
    onTestFinished(() => {
      const pending = unacknowledged.get(response);
      if (pending)
        throw new Error(`A request the OpenAPI document forbids was sent without saying so (use expectError on the reply, or invalid: true):\n  - ${pending.join('\n  - ')}`);
    });
  } catch (error) {
    if ((error as Error).message.startsWith('A request the OpenAPI')) throw error;
    // Outside a test (a beforeAll fixture): nothing can acknowledge it later.
    throw new Error(`A fixture sent a request the OpenAPI document forbids:\n  - ${requestProblems.join('\n  - ')}`);
  }
}

/** The reply as the document describes it: a compressed body (Content-Encoding br or gzip) is checked decoded. */
function decoded(response: Response): Response {
  const encoding = response.headers['content-encoding'];
  if (encoding !== 'br' && encoding !== 'gzip') return response;
  const rawPayload = encoding === 'br' ? brotliDecompressSync(response.rawPayload) : gunzipSync(response.rawPayload);
  return { ...response, rawPayload, body: rawPayload.toString('utf8') };
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** Checks a reply is the platform's error shape with the given status and code; returns the error. */
export function expectError(response: Response, status: number, code: string) {
  unacknowledged.delete(response);
  const body = response.json<{ error?: { code?: unknown; message?: unknown; details?: unknown } }>();
  const summary = `${response.statusCode} ${response.body.slice(0, 300)}`;
  if (response.statusCode !== status || body.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${summary}`);
  }
  if (typeof body.error.message !== 'string' || !Array.isArray(body.error.details)) {
    throw new Error(`error body lacks message or details: ${summary}`);
  }
  return body.error as { code: string; message: string; details: Array<{ path: string; code: string; message: string; [k: string]: unknown }> };
}

/**
 * On PostgreSQL the test files of one worker share a schema, one after another, and each moves
 * its own clock. What an earlier file left would leak into this one:
 * - recurring jobs it ran days ahead (the platform sweep) would not be due again until that far
 *   ahead of this file's clock: they are made due now;
 * - its webhook endpoints would get this file's events, and this file's job runs would wait on
 *   deliveries to them (DNS lookups of example hosts, refused ports): they are turned off;
 * - its events (often stamped days ahead) would be read again by every job run of this file
 *   (the affiliates sales reader reads from its clock's now on): they are deleted;
 * - its tenants' jobs (billing clocks, sends, publishes) would become due as this file moves its
 *   clock years ahead, and each run of this file would catch them all up: they are deleted,
 *   since no tenant of this file exists yet.
 */
async function forgetWhatEarlierFilesLeft(database: Database, now: Date): Promise<void> {
  await sql`update jobs set run_at = ${now} where status = 'queued' and dedupe_key like 'recurring:%' and run_at > ${now}`.execute(database.db);
  await sql`update webhook_endpoints set status = 'disabled', disabled_reason = 'manual' where status = 'enabled'`.execute(database.db);
  await sql`update webhook_deliveries set status = 'failed', next_attempt_at = null where status = 'pending'`.execute(database.db);
  await sql`delete from events`.execute(database.db);
  await sql`delete from jobs where tenant_id is not null`.execute(database.db);
}
