/**
 * Forms CSV export benchmark: `npx tsx bench/forms-export.ts [--rows N]`.
 *
 * On real PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test), in its
 * own schema `forms_bench` (dropped and recreated at the start, dropped at the end unless
 * BENCH_KEEP_SCHEMA=1), it:
 *
 * 1. starts the real app in a child process (this file with the argument `server`:
 *    createRuntime + app.listen on port 0, reporting the port over IPC), which applies the
 *    migrations. By default the child runs on plain node from JavaScript that esbuild (the
 *    compiler tsx itself uses) writes to .bench/forms-export-build/: the same code, without
 *    tsx's loader, which alone adds about 75 MB of RSS (a loader thread plus per-module
 *    overhead). BENCH_SERVER_RUNNER=tsx runs the child under tsx instead, as `npm start` does;
 * 2. creates a tenant and a test key (createTenantAdmin) and, over HTTP, a published form
 *    with 7 fields;
 * 3. bulk-inserts N submissions (default 1,000,000; BENCH_FORMS_ROWS or --rows for a quick
 *    check) with `insert ... select ... from generate_series`, and sets the form's counters;
 * 4. twice, each time against a fresh server process, downloads
 *    GET /forms/forms/:id/submissions.csv over real HTTP with fetch, reading the stream and
 *    counting bytes and records without keeping them, while sampling the server process's
 *    resident memory (VmRSS in /proc/<pid>/status) every 100 ms:
 *    run 1 with node's default heap sizing, run 2 with a heap sized for the 150 MB budget
 *    (--max-old-space-size=128 --max-semi-space-size=8; BENCH_BUDGET_FLAGS overrides).
 *    Without a limit V8 sizes its heap from the machine's memory (24 GB here) and lets
 *    garbage pile up in the old generation before collecting it, so RSS rises although the
 *    export holds only one batch at a time; run 2 shows the same code staying flat.
 *
 * Reports per run: rows, bytes, seconds, rows/s, the server's RSS before and at its peak
 * during the download (and the kernel's high-water mark VmHWM), and PASS/FAIL against
 * 150 MB. Exits 0 either way; non-zero only when the bench itself fails.
 *
 * Diagnostics: BENCH_NODE_FLAGS adds node flags to every server (e.g. --trace-gc);
 * BENCH_DEBUG_MEMORY=1 makes the server print its heap spaces every 500 ms.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/database.js';
import { systemClock } from '../src/lib/clock.js';
import { createTenantAdmin } from '../src/platform/tenants/service.js';
import { createRuntime } from '../src/runtime.js';

const SCHEMA = 'forms_bench';
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD_DIR = path.join(REPO_ROOT, '.bench', 'forms-export-build');
const LIMIT_MB = 150;
const SAMPLE_MS = 100;
const INSERT_CHUNK = 250_000;
const MB = 1024 * 1024;
/** Node flags of the second run: a heap sized for the RSS budget instead of the machine's memory. */
const DEFAULT_BUDGET_FLAGS = '--max-old-space-size=128 --max-semi-space-size=8';

type ChildMessage = { type: 'ready'; port: number } | { type: 'error'; message: string } | { type: 'rss'; rss: number };

const FIELDS = [
  { key: 'name', label: 'Name', type: 'text', required: true },
  { key: 'email', label: 'Email', type: 'email', required: true },
  { key: 'company', label: 'Company', type: 'text' },
  { key: 'plan', label: 'Plan', type: 'select', options: ['free', 'team', 'business'].map((value) => ({ value, label: value })) },
  { key: 'interests', label: 'Interests', type: 'multiselect', options: ['api', 'billing', 'forms', 'seo'].map((value) => ({ value, label: value })) },
  { key: 'message', label: 'Message', type: 'textarea' },
  { key: 'newsletter', label: 'Newsletter', type: 'checkbox' },
];

// ---------------------------------------------------------------------------------------
// Child: the real app, as src/server.ts builds it, on the bench schema.

async function serve(): Promise<void> {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  if (!databaseUrl) throw new Error('BENCH_DATABASE_URL is not set');
  // A throwaway key for secrets at rest (required with DATABASE_URL); the bench stores none.
  const secretsKey = process.env.SECRETS_KEY ?? randomBytes(32).toString('base64');
  const runtime = await createRuntime(loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RUN_JOBS: 'false', SECRETS_KEY: secretsKey }), {
    startJobs: false,
  });
  await runtime.app.listen({ port: 0, host: '127.0.0.1' });
  const address = runtime.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('unexpected listen address');

  // Only used where /proc cannot be read: the parent then asks for samples over IPC.
  let sampler: NodeJS.Timeout | undefined;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    clearInterval(sampler);
    try {
      await runtime.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('message', (message: { type: string }) => {
    if (message?.type === 'stop') void stop();
    if (message?.type === 'sample-rss') sampler ??= setInterval(() => process.send?.({ type: 'rss', rss: process.memoryUsage().rss }), SAMPLE_MS);
  });
  process.on('disconnect', () => void stop());
  if (process.env.BENCH_DEBUG_MEMORY === '1') {
    setInterval(() => {
      const m = process.memoryUsage();
      const f = (n: number) => (n / MB).toFixed(0);
      const spaces = v8.getHeapSpaceStatistics().map((space) => `${space.space_name.replace('_space', '')} ${f(space.space_used_size)}`).join(' ');
      process.stderr.write(`mem rss ${f(m.rss)} heapUsed ${f(m.heapUsed)} external ${f(m.external)} | ${spaces}\n`);
    }, 500).unref();
  }
  process.send?.({ type: 'ready', port: address.port } satisfies ChildMessage);
}

// ---------------------------------------------------------------------------------------
// Parent: set up, seed, download, measure, report.

function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

function rowsSetting(): number {
  const flag = process.argv.indexOf('--rows');
  const text = flag >= 0 ? process.argv[flag + 1] : (process.argv.find((arg) => arg.startsWith('--rows='))?.slice(7) ?? process.env.BENCH_FORMS_ROWS);
  const rows = text === undefined ? 1_000_000 : Number(text.replace(/_/g, ''));
  if (!Number.isInteger(rows) || rows < 1) throw new Error(`--rows / BENCH_FORMS_ROWS must be a positive integer; got "${text}"`);
  return rows;
}

function benchUrlOf(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${SCHEMA}`);
  return url.toString();
}

async function adminQuery(databaseUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

type Runner = 'node' | 'tsx';

function runnerSetting(): Runner {
  const runner = (process.env.BENCH_SERVER_RUNNER ?? 'node').trim();
  if (runner !== 'node' && runner !== 'tsx') throw new Error(`BENCH_SERVER_RUNNER must be node or tsx; got "${runner}"`);
  return runner;
}

/**
 * Compiles src/ and bench/ (tests left out) file by file to JavaScript with esbuild, next to
 * copies of the SQL migrations, inside the repository so packages resolve from node_modules.
 * Returns this file's compiled path.
 */
async function compileServer(): Promise<string> {
  // esbuild ships with tsx (a dependency of the app), so it is always installed alongside.
  const esbuild = await import('esbuild');
  const sources: string[] = [];
  const walk = (directory: string) => {
    for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) sources.push(full);
      else if (entry.name.endsWith('.sql')) {
        const target = path.join(BUILD_DIR, path.relative(REPO_ROOT, full));
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.copyFileSync(full, target);
      }
    }
  };
  fs.rmSync(BUILD_DIR, { recursive: true, force: true });
  walk(path.join(REPO_ROOT, 'src'));
  walk(path.join(REPO_ROOT, 'bench'));
  await esbuild.build({
    entryPoints: sources,
    outdir: BUILD_DIR,
    outbase: REPO_ROOT,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    bundle: false,
    logLevel: 'error',
  });
  fs.writeFileSync(path.join(BUILD_DIR, 'package.json'), JSON.stringify({ type: 'module' }));
  return path.join(BUILD_DIR, 'bench', 'forms-export.js');
}

async function startServer(benchUrl: string, script: string, runner: Runner, nodeFlags: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(script, ['server'], {
    execArgv: [...(runner === 'node' ? [] : ['--import', 'tsx']), ...nodeFlags],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_DATABASE_URL: benchUrl },
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server did not start within 60 s')), 60_000);
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'ready') {
        clearTimeout(timer);
        resolve(message.port);
      } else if (message.type === 'error') {
        clearTimeout(timer);
        reject(new Error(message.message));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with code ${code} before it was ready`));
    });
  });
  return { child, port };
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.send({ type: 'stop' });
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Reads VmRSS and VmHWM (bytes) of a process, or undefined where /proc is not available. */
function procMemory(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    const rss = kb('VmRSS');
    return Number.isFinite(rss) ? { rss, hwm: kb('VmHWM') } : undefined;
  } catch {
    return undefined;
  }
}

/** Samples the server's RSS every 100 ms from /proc (or, failing that, from the child over IPC). */
function sampleMemory(child: ChildProcess) {
  let peak = 0;
  let samples = 0;
  let last = 0;
  const record = (rss: number) => {
    samples += 1;
    last = rss;
    peak = Math.max(peak, rss);
  };
  const viaProc = procMemory(child.pid!) !== undefined;
  let timer: NodeJS.Timeout | undefined;
  const onMessage = (message: ChildMessage) => {
    if (message.type === 'rss') record(message.rss);
  };
  if (viaProc) {
    const take = () => {
      const memory = procMemory(child.pid!);
      if (memory) record(memory.rss);
    };
    take();
    timer = setInterval(take, SAMPLE_MS);
  } else {
    child.on('message', onMessage);
    child.send({ type: 'sample-rss' });
  }
  return {
    source: viaProc ? `/proc/${child.pid}/status VmRSS` : 'process.memoryUsage().rss over IPC',
    stop() {
      clearInterval(timer);
      child.off('message', onMessage);
      return { peak, samples, last };
    },
  };
}

async function seed(benchUrl: string, port: number, rows: number) {
  const database = await openDatabase({ databaseUrl: benchUrl, dataDir: undefined, poolSize: 2 });
  let tenantId: string;
  let secret: string;
  try {
    const admin = createTenantAdmin({ db: database.db, clock: systemClock });
    tenantId = (await admin.createTenant('forms bench')).id;
    ({ secret } = await admin.createApiKey(tenantId, {
      mode: 'test',
      scopes: ['service.forms.manage', 'service.forms.export'],
      rate_limit_per_minute: 1_000_000,
    }));
  } finally {
    await database.close();
  }

  const response = await fetch(`http://127.0.0.1:${port}/api/v1/services/forms/forms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench sign-up', status: 'published', fields: FIELDS }),
  });
  if (response.status !== 201) throw new Error(`creating the form failed: ${response.status} ${await response.text()}`);
  const form = (await response.json()) as { data: { id: string; slug: string } };

  // Answers with commas, quotes, line feeds and formula-looking text now and then, so the
  // export does its quoting and neutralising work on realistic rows.
  const client = new pg.Client({ connectionString: benchUrl });
  await client.connect();
  try {
    const started = performance.now();
    for (let from = 1; from <= rows; from += INSERT_CHUNK) {
      const to = Math.min(rows, from + INSERT_CHUNK - 1);
      await client.query(
        `insert into forms_submissions (id, tenant_id, mode, form_id, data, metadata, read, read_at, submitted_at)
         select gen_random_uuid(), $1::uuid, 'test', $2::uuid,
           jsonb_strip_nulls(jsonb_build_object(
             'name', 'Person ' || g,
             'email', 'person' || g || '@example.com',
             'company', case when g % 5 = 0 then null when g % 7 = 0 then 'Acme, "Ltd"' else 'Company ' || (g % 1000) end,
             'plan', (array['free', 'team', 'business'])[1 + g % 3],
             'interests', case when g % 4 = 0 then '[]'::jsonb else jsonb_build_array('api', (array['billing', 'forms', 'seo'])[1 + g % 3]) end,
             'message', case when g % 50 = 0 then '=HYPERLINK("http://example.com")' else 'Hello, I would like to know more about your product.' || chr(10) || 'Thanks, person ' || g end,
             'newsletter', g % 2 = 0)),
           jsonb_build_object('ip', '203.0.113.' || (g % 250), 'user_agent', 'Mozilla/5.0 (bench)'),
           g % 10 <> 0,
           case when g % 10 <> 0 then timestamptz '2026-01-01 00:00:00+00' + g * interval '1 millisecond' + interval '1 hour' end,
           timestamptz '2026-01-01 00:00:00+00' + (g / 2) * interval '1 millisecond'
         from generate_series($3::int, $4::int) as g`,
        [tenantId, form.data.id, from, to],
      );
      process.stdout.write(`\r  inserted ${to.toLocaleString('en')} / ${rows.toLocaleString('en')} submissions`);
    }
    await client.query(
      `update forms_forms set
         submission_count = (select count(*) from forms_submissions where form_id = $1),
         unread_count = (select count(*) from forms_submissions where form_id = $1 and not read)
       where id = $1`,
      [form.data.id],
    );
    await client.query('analyze forms_submissions');
    log(` in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await client.end();
  }
  return { secret, formId: form.data.id, slug: form.data.slug };
}

async function download(port: number, secret: string, formId: string) {
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/services/forms/forms/${formId}/submissions.csv`, {
    headers: { authorization: `Bearer ${secret}` },
  });
  if (response.status !== 200 || !response.body) throw new Error(`export failed: ${response.status} ${await response.text()}`);
  let bytes = 0;
  let records = 0;
  let firstLine = '';
  let previous = 0; // last byte of the previous chunk, for a CRLF split across chunks
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (firstLine === '' && bytes === 0) firstLine = Buffer.from(value.subarray(0, 200)).toString('utf8').split('\r\n')[0] ?? '';
    bytes += value.byteLength;
    // Records end with CRLF; the seeded values contain LF but never CRLF, so this counts records.
    if (previous === 13 && value[0] === 10) records += 1;
    for (let index = value.indexOf(13); index !== -1 && index < value.length; index = value.indexOf(13, index + 1)) {
      if (value[index + 1] === 10) records += 1;
    }
    previous = value[value.length - 1] ?? 0;
  }
  return {
    seconds: (performance.now() - started) / 1000,
    bytes,
    rows: records - 1,
    firstLine,
    headers: { type: response.headers.get('content-type'), disposition: response.headers.get('content-disposition') },
  };
}

function flagsSetting(name: string, fallback: string): string[] {
  return (process.env[name] ?? fallback).split(/\s+/).filter(Boolean);
}

interface RunOutcome {
  label: string;
  flags: string[];
  peak: number;
  passed: boolean;
  complete: boolean;
}

/** One download against a fresh server process started with `flags`; prints its figures. */
async function measure(
  label: string,
  flags: string[],
  context: { benchUrl: string; script: string; runner: Runner; rows: number; secret: string; formId: string },
): Promise<RunOutcome> {
  const { child, port } = await startServer(context.benchUrl, context.script, context.runner, flags);
  try {
    // Let start-up settle (migrations are done; the first requests compile code) before measuring.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = procMemory(child.pid!);
    const sampler = sampleMemory(child);
    const result = await download(port, context.secret, context.formId);
    const memory = sampler.stop();
    const after = procMemory(child.pid!);

    const expectedHeader = ['id', 'submitted_at', 'read', ...FIELDS.map((field) => field.key)].join(',');
    const complete = result.rows === context.rows && result.firstLine === expectedHeader;
    const passed = memory.peak > 0 && memory.peak < LIMIT_MB * MB;
    log();
    log(`${label}: node ${flags.length > 0 ? flags.join(' ') : '(no flags)'}, server pid ${child.pid}`);
    log(`  content-type         ${result.headers.type}`);
    log(`  content-disposition  ${result.headers.disposition}`);
    log(`  header row           ${result.firstLine}`);
    log(`  rows                 ${result.rows.toLocaleString('en')}${complete ? '' : `  (EXPECTED ${context.rows.toLocaleString('en')} rows and header ${expectedHeader})`}`);
    log(`  bytes                ${result.bytes.toLocaleString('en')} (${(result.bytes / MB).toFixed(1)} MB)`);
    log(`  seconds              ${result.seconds.toFixed(2)}`);
    log(`  rows/s               ${Math.round(result.rows / result.seconds).toLocaleString('en')}`);
    log(`  MB/s                 ${(result.bytes / MB / result.seconds).toFixed(1)}`);
    log(`  server RSS before    ${before ? (before.rss / MB).toFixed(1) : '?'} MB (idle; the export's own growth is peak minus this)`);
    log(`  server RSS peak      ${(memory.peak / MB).toFixed(1)} MB during the download (${memory.samples} samples every ${SAMPLE_MS} ms, ${sampler.source})`);
    log(`  server RSS after     ${(memory.last / MB).toFixed(1)} MB`);
    if (after) log(`  server VmHWM         ${(after.hwm / MB).toFixed(1)} MB (kernel high-water mark over the process's whole life, start-up included)`);
    log(`  ${passed ? 'PASS' : 'FAIL'}: peak server RSS ${(memory.peak / MB).toFixed(1)} MB ${passed ? '<' : '>='} ${LIMIT_MB} MB${complete ? '' : '; WARNING: the export was incomplete'}`);
    return { label, flags, peak: memory.peak, passed, complete };
  } finally {
    await stopServer(child);
  }
}

async function main(): Promise<void> {
  const rows = rowsSetting();
  const runner = runnerSetting();
  const extraFlags = flagsSetting('BENCH_NODE_FLAGS', '');
  const budgetFlags = flagsSetting('BENCH_BUDGET_FLAGS', DEFAULT_BUDGET_FLAGS);
  const databaseUrl = process.env.DATABASE_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test';
  const benchUrl = benchUrlOf(databaseUrl);
  log(`Forms CSV export benchmark: ${rows.toLocaleString('en')} submissions, limit ${LIMIT_MB} MB RSS for the server process`);
  log(`  node ${process.version}, schema ${SCHEMA} on ${new URL(databaseUrl).host}`);
  log(
    `  server: ${runner === 'node' ? 'plain node on esbuild output of src/ (BENCH_SERVER_RUNNER=tsx for the tsx loader, as npm start)' : 'under tsx, as npm start runs it'}`,
  );

  await adminQuery(databaseUrl, `drop schema if exists ${SCHEMA} cascade`);
  await adminQuery(databaseUrl, `create schema ${SCHEMA}`);
  try {
    const script = runner === 'node' ? await compileServer() : fileURLToPath(import.meta.url);
    // The first server applies the migrations and serves the form creation; it is not measured.
    const setup = await startServer(benchUrl, script, runner, extraFlags);
    let seeded: Awaited<ReturnType<typeof seed>>;
    try {
      seeded = await seed(benchUrl, setup.port, rows);
    } finally {
      await stopServer(setup.child);
    }
    const context = { benchUrl, script, runner, rows, secret: seeded.secret, formId: seeded.formId };

    const outcomes = [
      await measure("Run 1, node's default heap sizing (V8 sizes its heap from this machine's memory)", extraFlags, context),
      await measure(`Run 2, heap sized for a ${LIMIT_MB} MB budget`, [...budgetFlags, ...extraFlags], context),
    ];

    log();
    log('Summary');
    for (const outcome of outcomes) {
      log(`  ${outcome.passed ? 'PASS' : 'FAIL'}  peak ${(outcome.peak / MB).toFixed(1).padStart(6)} MB  ${outcome.label}${outcome.complete ? '' : ' (INCOMPLETE EXPORT)'}`);
    }
    log(
      '  The export keeps no more than one batch of rows and one 64 KB chunk alive; what RSS adds during it is garbage V8 has not\n' +
        '  collected yet. With no heap limit V8 lets the old generation grow to a few times the live heap before a full collection;\n' +
        `  with ${budgetFlags.join(' ')} it collects sooner and the process stays flat. (BENCH_BUDGET_FLAGS changes run 2's flags.)`,
    );
  } finally {
    if (process.env.BENCH_KEEP_SCHEMA !== '1') await adminQuery(databaseUrl, `drop schema if exists ${SCHEMA} cascade`);
  }
}

if (process.argv[2] === 'server') {
  serve().catch((error: unknown) => {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(`forms bench server failed: ${message}\n`);
    process.send?.({ type: 'error', message } satisfies ChildMessage);
    process.exit(1);
  });
} else {
  main().catch((error: unknown) => {
    process.stderr.write(`forms export benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
