import net from 'node:net';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../harness.js';
import { testDatabaseUrl } from '../database.js';

/**
 * "Nothing waits forever", over real sockets: slow and silent clients are closed after bounded
 * times without slowing anyone else, transfers that make progress are never cut, and more slow
 * requests than database connections get 503 with Retry-After instead of hanging.
 * Timeouts are set low here; the bounds asserted are generous correctness bounds, not timings.
 */
const IDLE_MS = 1_000;
const HEADERS_MS = 1_000;
const KEEP_ALIVE_MS = 500;
const CONNECTION_WAIT_MS = 300;
const HOLD_MS = 2_000;
const STATEMENT_MS = 1_500;
const LOCK_MS = 300;
const IDLE_IN_TRANSACTION_MS = 1_000;

const onPostgres = Boolean(testDatabaseUrl());
let platform: TestPlatform;
let baseUrl: string;
let port: number;
let key: string;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const Ok = { 200: Type.Object({ data: Type.Object({ ok: Type.Boolean() }) }) };

beforeAll(async () => {
  platform = await startTestPlatform({
    env: {
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
      HTTP_IDLE_TIMEOUT_MS: String(IDLE_MS),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
      DB_CONNECTION_WAIT_MS: String(CONNECTION_WAIT_MS),
      DB_EMBEDDED_HOLD_TIMEOUT_MS: String(HOLD_MS),
      DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_MS),
      DB_LOCK_TIMEOUT_MS: String(LOCK_MS),
      DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: String(IDLE_IN_TRANSACTION_MS),
    },
  });
  const { app, database } = platform;
  const db = database.db;
  app.get('/api/v1/services/crm/test-hold-connection', {
    config: { scope: 'service.crm.view' },
    schema: { querystring: Type.Object({ ms: Type.Integer() }), response: Ok },
    // A request that keeps its database connection (a transaction) while it awaits something else.
    handler: async (request) => {
      await db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await sleep((request.query as { ms: number }).ms);
        await sql`select 1`.execute(trx);
      });
      return { data: { ok: true } };
    },
  });
  app.get('/api/v1/services/crm/test-slow-statement', {
    config: { scope: 'service.crm.view' },
    schema: { response: Ok },
    handler: async () => {
      await sql`select pg_sleep(10)`.execute(db);
      return { data: { ok: true } };
    },
  });
  app.get('/api/v1/services/crm/test-lock-tenant', {
    config: { scope: 'service.crm.view' },
    schema: { querystring: Type.Object({ ms: Type.Integer() }), response: Ok },
    handler: async (request) => {
      await db.transaction().execute(async (trx) => {
        await sql`select id from tenants where id = ${request.auth!.tenantId} for update`.execute(trx);
        await sleep((request.query as { ms: number }).ms);
      });
      return { data: { ok: true } };
    },
  });
  app.get('/api/v1/services/crm/test-slow-handler', {
    config: { scope: 'service.crm.view' },
    schema: { response: Ok },
    handler: async () => {
      await sleep(IDLE_MS * 2.5);
      return { data: { ok: true } };
    },
  });
  app.get('/api/v1/services/crm/test-stream', {
    config: { scope: 'service.crm.view' },
    schema: { response: { 200: { description: 'Lines of text.', content: { 'text/plain': { schema: { type: 'string' } } } } } },
    handler: async (_request, reply) => {
      async function* chunks() {
        for (let i = 0; i < 12; i += 1) {
          yield `line ${i}\n`;
          await sleep(IDLE_MS / 4);
        }
      }
      return reply.type('text/plain').send(Readable.from(chunks()));
    },
  });
  app.post('/api/v1/services/crm/test-echo', {
    config: { scope: 'service.crm.manage' },
    schema: { body: Type.Object({ text: Type.String() }), response: { 200: Type.Object({ data: Type.Object({ length: Type.Integer() }) }) } },
    handler: async (request) => ({ data: { length: (request.body as { text: string }).text.length } }),
  });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  port = Number(new URL(baseUrl).port);
  key = await (await platform.newTenant()).key();
  // Warm the key cache: later requests then need no connection before their handler.
  expect((await get('/api/v1/services/crm/contacts')).status).toBe(200);
});
afterAll(() => platform.close());

function get(path: string): Promise<Response> {
  return fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(15_000) });
}

/** A raw connection that records when the server closes it. */
function rawSocket(): Promise<{ socket: net.Socket; closed: Promise<void>; received: () => string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', () => {}); // a reset counts as closed
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.once('connect', () => resolve({ socket, closed, received: () => data }));
    socket.once('error', reject);
  });
}

/** Resolves true when `closed` settles within `ms`, false otherwise. */
async function closesWithin(closed: Promise<void>, ms: number): Promise<boolean> {
  return Promise.race([closed.then(() => true), sleep(ms).then(() => false)]);
}

describe('slow and silent clients', () => {
  it('a few hundred slowloris sockets do not stop a normal client, and are all closed after the header timeout', async () => {
    const silent = await Promise.all(Array.from({ length: 150 }, () => rawSocket()));
    const dripping = await Promise.all(Array.from({ length: 150 }, () => rawSocket()));
    const drip = setInterval(() => {
      for (const { socket } of dripping) if (!socket.destroyed) socket.write(`X-Drip-${Math.random().toString(36).slice(2, 6)}: 1\r\n`);
    }, 200);
    for (const { socket } of dripping) socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
    try {
      // Served at all within 5 s, under the load of 300 hostile sockets (a correctness bound).
      const health = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(5_000) });
      expect(health.status).toBe(200);
      const list = await fetch(`${baseUrl}/api/v1/services/crm/contacts`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(5_000) });
      expect(list.status).toBe(200);

      const all = [...silent, ...dripping];
      const results = await Promise.all(all.map(({ closed }) => closesWithin(closed, HEADERS_MS + 4_000)));
      expect(results.filter((closed) => !closed)).toHaveLength(0);
      // The dripping ones were told why, with 408, before the close.
      expect(dripping.filter(({ received }) => received().startsWith('HTTP/1.1 408')).length).toBeGreaterThan(0);
    } finally {
      clearInterval(drip);
      for (const { socket } of [...silent, ...dripping]) socket.destroy();
    }
  });

  it('closes a keep-alive connection left idle after a request', async () => {
    const { socket, closed, received } = await rawSocket();
    socket.write(`GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n`);
    expect(await closesWithin(closed, KEEP_ALIVE_MS + 3_000)).toBe(true);
    expect(received()).toMatch(/^HTTP\/1\.1 200/);
  });

  it('closes a connection whose request body stopped arriving', async () => {
    const { socket, closed } = await rawSocket();
    socket.write(
      `POST /api/v1/services/crm/test-echo HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"text":"`,
    );
    expect(await closesWithin(closed, IDLE_MS + 3_000)).toBe(true);
  });
});

describe('transfers that make progress are not cut', () => {
  it('answers a handler that works for longer than the idle timeout', async () => {
    const response = await get('/api/v1/services/crm/test-slow-handler');
    expect(response.status).toBe(200);
  });

  it('streams a reply for longer than the idle timeout while bytes keep flowing', async () => {
    const response = await get('/api/v1/services/crm/test-stream');
    const text = await response.text();
    expect(text.trim().split('\n')).toHaveLength(12);
  });

  it('accepts a request body that trickles in for longer than the idle timeout', async () => {
    const { socket, received, closed } = await rawSocket();
    const body = JSON.stringify({ text: 'x'.repeat(40) });
    socket.write(
      `POST /api/v1/services/crm/test-echo HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    const parts = body.match(/.{1,6}/g)!;
    for (const part of parts) {
      await sleep(IDLE_MS / 3);
      socket.write(part);
    }
    expect(parts.length * (IDLE_MS / 3)).toBeGreaterThan(IDLE_MS * 2);
    await closed;
    expect(received()).toMatch(/^HTTP\/1\.1 200/);
    expect(received()).toContain('{"data":{"length":40}}');
  });
});

describe('more slow requests than database connections', () => {
  it('answers the overflow 503 service_unavailable with Retry-After, hangs none, and recovers', async () => {
    const responses = await Promise.all(Array.from({ length: 12 }, () => get(`/api/v1/services/crm/test-hold-connection?ms=800`)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(0);
    const refused = responses.filter((response) => response.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
    for (const response of refused) {
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      const body = (await response.json()) as { error: { code: string; message: string; details: unknown[] } };
      expect(body.error.code).toBe('service_unavailable');
      expect(body.error.details).toEqual([]);
    }
    expect((await get('/api/v1/services/crm/contacts')).status).toBe(200);
    expect((await get('/api/v1/services/crm/test-hold-connection?ms=10')).status).toBe(200);
  });
});

describe.runIf(onPostgres)('database timeouts on PostgreSQL', () => {
  it('cancels a statement past statement_timeout with 503', async () => {
    const response = await get('/api/v1/services/crm/test-slow-statement');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
  });

  it('gives up waiting for a lock after lock_timeout with 503', async () => {
    const holder = get('/api/v1/services/crm/test-lock-tenant?ms=700');
    await sleep(200);
    const waiter = await get('/api/v1/services/crm/test-lock-tenant?ms=0');
    expect(waiter.status).toBe(503);
    expect((await holder).status).toBe(200);
  });

  it('ends a transaction left idle past idle_in_transaction_session_timeout: 503, and the process carries on', async () => {
    const response = await get(`/api/v1/services/crm/test-hold-connection?ms=${IDLE_IN_TRANSACTION_MS * 2}`);
    expect(response.status).toBe(503);
    expect((await get('/api/v1/services/crm/contacts')).status).toBe(200);
  });
});

// On PGlite statements run inside the process and cannot be cancelled; a held transaction can.
describe.runIf(!onPostgres)('the embedded database', () => {
  it('takes the session back from a transaction held past its limit, so later requests are served', async () => {
    const stuck = get(`/api/v1/services/crm/test-hold-connection?ms=${HOLD_MS + 2_000}`);
    await sleep(HOLD_MS + 200);
    expect((await get('/api/v1/services/crm/contacts')).status).toBe(200);
    const answered = await stuck;
    expect(answered.status).toBe(503);
    expect(answered.headers.get('retry-after')).toBe('1');
  });
});
