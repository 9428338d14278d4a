/**
 * Compression on vs off, in the same run: the full app (bench/servers.ts `full`) with
 * COMPRESSION=true and with COMPRESSION=false, under the same load of `GET crm contacts` with
 * `Accept-Encoding: gzip, br`, on a small page (below the 1 KB threshold: what the plugin costs
 * when it compresses nothing) and a full page of 50 (compressed: what brotli costs).
 * Goal: the small page with compression on within 5% of its throughput without.
 *
 * Usage: npx tsx bench/compression.ts   (needs PostgreSQL: DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
 * Settings: BENCH_ROUNDS (3), BENCH_CONNECTIONS (64), BENCH_DURATION (5 s), BENCH_WARMUP (1 s).
 * Works in its own schema, compression_bench, dropped at the start and at the end.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config/index.js';
import { createRuntime } from '../src/runtime.js';
import { createTenantAdmin } from '../src/platform/tenants/service.js';
import type { ChildMessage } from './shared.js';

const SCHEMA = 'compression_bench';
const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const CONTACTS = '/api/v1/services/crm/contacts';
const PAGES = [
  { name: 'small page (limit=3)', path: `${CONTACTS}?limit=3`, goal: true },
  { name: 'full page (limit=50)', path: `${CONTACTS}?limit=50`, goal: false },
];
const CONFIGS = ['on', 'off'] as const;
type Compression = (typeof CONFIGS)[number];

const setting = (name: string, fallback: number) => Math.max(1, Number(process.env[name] ?? fallback) || fallback);
const rounds = setting('BENCH_ROUNDS', 3);
const connections = setting('BENCH_CONNECTIONS', 64);
const duration = setting('BENCH_DURATION', 5);
const warmup = Number(process.env.BENCH_WARMUP ?? 1);

async function withAdminPool<T>(databaseUrl: string, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

/** 120 contacts for a bench tenant, through the public API in process; returns its key. */
async function seed(benchUrl: string): Promise<string> {
  const config = loadConfig({ DATABASE_URL: benchUrl, LOG_LEVEL: 'silent', RUN_JOBS: 'false', SECRETS_KEY: Buffer.alloc(32, 1).toString('base64') });
  const runtime = await createRuntime(config, { logger: pino({ level: 'silent' }), startJobs: false });
  try {
    const admin = createTenantAdmin({ db: runtime.database.db, clock: runtime.clock });
    const tenant = await admin.createTenant('compression bench');
    const { secret } = await admin.createApiKey(tenant.id, { mode: 'test', scopes: ['*'], rate_limit_per_minute: 1_000_000 });
    for (let index = 0; index < 120; index += 1) {
      const body = { name: `Contact ${index}`, email: `contact${index}@example.com`, phone: `+1555${String(index).padStart(7, '0')}` };
      const response = await runtime.app.inject({ method: 'POST', url: CONTACTS, headers: { authorization: `Bearer ${secret}` }, payload: body });
      if (response.statusCode !== 201) throw new Error(`seeding failed: ${response.statusCode} ${response.body}`);
    }
    return secret;
  } finally {
    await runtime.close();
  }
}

/** The full app in a child process, as bench/run.ts starts it, with the start script's heap flags. */
async function startServer(benchUrl: string, compression: Compression): Promise<{ port: number; child: ChildProcess }> {
  const child = fork(path.join(BENCH_DIR, 'servers.ts'), ['full'], {
    execArgv: ['--import', 'tsx', '--max-old-space-size=256', '--max-semi-space-size=8'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_DATABASE_URL: benchUrl, BENCH_APP_COMPRESSION: compression === 'on' ? 'true' : 'false' },
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: ChildMessage) => (message.type === 'ready' ? resolve(message.port) : reject(new Error(message.message))));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { port, child };
}

async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send({ type: 'stop' });
  await exited;
}

async function load(url: string, seconds: number, secret: string): Promise<number> {
  const result = await autocannon({ url, connections, duration: seconds, headers: { authorization: `Bearer ${secret}`, 'accept-encoding': 'gzip, br' } });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return result.requests.average;
}

/** Which encoding the page gets, and its size once decoded (fetch decodes), to show which page is compressed. */
async function describePage(port: number, pagePath: string, secret: string): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}${pagePath}`, { headers: { authorization: `Bearer ${secret}`, 'accept-encoding': 'gzip, br' } });
  const bytes = (await response.arrayBuffer()).byteLength;
  return `${response.headers.get('content-encoding') ?? 'identity'}, ${bytes} bytes of JSON`;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  await withAdminPool(databaseUrl, (pool) => pool.query(`drop schema if exists ${SCHEMA} cascade; create schema ${SCHEMA}`));
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${SCHEMA}`);
  const benchUrl = url.toString();
  try {
    const secret = await seed(benchUrl);
    const figures = new Map<string, number[]>();
    for (let round = 0; round < rounds; round += 1) {
      // Which configuration goes first alternates, so drift in machine load hits both alike.
      for (const compression of round % 2 === 0 ? CONFIGS : [...CONFIGS].reverse()) {
        const { port, child } = await startServer(benchUrl, compression);
        try {
          for (const page of PAGES) {
            const target = `http://127.0.0.1:${port}${page.path}`;
            if (round === 0) console.log(`compression ${compression}, ${page.name}: ${await describePage(port, page.path, secret)}`);
            if (warmup > 0) await load(target, warmup, secret);
            const rate = await load(target, duration, secret);
            console.log(`round ${round + 1}, compression ${compression}, ${page.name}: ${rate.toFixed(0)} req/s`);
            figures.set(`${page.name}|${compression}`, [...(figures.get(`${page.name}|${compression}`) ?? []), rate]);
          }
        } finally {
          await stopServer(child);
        }
      }
    }
    console.log(`\nmedian of ${rounds} rounds, ${connections} connections, ${duration} s each, Accept-Encoding: gzip, br`);
    let missed = false;
    for (const page of PAGES) {
      const on = median(figures.get(`${page.name}|on`)!);
      const off = median(figures.get(`${page.name}|off`)!);
      const ratio = on / off;
      const verdict = page.goal ? (ratio >= 0.95 ? 'met (goal: >= 95%)' : 'MISSED (goal: >= 95%)') : '(no goal: compressed)';
      if (page.goal && ratio < 0.95) missed = true;
      console.log(`${page.name.padEnd(22)} on ${on.toFixed(0).padStart(6)} req/s   off ${off.toFixed(0).padStart(6)} req/s   on/off ${(ratio * 100).toFixed(1)}%  ${verdict}`);
    }
    if (missed && process.env.BENCH_STRICT === '1') process.exitCode = 1;
  } finally {
    await withAdminPool(databaseUrl, (pool) => pool.query(`drop schema if exists ${SCHEMA} cascade`));
  }
}

await main();
