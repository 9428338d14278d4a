// Ad-hoc profiling aid (not part of npm run bench): one target under autocannon, printing server CPU per request.
// Usage: [PROF_OUT=file.cpuprofile] node --import tsx bench/profile-full.ts <full|baseline|hello>
// PROF_OUT writes a CPU profile of the measured window only (not start-up); PROF_HEAP_OUT a
// sampled allocation profile of that window (freed objects included).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';
import { loadConfig } from '../src/config/index.js';
import { createRuntime } from '../src/runtime.js';
import { createTenantAdmin } from '../src/platform/tenants/service.js';
import { pgTypes } from '../src/db/timestamptz.js';

const base = 'postgres://postgres@127.0.0.1:5432/test';
const admin0 = new pg.Client({ connectionString: base });
await admin0.connect();
await admin0.query('drop schema if exists prof cascade; create schema prof');
await admin0.end();
const url = new URL(base);
url.searchParams.set('options', '-c search_path=prof');
const runtime = await createRuntime(loadConfig({ DATABASE_URL: url.toString(), LOG_LEVEL: process.env.PROF_LOG ?? 'info', RUN_JOBS: 'false', SECRETS_KEY: Buffer.alloc(32, 1).toString('base64') }), { startJobs: false });
const admin = createTenantAdmin({ db: runtime.database.db, clock: runtime.clock });
const tenant = await admin.createTenant('prof');
const { secret } = await admin.createApiKey(tenant.id, { mode: 'test', scopes: ['*'], rate_limit_per_minute: 1_000_000 });
const client = new pg.Client({ connectionString: url.toString() });
await client.connect();
await client.query(`insert into crm_contacts (id, tenant_id, mode, name, email, created_at, updated_at)
  select gen_random_uuid(), $1, 'test', 'Person ' || n, 'p' || n || '@example.com', now() - n * interval '1 second', now() from generate_series(1, 500) n`, [tenant.id]);
await client.end();
const mode = process.argv[2] ?? 'full';
let address: string;
if (mode === 'baseline') {
  const { default: Fastify } = await import('fastify');
  const pool = new pg.Pool({ connectionString: url.toString(), max: 10, types: pgTypes });
  const bare = Fastify();
  bare.get('/api/v1/services/crm/contacts', async () => {
    const [list, count] = await Promise.all([
      pool.query('select id, name, email, phone, company_id, created_at, updated_at from crm_contacts where tenant_id = $1 and mode = $2 order by created_at desc, id desc limit $3 offset $4', [tenant.id, 'test', 50, 0]),
      pool.query('select count(*) as total from crm_contacts where tenant_id = $1 and mode = $2', [tenant.id, 'test']),
    ]);
    const total = Number(count.rows[0].total);
    const data = list.rows.map((row) => ({ ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() }));
    return { data, meta: { limit: 50, offset: 0, total, has_more: data.length < total } };
  });
  address = await bare.listen({ port: 0, host: '127.0.0.1' });
} else {
  address = await runtime.app.listen({ port: 0, host: '127.0.0.1' });
}
const target = mode !== 'hello' ? `${address}/api/v1/services/crm/contacts?limit=50` : `${address}/healthz`;
const profileOut = process.env.PROF_OUT;
const heapOut = process.env.PROF_HEAP_OUT;
const inspector = profileOut || heapOut ? new (await import('node:inspector')).Session() : undefined;
const post = (method: string, params?: object) => new Promise<any>((resolve, reject) => inspector!.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))));
if (inspector) inspector.connect();
if (heapOut) {
  // Every allocation in the window, also those the garbage collector has since freed.
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
}
if (profileOut) {
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
}
const threadCpu = () => {
  const byName = new Map<string, number>();
  for (const tid of (fs.readdirSync('/proc/self/task'))) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) + (Number(tid) === process.pid ? ' (main)' : '');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10_000);
    } catch {}
  }
  return byName;
};
const snapshotPrefix = process.env.PROF_SNAPSHOT;
if (snapshotPrefix) {
  const v8 = await import('node:v8');
  v8.writeHeapSnapshot(`${snapshotPrefix}-idle.heapsnapshot`);
  setTimeout(() => v8.writeHeapSnapshot(`${snapshotPrefix}-load.heapsnapshot`), 4000);
}
const threadsBefore = threadCpu();
const cpuBefore = process.cpuUsage();
const child = spawn('npx', ['autocannon', '-j', '-c', '50', ...(process.env.PROF_AMOUNT ? ['-a', process.env.PROF_AMOUNT] : ['-d', '8']), '-H', `authorization=Bearer ${secret}`, target], { stdio: ['ignore', 'pipe', 'ignore'] });
let report = '';
child.stdout!.on('data', (chunk) => (report += String(chunk)));
await new Promise((resolve) => child.on('exit', resolve));
const cpu = process.cpuUsage(cpuBefore);
if (profileOut) {
  const { profile } = await post('Profiler.stop');
  fs.writeFileSync(profileOut, JSON.stringify(profile));
}
if (heapOut) {
  const { profile } = await post('HeapProfiler.stopSampling');
  fs.writeFileSync(heapOut, JSON.stringify(profile));
}
const requests = JSON.parse(report).requests.total as number;
for (const [name, us] of threadCpu()) console.error(`  thread ${name}: ${((us - (threadsBefore.get(name) ?? 0)) / requests).toFixed(0)} µs per request`);
console.error(`${mode}: ${requests} requests, server CPU ${((cpu.user + cpu.system) / requests).toFixed(0)} µs per request`);
await runtime.close();
process.exit(0);
