/**
 * Forms CSV export benchmark: `npx tsx bench/forms-export.ts [--rows N]` (the second half of
 * `npm run bench`).
 *
 * It measures the server exactly as `npm start` runs it: `npm run build`'s compiler
 * (scripts/build.mjs) writes dist/, and the server process is `node <flags> dist/server.js`
 * with the node flags read out of package.json's `start` script (startCommand() in
 * scripts/build.mjs), so the bench cannot drift from what operators start. Only the
 * environment differs: the bench's own database schema, a free port, a throwaway SECRETS_KEY,
 * no Redis, and NODE_OPTIONS removed (it could change the heap under test).
 *
 * On real PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test), in its
 * own schema `forms_bench` (dropped and recreated at the start, dropped at the end unless
 * BENCH_KEEP_SCHEMA=1; the server reaches it through `options=-c search_path=forms_bench` in
 * its DATABASE_URL), it:
 *
 * 1. builds dist/ and starts the server once, which applies the migrations (and, on the empty
 *    schema, creates the "default" tenant as a first start does);
 * 2. creates a tenant and a test key (createTenantAdmin) and, over HTTP, a published form
 *    with 7 fields;
 * 3. bulk-inserts N submissions (default 1,000,000; BENCH_FORMS_ROWS or --rows for a quick
 *    check) with `insert ... select ... from generate_series`, and sets the form's counters;
 * 4. for each configuration below, against a fresh server process, downloads
 *    GET /forms/forms/:id/submissions.csv over real HTTP with fetch, reading the stream and
 *    counting bytes and records without keeping them, while sampling the server process's
 *    resident memory (VmRSS in /proc/<pid>/status) every 100 ms, then stops it with SIGTERM:
 *    - the production start (`npm start`'s flags): PASS/FAIL is judged on this run only;
 *    - for comparison, node's defaults (no heap flags): V8 then sizes its heap from the
 *      machine's memory (24 GB here) and lets garbage pile up in the old generation before
 *      collecting it, so RSS rises although the export holds only one batch at a time;
 *    - for comparison, any flag sets in BENCH_COMPARE_FLAGS, separated by `;` (e.g.
 *      "--max-old-space-size=160 --max-semi-space-size=8;--max-old-space-size=192 --max-semi-space-size=8"),
 *      to re-tune the start flags.
 *
 * Reports per run: rows, bytes, seconds, rows/s, the server's RSS before and at its peak
 * during the download, the kernel's high-water mark VmHWM, the exit code after SIGTERM, and
 * whether the peak stays under 150 MB. Exits 0 either way; non-zero only when the bench itself
 * fails.
 *
 * Diagnostics: BENCH_NODE_FLAGS adds node flags to every server (e.g. --trace-gc; the summary
 * then says the production run was not pure); BENCH_DEBUG_MEMORY=1 preloads
 * bench/memory-probe.mjs, which prints the server's heap spaces every 500 ms.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { build, startCommand } from '../scripts/build.mjs';
import { openDatabase } from '../src/db/database.js';
import { systemClock } from '../src/lib/clock.js';
import { createTenantAdmin } from '../src/platform/tenants/service.js';
import { freePort } from '../test/processes/server-process.js';

const SCHEMA = 'forms_bench';
const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(BENCH_DIR, '..');
const LIMIT_MB = 150;
const SAMPLE_MS = 100;
const INSERT_CHUNK = 250_000;
const MB = 1024 * 1024;

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
// The server: dist/server.js as `npm start` runs it.

interface Server {
  child: ChildProcess;
  port: number;
  /** The last lines the server wrote to stdout (its JSON log, the first-start key). */
  outputTail(): string;
}

/** Everything the server process gets: production flags plus whatever a run adds. */
interface ServerSpec {
  benchUrl: string;
  entry: string;
  flags: string[];
  secretsKey: string;
}

function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

async function startServer(spec: ServerSpec): Promise<Server> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: spec.benchUrl, PORT: String(port), HOST: '127.0.0.1', SECRETS_KEY: spec.secretsKey };
  // Defaults as an operator's plain `npm start` has them; nothing that could change the heap.
  for (const name of ['NODE_OPTIONS', 'REDIS_URL', 'ADMIN_TOKEN', 'PUBLIC_BASE_URL', 'DATA_DIR', 'LOG_LEVEL', 'RUN_JOBS']) delete env[name];
  const child = spawn(process.execPath, [...spec.flags, spec.entry], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let tail = '';
  child.stdout.on('data', (chunk) => (tail = (tail + String(chunk)).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the server exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${tail}`);
    }
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exited;
      throw new Error(`the server did not become ready within 60 s:\n${tail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, port, outputTail: () => tail };
}

/** SIGTERM, as an orchestrator stops it; SIGKILL after 10 s. Resolves with the exit code. */
async function stopServer(child: ChildProcess): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? child.signalCode;
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

/** Reads VmRSS and VmHWM (bytes) of a process from /proc, or RSS alone from `ps` where /proc is missing. */
function procMemory(pid: number): { rss: number; hwm?: number } | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    const rss = kb('VmRSS');
    if (Number.isFinite(rss)) return { rss, hwm: kb('VmHWM') };
  } catch {
    // no /proc (macOS): ask ps
  }
  try {
    const kb = Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim());
    return Number.isFinite(kb) && kb > 0 ? { rss: kb * 1024 } : undefined;
  } catch {
    return undefined;
  }
}

/** Samples the server's RSS every 100 ms. */
function sampleMemory(child: ChildProcess) {
  let peak = 0;
  let samples = 0;
  let last = 0;
  const take = () => {
    const memory = procMemory(child.pid!);
    if (!memory) return;
    samples += 1;
    last = memory.rss;
    peak = Math.max(peak, memory.rss);
  };
  take();
  const timer = setInterval(take, SAMPLE_MS);
  return {
    source: fs.existsSync(`/proc/${child.pid}/status`) ? `/proc/${child.pid}/status VmRSS` : 'ps -o rss',
    stop() {
      clearInterval(timer);
      take();
      return { peak, samples, last };
    },
  };
}

// ---------------------------------------------------------------------------------------
// Seed and download.

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

function flagList(text: string | undefined): string[] {
  return (text ?? '').split(/\s+/).filter(Boolean);
}

interface RunOutcome {
  label: string;
  judged: boolean;
  flags: string[];
  peak: number;
  hwm: number | undefined;
  seconds: number;
  passed: boolean;
  complete: boolean;
  exitCode: number | string | null;
}

interface MeasureContext {
  spec: Omit<ServerSpec, 'flags'>;
  rows: number;
  secret: string;
  formId: string;
}

/** One download against a fresh server process started with `flags`; prints its figures. */
async function measure(label: string, judged: boolean, flags: string[], context: MeasureContext): Promise<RunOutcome> {
  const { child, port, outputTail } = await startServer({ ...context.spec, flags });
  let figures: Omit<RunOutcome, 'exitCode'>;
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
    log(label);
    log(`  command              node ${[...flags, context.spec.entry].join(' ')}  (server pid ${child.pid})`);
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
    if (after?.hwm !== undefined) log(`  server VmHWM         ${(after.hwm / MB).toFixed(1)} MB (kernel high-water mark over the process's whole life, start-up included)`);
    const verdict = `peak server RSS ${(memory.peak / MB).toFixed(1)} MB ${passed ? '<' : '>='} ${LIMIT_MB} MB${complete ? '' : '; WARNING: the export was incomplete'}`;
    log(judged ? `  ${passed ? 'PASS' : 'FAIL'}: ${verdict}` : `  (comparison, not judged) ${verdict}`);
    figures = { label, judged, flags, peak: memory.peak, hwm: after?.hwm, seconds: result.seconds, passed, complete };
  } catch (error) {
    process.stderr.write(`server output before the failure:\n${outputTail()}\n`);
    await stopServer(child);
    throw error;
  }
  const exitCode = await stopServer(child);
  if (exitCode !== 0) log(`  WARNING: the server exited with ${exitCode} after SIGTERM (expected 0)`);
  return { ...figures, exitCode };
}

async function main(): Promise<void> {
  const rows = rowsSetting();
  const start = startCommand();
  const extraFlags = flagList(process.env.BENCH_NODE_FLAGS);
  if (process.env.BENCH_DEBUG_MEMORY === '1') extraFlags.push('--import', pathToFileURL(path.join(BENCH_DIR, 'memory-probe.mjs')).href);
  const compareSets = (process.env.BENCH_COMPARE_FLAGS ?? '')
    .split(';')
    .map(flagList)
    .filter((flags) => flags.length > 0);
  const databaseUrl = process.env.DATABASE_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test';
  const benchUrl = benchUrlOf(databaseUrl);
  log(`Forms CSV export benchmark: ${rows.toLocaleString('en')} submissions, limit ${LIMIT_MB} MB RSS for the server process`);
  log(`  node ${process.version}, schema ${SCHEMA} on ${new URL(databaseUrl).host}`);
  log(`  server: the production start, package.json "start": ${start.script}`);
  if (extraFlags.length > 0) log(`  extra node flags on every server (BENCH_NODE_FLAGS / BENCH_DEBUG_MEMORY): ${extraFlags.join(' ')}`);

  const built = await build();
  log(`  built dist/ with scripts/build.mjs (as npm start's prestart): ${built.sources} modules, ${built.assets.length} assets, ${(built.ms / 1000).toFixed(1)} s`);

  await adminQuery(databaseUrl, `drop schema if exists ${SCHEMA} cascade`);
  await adminQuery(databaseUrl, `create schema ${SCHEMA}`);
  try {
    // A throwaway key for secrets at rest (required with DATABASE_URL); the bench stores none.
    const spec = { benchUrl, entry: start.entry, secretsKey: process.env.SECRETS_KEY ?? randomBytes(32).toString('base64') };
    // The first server applies the migrations and serves the form creation; it is not measured.
    const setup = await startServer({ ...spec, flags: [...start.flags, ...extraFlags] });
    let seeded: Awaited<ReturnType<typeof seed>>;
    try {
      seeded = await seed(benchUrl, setup.port, rows);
    } finally {
      await stopServer(setup.child);
    }
    const context: MeasureContext = { spec, rows, secret: seeded.secret, formId: seeded.formId };

    const outcomes: RunOutcome[] = [await measure("Production start (npm start): the flags of package.json's start script", true, [...start.flags, ...extraFlags], context)];
    outcomes.push(await measure("Comparison: node's default heap sizing (no flags; V8 sizes its heap from this machine's memory)", false, extraFlags, context));
    for (const flags of compareSets) outcomes.push(await measure(`Comparison: BENCH_COMPARE_FLAGS ${flags.join(' ')}`, false, [...flags, ...extraFlags], context));

    log();
    log('Summary (peak RSS of the server process during the download; VmHWM includes start-up)');
    for (const outcome of outcomes) {
      const figures = `peak ${(outcome.peak / MB).toFixed(1).padStart(6)} MB  VmHWM ${outcome.hwm === undefined ? '    ?' : (outcome.hwm / MB).toFixed(1).padStart(6)} MB  ${outcome.seconds.toFixed(1).padStart(5)} s`;
      const verdict = outcome.judged ? (outcome.passed ? 'PASS' : 'FAIL') : outcome.passed ? '(<150)' : '(>=150)';
      const flags = outcome.flags.length > 0 ? outcome.flags.join(' ') : '(no flags)';
      log(`  ${verdict.padEnd(7)} ${figures}  ${outcome.judged ? 'production' : 'comparison'}: node ${flags}${outcome.complete ? '' : ' (INCOMPLETE EXPORT)'}`);
    }
    const production = outcomes[0]!;
    log(
      `  ${production.passed && production.complete ? 'PASS' : 'FAIL'}: the production start (${start.flags.join(' ')}) ${production.passed ? 'stays under' : 'exceeds'} ${LIMIT_MB} MB RSS` +
        (extraFlags.length > 0 ? ` (with the extra diagnostic flags ${extraFlags.join(' ')})` : ''),
    );
    log(
      '  The export keeps no more than one batch of rows and one 64 KB chunk alive; what RSS adds during it is garbage V8 has not\n' +
        '  collected yet. With no heap limit V8 lets the old generation grow to a few times the live heap before a full collection;\n' +
        "  the start script's heap flags make it collect sooner, so the process stays flat.",
    );
  } finally {
    if (process.env.BENCH_KEEP_SCHEMA !== '1') await adminQuery(databaseUrl, `drop schema if exists ${SCHEMA} cascade`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`forms export benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
