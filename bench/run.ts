/**
 * `npm run bench`: throughput and p99 latency of the main list endpoint of every service,
 * each against a bare Fastify + pg baseline running the same SQL, measured in the same run on
 * real PostgreSQL. See bench/README.md.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import autocannon, { type Result } from 'autocannon';
import * as esbuild from 'esbuild';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../src/config/index.js';
import { createRuntime, type Runtime } from '../src/runtime.js';
import { createTenantAdmin } from '../src/platform/tenants/service.js';
import { build, startCommand } from '../scripts/build.mjs';
import { ENDPOINTS, type Api, type Seeded } from './endpoints.js';
import { BENCH_SCHEMA, HELLO_PATH, POOL_SIZE, type ChildMessage, type EndpointPlan, type ParentMessage, type RecordedStatement, type Target } from './shared.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(BENCH_DIR, '..');
const RESULTS_FILE = path.join(REPO_ROOT, '.bench', 'latest.json');
const PLAN_FILE = path.join(REPO_ROOT, '.bench', 'plan.json');

/** The goal of every row: full >= 70% of its baseline's throughput, and p99 under 2x the baseline's. */
const GOAL = { throughputRatio: 0.7, p99Ratio: 2 };
const ROWS = 120; // the bench owner's rows per list: meta.total
const OTHER_OWNER_ROWS = 25; // rows of another tenant, and of the bench tenant's live mode, per list
const PAGE = 50;

const settings = {
  rounds: intSetting('BENCH_ROUNDS', 5, 1),
  connections: intSetting('BENCH_CONNECTIONS', 64, 1),
  durationSeconds: intSetting('BENCH_DURATION', 5, 1),
  warmupSeconds: intSetting('BENCH_WARMUP', 1, 0),
  only: process.env.BENCH_ONLY?.split(',')
    .map((name) => name.trim())
    .filter(Boolean),
};

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

interface Seed {
  benchUrl: string;
  secret: string;
  postgresVersion: string;
  plans: EndpointPlan[];
}

/** DATABASE_URL with every session confined to the bench schema. */
function benchDatabaseUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${BENCH_SCHEMA}`);
  return url.toString();
}

/**
 * Records every statement any pg client of this process runs while `recording` is on, with
 * when it started and ended, so the app's own database work for a request can be replayed.
 */
const recorder = {
  recording: false,
  statements: [] as Array<RecordedStatement & { start: number; end: number }>,
};

function installStatementRecorder(): void {
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  (pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function recordingQuery(this: unknown, ...args: unknown[]) {
    const [text, values, callback] = args;
    if (!recorder.recording || typeof text !== 'string') return original.apply(this, args);
    const entry = { sql: text, values: (Array.isArray(values) ? values : []).map(jsonValue), start: performance.now(), end: Number.POSITIVE_INFINITY };
    recorder.statements.push(entry);
    if (typeof callback === 'function') {
      return original.call(this, text, values, (error: unknown, result: unknown) => {
        entry.end = performance.now();
        (callback as (error: unknown, result: unknown) => void)(error, result);
      });
    }
    return (original.apply(this, args) as Promise<unknown>).finally(() => {
      entry.end = performance.now();
    });
  };
}

function jsonValue(value: unknown): unknown {
  return value instanceof Date ? value.toISOString() : value;
}

/** Statements in groups: a statement that starts before the current group has ended runs side by side with it. */
function groupStatements(statements: Array<RecordedStatement & { start: number; end: number }>): RecordedStatement[][] {
  const groups: RecordedStatement[][] = [];
  let groupEnd = Number.NEGATIVE_INFINITY;
  for (const statement of [...statements].sort((a, b) => a.start - b.start)) {
    if (groups.length === 0 || statement.start >= groupEnd) {
      groups.push([]);
      groupEnd = statement.end;
    } else {
      groupEnd = Math.max(groupEnd, statement.end);
    }
    groups.at(-1)!.push({ sql: statement.sql, values: statement.values });
  }
  return groups;
}

function apiFor(runtime: Runtime, key: string, mode: 'test' | 'live'): Api {
  const api = async (method: 'GET' | 'POST', url: string, body?: unknown, expectStatus?: number) => {
    const response = await runtime.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    const expected = expectStatus ?? (method === 'POST' ? 201 : 200);
    if (response.statusCode !== expected) throw new Error(`${method} ${url}: expected ${expected}, got ${response.statusCode} ${response.body.slice(0, 300)}`);
    return response.json().data;
  };
  return Object.assign(api, { mode });
}

/**
 * A fresh schema migrated by the app's own runtime; every endpoint's list seeded through the
 * public API for three owners; then each endpoint called once more with the statement
 * recorder on, which gives the baseline its SQL.
 */
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

  installStatementRecorder();
  const benchUrl = benchDatabaseUrl(databaseUrl);
  const config = loadConfig({ DATABASE_URL: benchUrl, LOG_LEVEL: 'info', RUN_JOBS: 'false', PORT: '0', SECRETS_KEY: Buffer.alloc(32, 1).toString('base64') });
  const runtime = await createRuntime(config, { logger: pino({ level: 'silent' }), startJobs: false });
  try {
    const admin = createTenantAdmin({ db: runtime.database.db, clock: runtime.clock });
    const tenant = await admin.createTenant('bench');
    const other = await admin.createTenant('bench-other');
    const keyOf = async (tenantId: string, mode: 'test' | 'live') => (await admin.createApiKey(tenantId, { mode, scopes: ['*'], rate_limit_per_minute: 1_000_000 })).secret;
    const secret = await keyOf(tenant.id, 'test');
    const bench = apiFor(runtime, secret, 'test');
    const otherOwners = [apiFor(runtime, await keyOf(tenant.id, 'live'), 'live'), apiFor(runtime, await keyOf(other.id, 'test'), 'test')];

    const seeded: Seeded = {};
    const endpoints = selectedEndpoints();
    for (const endpoint of endpoints) {
      const started = Date.now();
      for (const api of otherOwners) await endpoint.seed(api, OTHER_OWNER_ROWS, {});
      await endpoint.seed(bench, ROWS, seeded);
      log(`bench: seeded ${endpoint.name} (${Date.now() - started} ms)`);
    }
    await runtime.database.withSession((session) => session.exec('analyze'));

    const plans: EndpointPlan[] = [];
    for (const endpoint of endpoints) {
      const url = endpoint.path(seeded);
      await bench('GET', url); // warms the key cache and prepares the statements
      recorder.statements = [];
      recorder.recording = true;
      try {
        await bench('GET', url);
      } finally {
        recorder.recording = false;
      }
      plans.push({ name: endpoint.name, url, groups: groupStatements(recorder.statements) });
    }
    return { benchUrl, secret, postgresVersion, plans };
  } finally {
    await runtime.close();
  }
}

function selectedEndpoints() {
  if (!settings.only) return ENDPOINTS;
  const chosen = ENDPOINTS.filter((endpoint) => settings.only!.includes(endpoint.name));
  if (chosen.length === 0) throw new Error(`BENCH_ONLY names no endpoint; known: ${ENDPOINTS.map((endpoint) => endpoint.name).join(', ')}`);
  return chosen;
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

const children = new Set<ChildProcess>();

/**
 * The targets run as plain JavaScript, as `npm start` runs the app: src/ is compiled to dist/
 * by the start command's own build, and bench/servers.ts is bundled (with shared.ts) into
 * .bench/servers.mjs, importing the app from dist/.
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
    // BENCH_CPU_PROF=<dir> writes V8 CPU profiles to <dir>/<target>/; BENCH_NODE_FLAGS adds node flags to every
    // target. Every target runs with the node flags of `npm start` (heap sizing), as production does.
    execArgv: [
      ...startCommand().flags,
      ...(process.env.BENCH_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? []),
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.join(process.env.BENCH_CPU_PROF, target)}`] : []),
    ],
    // BENCH_APP_LOG=<file> keeps the app's log lines (appended) instead of discarding them.
    stdio: ['ignore', process.env.BENCH_APP_LOG ? fs.openSync(process.env.BENCH_APP_LOG, 'a') : 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_DATABASE_URL: seed.benchUrl, BENCH_PLAN: PLAN_FILE },
  });
  children.add(child);
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
      children.delete(child);
    },
  };
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

/** Once, before measuring: every full endpoint authenticates and returns its page; (a) reads the same rows. */
async function checkCorrectness(seed: Seed, full: RunningTarget, baseline: RunningTarget): Promise<void> {
  const auth = { authorization: `Bearer ${seed.secret}` };
  const problems: string[] = [];
  const ids = (rows: unknown): string[] => (Array.isArray(rows) ? rows.map((row: { id?: unknown }) => String(row?.id)) : []);
  for (const plan of seed.plans) {
    const anonymous = await getJson(`http://127.0.0.1:${full.port}${plan.url}`);
    if (anonymous.status !== 401) problems.push(`${plan.name}: full without a key: expected 401, got ${anonymous.status}`);
    const app = await getJson(`http://127.0.0.1:${full.port}${plan.url}`, auth);
    if (app.status !== 200) {
      problems.push(`${plan.name}: full: expected 200, got ${app.status} ${JSON.stringify(app.body).slice(0, 300)}`);
      continue;
    }
    if (app.body?.data?.length !== PAGE) problems.push(`${plan.name}: full: expected ${PAGE} rows, got ${app.body?.data?.length}`);
    // Other endpoints' seeding adds a few rows to some lists (a form for the submissions, contacts for subscriptions).
    if (!(app.body?.meta?.total >= ROWS)) problems.push(`${plan.name}: full: expected meta.total >= ${ROWS}, got ${app.body?.meta?.total}`);
    const bare = await getJson(`http://127.0.0.1:${baseline.port}${plan.url}`);
    if (bare.status !== 200) problems.push(`${plan.name}: (a): expected 200, got ${bare.status}`);
    else if (!bare.body.results.some((rows: unknown) => isDeepStrictEqual(ids(rows), ids(app.body.data)))) {
      problems.push(`${plan.name}: (a) reads no page with the ids full returns, in the same order`);
    }
  }
  if (problems.length > 0) throw new Error(`correctness check failed:\n  - ${problems.join('\n  - ')}`);
}

interface RunResult {
  round: number;
  endpoint: string;
  target: Target;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  /** CPU per request during the measured window: the target process, PostgreSQL, the load generator. */
  cpu_us_per_request: CpuSnapshot;
}

function load(url: string, seconds: number, secret: string): Promise<Result> {
  return autocannon({ url, connections: settings.connections, duration: seconds, headers: { authorization: `Bearer ${secret}` } });
}

async function measure(round: number, endpoint: string, target: Target, server: RunningTarget, requestPath: string, secret: string): Promise<RunResult> {
  const url = `http://127.0.0.1:${server.port}${requestPath}`;
  if (settings.warmupSeconds > 0) await load(url, settings.warmupSeconds, secret);
  const cpuBefore = cpuSnapshot(server.pid);
  const result = await load(url, settings.durationSeconds, secret);
  return {
    round,
    endpoint,
    target,
    rps: result['2xx'] / result.duration,
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    cpu_us_per_request: cpuPerRequest(cpuBefore, cpuSnapshot(server.pid), result['2xx'] + result.non2xx),
  };
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

function describeRun(run: RunResult): string {
  const flags = run.non_2xx + run.errors + run.timeouts > 0 ? `  !! non-2xx ${run.non_2xx}, errors ${run.errors}, timeouts ${run.timeouts}` : '';
  const cpu = `cpu us/req: server ${padLeft(int(run.cpu_us_per_request.server), 5)}, postgres ${padLeft(int(run.cpu_us_per_request.postgres), 5)}, load gen ${padLeft(int(run.cpu_us_per_request.loadGenerator), 4)}`;
  return `  round ${run.round}  ${pad(run.endpoint, 27)} ${pad(run.target, 8)} ${padLeft(int(run.rps), 6)} req/s  p99 ${padLeft(run.p99_ms.toFixed(0), 4)} ms  ${cpu}${flags}`;
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const started = Date.now();
  const loadAtStart = os.loadavg();
  log(`bench: targets run with npm start's node flags: ${startCommand().flags.join(' ') || '(none)'}`);
  log(`bench: ${os.cpus().length} CPUs, load average ${loadAtStart.map((value) => value.toFixed(2)).join(' ')}, node ${process.version}`);
  log(`bench: ${settings.rounds} rounds; ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s measured per run`);

  const seed = await setUp(databaseUrl);
  fs.mkdirSync(path.dirname(PLAN_FILE), { recursive: true });
  fs.writeFileSync(PLAN_FILE, `${JSON.stringify(seed.plans, null, 2)}\n`);
  log(
    `bench: PostgreSQL ${seed.postgresVersion}, schema ${BENCH_SCHEMA}: ${ROWS} rows per list for the bench owner, ${OTHER_OWNER_ROWS} each in its live mode and in another tenant`,
  );
  for (const plan of seed.plans) log(`bench:   ${pad(plan.name, 27)} ${plan.url}  (${plan.groups.map((group) => group.length).join(' then ')} statements)`);

  const runs: RunResult[] = [];
  try {
    for (let round = 1; round <= settings.rounds; round += 1) {
      const full = await startTarget('full', seed);
      const baseline = await startTarget('baseline', seed);
      const hello = await startTarget('hello', seed);
      try {
        if (round === 1) {
          await checkCorrectness(seed, full, baseline);
          log('bench: correctness ok: every full endpoint answers 401 without a key, 200 with a full page and its total; (a) reads the same page');
          log();
        }
        // Which target goes first alternates by round, so drift in machine load hits both alike.
        const pair: Array<[Target, RunningTarget]> =
          round % 2 === 1
            ? [
                ['full', full],
                ['baseline', baseline],
              ]
            : [
                ['baseline', baseline],
                ['full', full],
              ];
        for (const plan of seed.plans) {
          for (const [target, server] of pair) {
            const run = await measure(round, plan.name, target, server, plan.url, seed.secret);
            runs.push(run);
            log(describeRun(run));
          }
        }
        const helloRun = await measure(round, 'hello', 'hello', hello, HELLO_PATH, seed.secret);
        runs.push(helloRun);
        log(describeRun(helloRun));
      } finally {
        await Promise.all([full.stop(), baseline.stop(), hello.stop()]);
      }
    }
  } finally {
    if (process.env.BENCH_KEEP_SCHEMA !== '1') await dropSchema(databaseUrl);
  }

  const rows = seed.plans.map((plan) => {
    const of = (target: Target) => runs.filter((run) => run.endpoint === plan.name && run.target === target);
    const full = of('full');
    const bare = of('baseline');
    const fullRps = median(full.map((run) => run.rps));
    const bareRps = median(bare.map((run) => run.rps));
    const fullP99 = median(full.map((run) => run.p99_ms));
    const bareP99 = median(bare.map((run) => run.p99_ms));
    const throughputRatio = fullRps / bareRps;
    const p99Ratio = fullP99 / Math.max(bareP99, 1);
    return {
      endpoint: plan.name,
      url: plan.url,
      full_rps: fullRps,
      baseline_rps: bareRps,
      throughput_ratio: throughputRatio,
      full_p99_ms: fullP99,
      baseline_p99_ms: bareP99,
      p99_ratio: p99Ratio,
      full_cpu_us: median(full.map((run) => run.cpu_us_per_request.server)),
      baseline_cpu_us: median(bare.map((run) => run.cpu_us_per_request.server)),
      ratio_per_round: full.map((run) => run.rps / bare.find((other) => other.round === run.round)!.rps),
      met: throughputRatio >= GOAL.throughputRatio && p99Ratio < GOAL.p99Ratio,
    };
  });
  const helloRps = median(runs.filter((run) => run.target === 'hello').map((run) => run.rps));
  const failedRequests = runs.reduce((sum, run) => sum + run.non_2xx + run.errors + run.timeouts, 0);

  log();
  log(`Medians of ${settings.rounds} rounds (${settings.connections} connections, ${settings.durationSeconds} s per run). (a) = bare Fastify + pg.Pool running the same SQL.`);
  log();
  const header = `${pad('list endpoint', 27)}  ${padLeft('full req/s', 10)}  ${padLeft('(a) req/s', 9)}  ${padLeft('full/(a)', 8)}  ${padLeft('p99 full', 8)}  ${padLeft('p99 (a)', 7)}  ${padLeft('p99 x', 5)}  ${padLeft('cpu us full/(a)', 15)}  goal`;
  log(header);
  log('-'.repeat(header.length + 2));
  for (const row of rows) {
    log(
      `${pad(row.endpoint, 27)}  ${padLeft(int(row.full_rps), 10)}  ${padLeft(int(row.baseline_rps), 9)}  ${padLeft(pct(row.throughput_ratio), 8)}  ` +
        `${padLeft(`${row.full_p99_ms.toFixed(0)} ms`, 8)}  ${padLeft(`${row.baseline_p99_ms.toFixed(0)} ms`, 7)}  ${padLeft(row.p99_ratio.toFixed(2), 5)}  ` +
        `${padLeft(`${int(row.full_cpu_us)}/${int(row.baseline_cpu_us)}`, 15)}  ${row.met ? 'met' : 'MISSED'}`,
    );
  }
  log();
  log(`(b) bare Fastify hello-world: ${int(helloRps)} req/s (the framework and load generator ceiling on this machine)`);
  log(`per-round full/(a): ${rows.map((row) => `${row.endpoint} ${row.ratio_per_round.map(pct).join(' ')}`).join('; ')}`);
  if (failedRequests > 0) log(`WARNING: ${failedRequests} requests failed (non-2xx, errors or timeouts); only 2xx responses are counted`);
  const missed = rows.filter((row) => !row.met);
  log();
  log(
    missed.length === 0
      ? `GOAL MET on every list: full >= ${pct(GOAL.throughputRatio)} of its baseline's throughput and p99 < ${GOAL.p99Ratio}x the baseline's`
      : `GOAL MISSED on ${missed.map((row) => row.endpoint).join(', ')} (goal: full >= ${pct(GOAL.throughputRatio)} of (a), p99 < ${GOAL.p99Ratio}x)`,
  );

  const report = {
    generated_at: new Date().toISOString(),
    elapsed_s: Math.round((Date.now() - started) / 1000),
    environment: {
      node: process.version,
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model,
      postgres: seed.postgresVersion,
      load_average_at_start: loadAtStart,
      load_average_at_end: os.loadavg(),
    },
    settings: { ...settings, pool_size: POOL_SIZE, rows: ROWS, other_owner_rows: OTHER_OWNER_ROWS, load_generator: 'autocannon (parent process)', statistic: 'median of rounds' },
    goal: GOAL,
    rows,
    hello_rps: helloRps,
    failed_requests: failedRequests,
    runs,
  };
  fs.writeFileSync(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
  log(`results written to ${path.relative(process.cwd(), RESULTS_FILE) || RESULTS_FILE} (${report.elapsed_s} s)`);
  if (process.env.BENCH_STRICT === '1' && missed.length > 0) process.exitCode = 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of children) child.kill('SIGTERM');
    process.exit(130);
  });
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    for (const child of children) child.kill('SIGTERM');
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
