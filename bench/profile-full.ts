// Ad-hoc profiling aid (not part of npm run bench): the full app in this process under autocannon, on one
// endpoint of bench/endpoints.ts, printing server CPU per request (per thread too).
// Usage: [PROF_OUT=file.cpuprofile] [PROF_HEAP_OUT=file.heapprofile] npx tsx bench/profile-full.ts ["crm contacts"]
// PROF_OUT writes a CPU profile of the measured window only (not start-up or seeding); PROF_HEAP_OUT a
// sampled allocation profile of that window (freed objects included; with PROF_HEAP_SURVIVORS=1 only what young-generation
// collections did not free, i.e. what got promoted). Needs PostgreSQL (DATABASE_URL).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';
import { loadConfig } from '../src/config/index.js';
import { createRuntime } from '../src/runtime.js';
import { createTenantAdmin } from '../src/platform/tenants/service.js';
import { ENDPOINTS, type Api } from './endpoints.js';

const endpointName = process.argv[2] ?? 'crm contacts';
const endpoint = ENDPOINTS.find((candidate) => candidate.name === endpointName);
if (!endpoint) throw new Error(`unknown endpoint "${endpointName}"; known: ${ENDPOINTS.map((candidate) => candidate.name).join(', ')}`);

const base = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const admin0 = new pg.Client({ connectionString: base });
await admin0.connect();
await admin0.query('drop schema if exists prof cascade; create schema prof');
await admin0.end();
const url = new URL(base);
url.searchParams.set('options', '-c search_path=prof');
const runtime = await createRuntime(
  loadConfig({ DATABASE_URL: url.toString(), LOG_LEVEL: process.env.PROF_LOG ?? 'info', RUN_JOBS: 'false', SECRETS_KEY: Buffer.alloc(32, 1).toString('base64') }),
  { startJobs: false },
);
const admin = createTenantAdmin({ db: runtime.database.db, clock: runtime.clock });
const tenant = await admin.createTenant('prof');
const { secret } = await admin.createApiKey(tenant.id, { mode: 'test', scopes: ['*'], rate_limit_per_minute: 1_000_000 });
const api: Api = Object.assign(
  async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const response = await runtime.app.inject({
      method,
      url: path,
      headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    if (response.statusCode >= 300) throw new Error(`${method} ${path}: ${response.statusCode} ${response.body.slice(0, 200)}`);
    return response.json().data;
  },
  { mode: 'test' as const },
);
const seeded: Record<string, string> = {};
await endpoint.seed(api, 120, seeded);
const address = await runtime.app.listen({ port: 0, host: '127.0.0.1' });
const target = `${address}${endpoint.path(seeded)}`;

const profileOut = process.env.PROF_OUT;
const heapOut = process.env.PROF_HEAP_OUT;
const inspector = profileOut || heapOut ? new (await import('node:inspector')).Session() : undefined;
const post = (method: string, params?: object) =>
  new Promise<any>((resolve, reject) => inspector!.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))));
if (inspector) inspector.connect();
if (heapOut) {
  // Every allocation in the window, also those the garbage collector has since freed.
  await post('HeapProfiler.enable');
  // PROF_HEAP_SURVIVORS=1: only what young-generation collections did not free (promoted objects), to find what outlives a request.
  const everything = process.env.PROF_HEAP_SURVIVORS !== '1';
  await post('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: everything });
}
if (profileOut) {
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
}
const threadCpu = () => {
  const byName = new Map<string, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) + (Number(tid) === process.pid ? ' (main)' : '');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10_000);
    } catch {
      // the thread ended
    }
  }
  return byName;
};
const threadsBefore = threadCpu();
const cpuBefore = process.cpuUsage();
const child = spawn(
  'npx',
  [
    'autocannon',
    '-j',
    '-c',
    process.env.PROF_CONNECTIONS ?? '64',
    ...(process.env.PROF_AMOUNT ? ['-a', process.env.PROF_AMOUNT] : ['-d', '8']),
    '-H',
    `authorization=Bearer ${secret}`,
    target,
  ],
  {
    stdio: ['ignore', 'pipe', 'ignore'],
  },
);
let report = '';
child.stdout.on('data', (chunk) => (report += String(chunk)));
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
console.error(`${endpoint.name}: ${requests} requests, server CPU ${((cpu.user + cpu.system) / requests).toFixed(0)} µs per request`);
await runtime.close();
process.exit(0);
