/**
 * Webhooks, in one run:
 * 1. delivery throughput: events recorded, fanned out, signed and POSTed to a receiver on
 *    127.0.0.1 that answers 200 at once, by the background dispatcher of one process;
 * 2. what recording an event adds to a write: `POST crm/contacts` (which records
 *    crm.contact.created in its transaction) against the same route with recording switched
 *    off, alternating, under the same load.
 *
 * Usage: npx tsx bench/webhooks.ts   (needs PostgreSQL: DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
 * Settings: BENCH_EVENTS (2000), BENCH_ROUNDS (3), BENCH_CONNECTIONS (16), BENCH_DURATION (5 s).
 * Works in its own schema, webhooks_bench, dropped at the start and at the end.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config/index.js';
import { createRuntime, type Runtime } from '../src/runtime.js';
import { createTenantAdmin } from '../src/platform/tenants/service.js';

const SCHEMA = 'webhooks_bench';
const setting = (name: string, fallback: number) => Math.max(1, Number(process.env[name] ?? fallback) || fallback);
const eventCount = setting('BENCH_EVENTS', 2000);
const rounds = setting('BENCH_ROUNDS', 3);
const connections = setting('BENCH_CONNECTIONS', 16);
const duration = setting('BENCH_DURATION', 5);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function withAdminPool<T>(databaseUrl: string, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

/** Counts requests and answers 200 at once. */
async function startReceiver(): Promise<{ url: string; received: () => number; close: () => Promise<void> }> {
  let received = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function deliveryThroughput(runtime: Runtime, key: string, tenantId: string): Promise<void> {
  const receiver = await startReceiver();
  try {
    const created = await runtime.app.inject({
      method: 'POST',
      url: '/api/v1/services/webhooks/endpoints',
      headers: { authorization: `Bearer ${key}` },
      payload: { url: receiver.url, enabled_events: ['webhooks.*'] },
    });
    if (created.statusCode !== 201) throw new Error(`endpoint: ${created.body}`);
    const endpoint = created.json().data;
    const object = { ...endpoint, created_at: new Date(endpoint.created_at), updated_at: new Date(endpoint.updated_at) };
    const owner = { tenantId, mode: 'test' as const };
    // Recorded first, with the dispatcher stopped, so the figure is delivery alone.
    await runtime.jobs.stop();
    const recordStarted = performance.now();
    for (let index = 0; index < eventCount; index += 100) {
      await runtime.database.db.transaction().execute(async (tx) => {
        for (let offset = 0; offset < 100 && index + offset < eventCount; offset += 1) await runtime.events.record(tx, owner, 'webhooks.endpoint.pinged', object);
      });
    }
    const recordedMs = performance.now() - recordStarted;
    const started = performance.now();
    runtime.jobs.start();
    while (receiver.received() < eventCount) await new Promise((resolve) => setTimeout(resolve, 20));
    const seconds = (performance.now() - started) / 1000;
    console.log(`recording: ${eventCount} events in ${recordedMs.toFixed(0)} ms (${((recordedMs * 1000) / eventCount).toFixed(0)} us each, 100 per transaction)`);
    console.log(`delivery: ${eventCount} events fanned out, signed and POSTed in ${seconds.toFixed(2)} s: ${(eventCount / seconds).toFixed(0)} events/s`);
  } finally {
    await receiver.close();
  }
}

async function writeLatency(runtime: Runtime, port: number, key: string): Promise<void> {
  const events = runtime.events;
  const record = events.record.bind(events);
  const figures = { with: [] as number[], without: [] as number[], withRate: [] as number[], withoutRate: [] as number[] };
  for (let round = 0; round < rounds; round += 1) {
    for (const variant of round % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const)) {
      // The same route and transaction, with the event's insert switched off for the baseline.
      events.record = variant === 'with' ? record : async () => ({}) as Awaited<ReturnType<typeof record>>;
      const result = await autocannon({
        url: `http://127.0.0.1:${port}/api/v1/services/crm/contacts`,
        method: 'POST',
        connections,
        duration,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Bench contact', email: 'bench@example.com' }),
      });
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${variant}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      figures[variant].push(result.latency.p50);
      figures[`${variant}Rate`].push(result.requests.average);
      console.log(`round ${round + 1}, ${variant} event: p50 ${result.latency.p50} ms, ${result.requests.average.toFixed(0)} writes/s`);
    }
  }
  events.record = record;
  const withP50 = median(figures.with);
  const withoutP50 = median(figures.without);
  console.log(
    `\nwrite with event: p50 ${withP50} ms, ${median(figures.withRate).toFixed(0)} writes/s; without: p50 ${withoutP50} ms, ${median(figures.withoutRate).toFixed(0)} writes/s; ` +
      `added p50 ${(withP50 - withoutP50).toFixed(2)} ms, throughput with/without ${((median(figures.withRate) / median(figures.withoutRate)) * 100).toFixed(1)}% (median of ${rounds} rounds, ${connections} connections)`,
  );
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  await withAdminPool(databaseUrl, (pool) => pool.query(`drop schema if exists ${SCHEMA} cascade; create schema ${SCHEMA}`));
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${SCHEMA}`);
  const config = loadConfig({
    DATABASE_URL: url.toString(),
    LOG_LEVEL: 'silent',
    RUN_JOBS: 'true',
    ALLOW_PRIVATE_TARGETS: 'true',
    SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
  });
  const runtime = await createRuntime(config, { logger: pino({ level: 'silent' }) });
  try {
    const admin = createTenantAdmin({ db: runtime.database.db, clock: runtime.clock });
    const tenant = await admin.createTenant('webhooks bench');
    const { secret } = await admin.createApiKey(tenant.id, { mode: 'test', scopes: ['*'], rate_limit_per_minute: 100_000_000 });
    await deliveryThroughput(runtime, secret, tenant.id);
    await runtime.app.listen({ port: 0, host: '127.0.0.1' });
    await autocannon({
      url: `http://127.0.0.1:${(runtime.app.server.address() as AddressInfo).port}/api/v1/services/crm/contacts`,
      connections,
      duration: 2,
      headers: { authorization: `Bearer ${secret}` },
    });
    await writeLatency(runtime, (runtime.app.server.address() as AddressInfo).port, secret);
  } finally {
    await runtime.close();
    await withAdminPool(databaseUrl, (pool) => pool.query(`drop schema if exists ${SCHEMA} cascade`));
  }
}

await main();
