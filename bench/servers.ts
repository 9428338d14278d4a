/**
 * One benchmark target per process: `node .bench/servers.mjs <full|baseline|hello>`, forked
 * by bench/run.ts with an IPC channel. The child reports `{ type: 'ready', port }` once it
 * listens and shuts down on `{ type: 'stop' }` (or when the parent goes away).
 *
 * Environment: BENCH_DATABASE_URL (already pointing at the bench schema), BENCH_PLAN (baseline:
 * the JSON file of recorded statements per endpoint), BENCH_REDIS_URL (optional, full app only),
 * BENCH_APP_COMPRESSION (optional, full app only: its COMPRESSION).
 */
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pg from 'pg';
import { loadConfig } from '../src/config/index.js';
import { createRuntime } from '../src/runtime.js';
import { pgTypes } from '../src/db/timestamptz.js';
import { HELLO_PATH, POOL_SIZE, TARGETS, type ChildMessage, type EndpointPlan, type ParentMessage, type Target } from './shared.js';

interface Server {
  port: number;
  close(): Promise<void>;
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
  // bench/compression.ts runs the app with compression on and off.
  if (process.env.BENCH_APP_COMPRESSION) env.COMPRESSION = process.env.BENCH_APP_COMPRESSION;
  const config = loadConfig(env);
  // No logger option: createRuntime uses the production logger (one JSON line per request
  // to stdout), and run.ts points this process's stdout at /dev/null.
  const runtime = await createRuntime(config, { startJobs: false });
  await runtime.app.listen({ port: 0, host: '127.0.0.1' });
  return { port: portOf(runtime.app.server.address()), close: () => runtime.close() };
}

/**
 * (a) Bare Fastify + pg.Pool: for each endpoint, the statements the app ran for it (recorded
 * from the app by run.ts), in the same order and concurrency, answered with their rows as JSON.
 * No auth, no validation, no schemas, no presenters, no logging.
 */
async function startBaseline(databaseUrl: string): Promise<Server> {
  const plans = JSON.parse(fs.readFileSync(required('BENCH_PLAN'), 'utf8')) as EndpointPlan[];
  // Configured as the app's pool: same size, same type parsers (src/db/timestamptz.ts).
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_SIZE, types: pgTypes });
  pool.on('error', () => {});
  const app = Fastify();
  for (const plan of plans) {
    app.get(new URL(plan.url, 'http://bench').pathname, async () => {
      const results: unknown[][] = [];
      for (const group of plan.groups) {
        const answers = await Promise.all(group.map((statement) => pool.query(statement.sql, statement.values)));
        for (const answer of answers) results.push(answer.rows);
      }
      return { results };
    });
  }
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
  app.get(HELLO_PATH, async () => ({ hello: 'world' }));
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
  const server =
    target === 'full' ? await startFull(required('BENCH_DATABASE_URL')) : target === 'baseline' ? await startBaseline(required('BENCH_DATABASE_URL')) : await startHello();

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
