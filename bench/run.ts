/**
 * `npm run bench`: throughput and p99 latency of the real list endpoint against two bare
 * baselines measured in the same run, on real PostgreSQL. See bench/README.md.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import autocannon, { type Result } from 'autocannon';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../src/config/index.js';
import { createRuntime } from '../src/runtime.js';
import { createTenantAdmin } from '../src/platform/tenants/service.js';
import * as esbuild from 'esbuild';
import { build, startCommand } from '../scripts/build.mjs';
import { BENCH_SCHEMA, LIST_PATH, LIST_QUERY, POOL_SIZE, type ChildMessage, type ParentMessage, type Target } from './shared.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(BENCH_DIR, '..');
const RESULTS_FILE = path.join(REPO_ROOT, '.bench', 'latest.json');

const GOAL = 0.7; // full >= 70% of (a)'s throughput
const CONTACTS = 500; // the bench tenant's test-mode contacts: meta.total
const OTHER_TENANT_CONTACTS = 300;
const LIVE_CONTACTS = 100; // the bench tenant's live-mode rows, so the mode filter matters too
const MODE = 'test';

const settings = {
  rounds: intSetting('BENCH_ROUNDS', 5, 3),
  connections: intSetting('BENCH_CONNECTIONS', 50, 1),
  durationSeconds: intSetting('BENCH_DURATION', 8, 1),
  warmupSeconds: intSetting('BENCH_WARMUP', 2, 0),
};

const LABELS: Record<Target, string> = {
  full: 'full  app: auth + scope + rate limit + schemas + log',
  baseline: '(a)   bare Fastify + pg.Pool, same 2 queries',
  hello: '(b)   bare Fastify hello-world',
};
const ORDER: Target[] = ['full', 'baseline', 'hello'];

interface Seed {
  benchUrl: string;
  tenantId: string;
  secret: string;
  postgresVersion: string;
}

interface RunResult {
  round: number;
  target: Target;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  avg_ms: number;
  requests_2xx: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  duration_s: number;
  /** CPU per request during the measured window: the target process, PostgreSQL, the load generator. */
  cpu_us_per_request: CpuSnapshot;
}

function intSetting(name: string, fallback: number, min: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}; got "${text}"`);
  return value;
}

function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** DATABASE_URL with every session confined to the bench schema. */
function benchDatabaseUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${BENCH_SCHEMA}`);
  return url.toString();
}

/** Fresh schema, migrated by the app's own runtime, seeded with two tenants' contacts. */
async function setUp(databaseUrl: string): Promise<Seed> {
  const adminPool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  let postgresVersion: string;
  try {
    await adminPool.query(`drop schema if exists ${BENCH_SCHEMA} cascade`);
    await adminPool.query(`create schema ${BENCH_SCHEMA}`);
    postgresVersion = (await adminPool.query<{ server_version: string }>('show server_version')).rows[0]?.server_version ?? '?';
  } finally {
    await adminPool.end();
  }

  const benchUrl = benchDatabaseUrl(databaseUrl);
  const config = loadConfig({ DATABASE_URL: benchUrl, LOG_LEVEL: 'info', RUN_JOBS: 'false', PORT: '0', SECRETS_KEY: Buffer.alloc(32, 1).toString('base64') });
  const runtime = await createRuntime(config, { logger: pino({ level: 'silent' }), startJobs: false });
  let tenantId: string;
  let otherTenantId: string;
  let secret: string;
  try {
    const admin = createTenantAdmin({ db: runtime.database.db, clock: runtime.clock });
    const tenant = await admin.createTenant('bench');
    tenantId = tenant.id;
    otherTenantId = (await admin.createTenant('bench-other')).id;
    ({ secret } = await admin.createApiKey(tenant.id, { mode: MODE, scopes: ['service.crm.view'], rate_limit_per_minute: 1_000_000 }));
  } finally {
    await runtime.close();
  }

  const pool = new pg.Pool({ connectionString: benchUrl, max: 1 });
  try {
    // A few companies, so company_id is a mix of uuids and nulls.
    await pool.query(
      `insert into crm_companies (id, tenant_id, mode, name, domain, created_at, updated_at)
       select gen_random_uuid(), $1, $2, 'Company ' || g, 'company' || g || '.example', now(), now()
       from generate_series(1, 5) g`,
      [tenantId, MODE],
    );
    // Pairs of rows share created_at, so the id tie-breaker of the ordering matters.
    const insertContacts = `
      insert into crm_contacts (id, tenant_id, mode, name, email, phone, company_id, created_at, updated_at)
      select gen_random_uuid(), $1::uuid, $2, 'Contact ' || g, 'contact' || g || '@example.com',
             case when g % 3 = 0 then null else '+1555' || lpad(g::text, 7, '0') end,
             case when g % 2 = 0 then (array(select id from crm_companies c where c.tenant_id = $1::uuid order by c.name))[1 + (g / 2) % 5] end,
             now() - (g / 2) * interval '1 minute', now() - (g / 2) * interval '1 minute' + interval '1 second'
      from generate_series(1, $3::int) g`;
    await pool.query(insertContacts, [tenantId, MODE, CONTACTS]);
    await pool.query(insertContacts, [tenantId, 'live', LIVE_CONTACTS]);
    await pool.query(insertContacts, [otherTenantId, MODE, OTHER_TENANT_CONTACTS]);
    await pool.query('analyze crm_companies, crm_contacts');
  } finally {
    await pool.end();
  }
  return { benchUrl, tenantId, secret, postgresVersion };
}

async function dropSchema(databaseUrl: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    await pool.query(`drop schema if exists ${BENCH_SCHEMA} cascade`);
  } finally {
    await pool.end();
  }
}

interface RunningTarget {
  pid: number;
  port: number;
  stop(): Promise<void>;
}

let current: ChildProcess | undefined;

/**
 * The targets run as plain JavaScript, as `npm start` runs the app: src/ is compiled to dist/
 * by the start command's own build, and bench/servers.ts is bundled (with shared.ts) into
 * .bench/servers.mjs, importing the app from dist/. Under tsx the app's heap would also hold
 * tsx's source maps (about 7 MB more), which makes every full garbage collection dearer.
 */
async function compileTargets(): Promise<string> {
  await build();
  const outfile = path.join(REPO_ROOT, '.bench', 'servers.mjs');
  await esbuild.build({
    entryPoints: [path.join(BENCH_DIR, 'servers.ts')],
    outfile,
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    plugins: [
      {
        name: 'app-from-dist',
        setup(builder) {
          builder.onResolve({ filter: /^\.\.\/src\// }, (args) => ({
            path: path.join(REPO_ROOT, 'dist', args.path.slice('../src/'.length)),
            external: true,
          }));
        },
      },
    ],
  });
  return outfile;
}

let compiledServers: string | undefined;

/** Forks the compiled bench/servers.ts for one target; resolves once it listens. Its stdout (the app's log) goes to /dev/null. */
async function startTarget(target: Target, seed: Seed): Promise<RunningTarget> {
  compiledServers ??= await compileTargets();
  const child = fork(compiledServers, [target], {
    cwd: REPO_ROOT,
    // BENCH_CPU_PROF=<dir> writes V8 CPU profiles to <dir>/<target>/ (one per thread; the server's is the largest).
    // BENCH_NODE_FLAGS adds node flags to every target (e.g. --trace-gc, with BENCH_APP_LOG to keep the output).
    // Every target runs with the node flags of `npm start` (heap sizing), as production does.
    execArgv: [...startCommand().flags, ...(process.env.BENCH_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? []), ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.join(process.env.BENCH_CPU_PROF, target)}`] : [])],
    // BENCH_APP_LOG=<file> keeps the app's log lines (appended) instead of discarding them.
    stdio: ['ignore', process.env.BENCH_APP_LOG ? fs.openSync(process.env.BENCH_APP_LOG, 'a') : 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_DATABASE_URL: seed.benchUrl, BENCH_TENANT_ID: seed.tenantId, BENCH_MODE: MODE },
  });
  current = child;
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${target} server did not start within 60 s`));
    }, 60_000);
    child.on('message', (message: ChildMessage) => {
      clearTimeout(timer);
      if (message.type === 'ready') resolve(message.port);
      else reject(new Error(`${target} server failed: ${message.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${target} server exited before listening (code ${code}, signal ${signal})`));
    });
  });
  return {
    port,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.send({ type: 'stop' } satisfies ParentMessage);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      current = undefined;
    },
  };
}

function targetUrl(port: number): string {
  return `http://127.0.0.1:${port}${LIST_PATH}${LIST_QUERY}`;
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body };
}

/** Once, before measuring: the full endpoint authenticates and returns the page; (a) returns the same rows. */
async function checkCorrectness(seed: Seed): Promise<{ identicalBodies: boolean }> {
  const auth = { authorization: `Bearer ${seed.secret}` };
  const problems: string[] = [];

  let full: any;
  let server = await startTarget('full', seed);
  try {
    const anonymous = await getJson(targetUrl(server.port));
    if (anonymous.status !== 401) problems.push(`full without a key: expected 401, got ${anonymous.status}`);
    const response = await getJson(targetUrl(server.port), auth);
    full = response.body;
    if (response.status !== 200) problems.push(`full: expected 200, got ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`);
    else {
      if (full?.data?.length !== 50) problems.push(`full: expected 50 rows, got ${full?.data?.length}`);
      if (full?.meta?.total !== CONTACTS) problems.push(`full: expected meta.total ${CONTACTS}, got ${full?.meta?.total}`);
      if (full?.meta?.has_more !== true) problems.push('full: expected meta.has_more true');
    }
  } finally {
    await server.stop();
  }

  let baseline: any;
  server = await startTarget('baseline', seed);
  try {
    const response = await getJson(targetUrl(server.port), auth);
    baseline = response.body;
    if (response.status !== 200) problems.push(`(a): expected 200, got ${response.status}`);
  } finally {
    await server.stop();
  }
  const ids = (body: any): string[] => (Array.isArray(body?.data) ? body.data.map((row: { id: string }) => row.id) : []);
  if (!isDeepStrictEqual(ids(full), ids(baseline))) problems.push('(a) does not return the same ids in the same order as full');
  if (!isDeepStrictEqual(full?.meta, baseline?.meta)) problems.push(`(a) meta ${JSON.stringify(baseline?.meta)} differs from full ${JSON.stringify(full?.meta)}`);

  server = await startTarget('hello', seed);
  try {
    const response = await getJson(targetUrl(server.port), auth);
    if (response.status !== 200) problems.push(`(b): expected 200, got ${response.status}`);
  } finally {
    await server.stop();
  }

  if (problems.length > 0) throw new Error(`correctness check failed:\n  - ${problems.join('\n  - ')}`);
  return { identicalBodies: isDeepStrictEqual(full, baseline) };
}

function load(port: number, seconds: number, secret: string): Promise<Result> {
  return autocannon({
    url: targetUrl(port),
    connections: settings.connections,
    duration: seconds,
    headers: { authorization: `Bearer ${secret}` },
  });
}

async function measure(round: number, target: Target, seed: Seed): Promise<RunResult> {
  const server = await startTarget(target, seed);
  try {
    if (settings.warmupSeconds > 0) await load(server.port, settings.warmupSeconds, seed.secret);
    const cpuBefore = cpuSnapshot(server.pid);
    const result = await load(server.port, settings.durationSeconds, seed.secret);
    const cpu = cpuPerRequest(cpuBefore, cpuSnapshot(server.pid), result['2xx'] + result.non2xx);
    return {
      cpu_us_per_request: cpu,
      round,
      target,
      rps: result['2xx'] / result.duration,
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      avg_ms: result.latency.average,
      requests_2xx: result['2xx'],
      non_2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      duration_s: result.duration,
    };
  } finally {
    await server.stop();
  }
}

/** CPU time (ms) used so far by the target process, by every PostgreSQL process, and by this process (the load generator). */
interface CpuSnapshot {
  server: number;
  postgres: number;
  loadGenerator: number;
}

const TICK_MS = 10; // /proc reports CPU time in clock ticks of 1/100 s on Linux

/** utime + stime of a process in ms, from /proc/<pid>/stat; 0 where /proc cannot be read. */
function processCpuMs(pid: number | string): { command: string; ms: number } {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { command, ms: (Number(fields[11]) + Number(fields[12])) * TICK_MS };
  } catch {
    return { command: '', ms: 0 };
  }
}

function cpuSnapshot(serverPid: number): CpuSnapshot {
  let postgres = 0;
  try {
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const { command, ms } = processCpuMs(entry);
      if (command === 'postgres') postgres += ms;
    }
  } catch {
    // not Linux: no PostgreSQL figure
  }
  const own = process.cpuUsage();
  return { server: processCpuMs(serverPid).ms, postgres, loadGenerator: (own.user + own.system) / 1000 };
}

function cpuPerRequest(before: CpuSnapshot, after: CpuSnapshot, requests: number): CpuSnapshot {
  const per = (key: keyof CpuSnapshot) => (requests > 0 ? ((after[key] - before[key]) * 1000) / requests : 0);
  return { server: per('server'), postgres: per('postgres'), loadGenerator: per('loadGenerator') };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const int = (value: number) => Math.round(value).toLocaleString('en-US');
const pct = (value: number) => `${(value * 100).toFixed(1)}%`;
const pad = (text: string, width: number) => text.padEnd(width);
const padLeft = (text: string, width: number) => text.padStart(width);

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const started = Date.now();
  const loadAtStart = os.loadavg();
  log(`bench: targets run with npm start's node flags: ${startCommand().flags.join(' ') || '(none)'}`);
  log(`bench: ${os.cpus().length} CPUs, load average ${loadAtStart.map((value) => value.toFixed(2)).join(' ')}, node ${process.version}`);
  log(
    `bench: ${settings.rounds} rounds x (full, a, b); ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s measured per run`,
  );

  const seed = await setUp(databaseUrl);
  log(`bench: PostgreSQL ${seed.postgresVersion}, schema ${BENCH_SCHEMA} seeded (${CONTACTS} contacts for the bench tenant, plus ${LIVE_CONTACTS} live-mode and ${OTHER_TENANT_CONTACTS} of another tenant)`);

  try {
    const { identicalBodies } = await checkCorrectness(seed);
    log(`bench: correctness ok: full returns 200, 50 rows, total ${CONTACTS}; (a) returns the same ids in the same order${identicalBodies ? ' (whole bodies identical)' : ''}`);
    log();

    const runs: RunResult[] = [];
    for (let round = 1; round <= settings.rounds; round += 1) {
      for (const target of ORDER) {
        const run = await measure(round, target, seed);
        runs.push(run);
        const flags = run.non_2xx + run.errors + run.timeouts > 0 ? `  !! non-2xx ${run.non_2xx}, errors ${run.errors}, timeouts ${run.timeouts}` : '';
        const cpu = `cpu us/req: server ${padLeft(int(run.cpu_us_per_request.server), 5)}, postgres ${padLeft(int(run.cpu_us_per_request.postgres), 5)}, load generator ${padLeft(int(run.cpu_us_per_request.loadGenerator), 4)}`;
        log(`  round ${round}  ${pad(target, 8)}  ${padLeft(int(run.rps), 7)} req/s  p50 ${padLeft(run.p50_ms.toFixed(0), 4)} ms  p99 ${padLeft(run.p99_ms.toFixed(0), 4)} ms  ${cpu}${flags}`);
      }
    }

    const summary = Object.fromEntries(
      ORDER.map((target) => {
        const own = runs.filter((run) => run.target === target);
        return [target, { rps_median: median(own.map((run) => run.rps)), p99_ms_median: median(own.map((run) => run.p99_ms)), p50_ms_median: median(own.map((run) => run.p50_ms)), rps_runs: own.map((run) => Math.round(run.rps)) }];
      }),
    ) as Record<Target, { rps_median: number; p99_ms_median: number; p50_ms_median: number; rps_runs: number[] }>;

    const perRound = (target: Target) =>
      Array.from({ length: settings.rounds }, (_, index) => {
        const full = runs.find((run) => run.round === index + 1 && run.target === 'full')!;
        const other = runs.find((run) => run.round === index + 1 && run.target === target)!;
        return full.rps / other.rps;
      });
    const ratios = {
      full_over_a_rps: summary.full.rps_median / summary.baseline.rps_median,
      full_over_b_rps: summary.full.rps_median / summary.hello.rps_median,
      a_over_b_rps: summary.baseline.rps_median / summary.hello.rps_median,
      full_over_a_p99: summary.full.p99_ms_median / summary.baseline.p99_ms_median,
      full_over_b_p99: summary.full.p99_ms_median / summary.hello.p99_ms_median,
      full_over_a_rps_per_round: perRound('baseline'),
      full_over_b_rps_per_round: perRound('hello'),
    };
    const failedRequests = runs.reduce((sum, run) => sum + run.non_2xx + run.errors + run.timeouts, 0);
    const goalMet = ratios.full_over_a_rps >= GOAL;

    log();
    log(`Medians of ${settings.rounds} runs each (${settings.connections} connections, ${settings.durationSeconds} s per run, GET ${LIST_PATH}${LIST_QUERY})`);
    log();
    const header = `${pad('target', 50)}  ${padLeft('req/s', 8)}  ${padLeft('p99 ms', 7)}  ${padLeft('vs (a)', 7)}  ${padLeft('vs (b)', 7)}   req/s per run`;
    log(header);
    log('-'.repeat(header.length + 12));
    for (const target of ORDER) {
      const row = summary[target];
      log(
        `${pad(LABELS[target], 50)}  ${padLeft(int(row.rps_median), 8)}  ${padLeft(row.p99_ms_median.toFixed(0), 7)}  ` +
          `${padLeft(pct(row.rps_median / summary.baseline.rps_median), 7)}  ${padLeft(pct(row.rps_median / summary.hello.rps_median), 7)}   ${row.rps_runs.map(int).join(', ')}`,
      );
    }
    log();
    log(`full/(a) throughput: ${pct(ratios.full_over_a_rps)}   (per round: ${ratios.full_over_a_rps_per_round.map(pct).join(', ')}; their median ${pct(median(ratios.full_over_a_rps_per_round))})`);
    log(`full/(b) throughput: ${pct(ratios.full_over_b_rps)}   (per round: ${ratios.full_over_b_rps_per_round.map(pct).join(', ')}; their median ${pct(median(ratios.full_over_b_rps_per_round))})`);
    log(`p99 latency full/(a): ${ratios.full_over_a_p99.toFixed(2)}x   full/(b): ${ratios.full_over_b_p99.toFixed(2)}x   (autocannon rounds latency to whole ms)`);
    if (failedRequests > 0) log(`WARNING: ${failedRequests} requests failed (non-2xx, errors or timeouts); only 2xx responses are counted`);
    log();
    log(goalMet ? `GOAL MET: full reaches ${pct(ratios.full_over_a_rps)} of (a)'s throughput (goal >= ${pct(GOAL)})` : `GOAL MISSED: full reaches ${pct(ratios.full_over_a_rps)} of (a)'s throughput (goal >= ${pct(GOAL)})`);

    const report = {
      generated_at: new Date().toISOString(),
      elapsed_s: Math.round((Date.now() - started) / 1000),
      environment: { node: process.version, cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model, postgres: seed.postgresVersion, load_average_at_start: loadAtStart, load_average_at_end: os.loadavg() },
      settings: { ...settings, url: `${LIST_PATH}${LIST_QUERY}`, pool_size: POOL_SIZE, contacts: CONTACTS, load_generator: 'autocannon (parent process)', statistic: 'median of runs' },
      targets: LABELS,
      summary,
      ratios,
      goal: { full_over_a_rps_at_least: GOAL, met: goalMet },
      failed_requests: failedRequests,
      runs,
    };
    fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
    fs.writeFileSync(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
    log(`results written to ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE} (${report.elapsed_s} s)`);
  } finally {
    if (process.env.BENCH_KEEP_SCHEMA !== '1') await dropSchema(databaseUrl);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    current?.kill('SIGTERM');
    process.exit(130);
  });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    current?.kill('SIGTERM');
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
