/**
 * One benchmark target per process: `tsx bench/servers.ts <full|baseline|hello>`, forked
 * by bench/run.ts with an IPC channel. The child reports `{ type: 'ready', port }` once it
 * listens and shuts down on `{ type: 'stop' }` (or when the parent goes away).
 *
 * Every target serves the same path, so the load generator sends identical requests.
 *
 * Environment: BENCH_DATABASE_URL (already pointing at the bench schema), BENCH_TENANT_ID and
 * BENCH_MODE (baseline only), BENCH_REDIS_URL (optional, full app only).
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pg from 'pg';
import { loadConfig } from '../src/config/index.js';
import { createRuntime } from '../src/runtime.js';
import { pgTypes } from '../src/db/timestamptz.js';
import { COUNT_SQL, LIST_PATH, LIST_SQL, POOL_SIZE, TARGETS, type ChildMessage, type ParentMessage, type Target } from './shared.js';

interface Server {
  port: number;
  close(): Promise<void>;
}

interface ContactDbRow {
  id: string;
  name: string;
  email: string | null;
  phone: string | null;
  company_id: string | null;
  created_at: Date;
  updated_at: Date;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/** The real app, assembled exactly as src/server.ts does, with its own production logger. */
async function startFull(databaseUrl: string): Promise<Server> {
  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'info',
    RUN_JOBS: 'false',
    PORT: '0',
    HOST: '127.0.0.1',
    SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
  };
  if (process.env.BENCH_REDIS_URL) env.REDIS_URL = process.env.BENCH_REDIS_URL;
  const config = loadConfig(env);
  // No logger option: createRuntime uses the production logger (one JSON line per request
  // to stdout), and run.ts points this process's stdout at /dev/null.
  const runtime = await createRuntime(config, { startJobs: false });
  await runtime.app.listen({ port: 0, host: '127.0.0.1' });
  return { port: portOf(runtime.app.server.address()), close: () => runtime.close() };
}

/** (a) Bare Fastify + pg.Pool: the same two queries and JSON shape, no auth, schemas or logging. */
async function startBaseline(databaseUrl: string): Promise<Server> {
  const tenantId = required('BENCH_TENANT_ID');
  const mode = required('BENCH_MODE');
  // Configured as the app's pool: same size, same type parsers (src/db/timestamptz.ts).
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_SIZE, types: pgTypes });
  pool.on('error', () => {});
  const app = Fastify();
  app.get(LIST_PATH, async (request) => {
    const query = request.query as { limit?: string; offset?: string };
    const limit = query.limit === undefined ? 50 : Number(query.limit);
    const offset = query.offset === undefined ? 0 : Number(query.offset);
    const [list, count] = await Promise.all([
      pool.query<ContactDbRow>(LIST_SQL, [tenantId, mode, limit, offset]),
      pool.query<{ total: string }>(COUNT_SQL, [tenantId, mode]),
    ]);
    const total = Number(count.rows[0]?.total ?? 0);
    const data = list.rows.map((row) => ({ ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() }));
    return { data, meta: { limit, offset, total, has_more: offset + data.length < total } };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    port: portOf(app.server.address()),
    async close() {
      await app.close();
      await pool.end();
    },
  };
}

/** (b) Bare Fastify hello-world. */
async function startHello(): Promise<Server> {
  const app = Fastify();
  app.get(LIST_PATH, async () => ({ hello: 'world' }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { port: portOf(app.server.address()), close: () => app.close() };
}

function portOf(address: AddressInfo | string | null): number {
  if (address === null || typeof address === 'string') throw new Error(`unexpected listen address ${String(address)}`);
  return address.port;
}

function send(message: ChildMessage): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  const target = process.argv[2] as Target;
  if (!TARGETS.includes(target)) throw new Error(`usage: servers.ts <${TARGETS.join('|')}>`);
  const databaseUrl = target === 'hello' ? '' : required('BENCH_DATABASE_URL');
  const server = target === 'full' ? await startFull(databaseUrl) : target === 'baseline' ? await startBaseline(databaseUrl) : await startHello();

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    try {
      await server.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('message', (message: ParentMessage) => {
    if (message?.type === 'stop') void stop();
  });
  process.on('disconnect', () => void stop());
  process.on('SIGTERM', () => void stop());
  send({ type: 'ready', port: server.port });
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`bench server failed: ${message}\n`);
  send({ type: 'error', message });
  process.exit(1);
});
