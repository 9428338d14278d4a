/**
 * Social upload benchmark: `npx tsx bench/social-upload.ts [--mb N] [--runs N]` (part of
 * `npm run bench`).
 *
 * The PUT of a 450 MB MP4 to a one-time upload link, against the server exactly as `npm start`
 * runs it (dist/server.js with the start script's node flags, test/processes/server-process.ts),
 * on the embedded database in a throwaway DATA_DIR, over real HTTP on loopback. The same file
 * is hashed by `sha256sum` in the same run: the upload streams the body to disk while it
 * computes the SHA-256, then reads the MP4's box headers, so `sha256sum` (read + hash, no
 * write) is the ceiling it is compared with.
 *
 * Per run (default 3, interleaved): `sha256sum` of the file (page cache warm), then one PUT of
 * it while the server's VmRSS is sampled every 50 ms. Reports MB/s of each, the upload's share of
 * sha256sum's speed (goal: at least 70%), and the server's RSS growth over its RSS just before the
 * upload (goal: under 64 MB), as medians of the runs. Exits 0 either way; non-zero only when the
 * bench itself fails (or an upload is not `ready`).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startCommand } from '../scripts/build.mjs';
import { buildServer, freePort } from '../test/processes/server-process.js';

const MB = 1024 * 1024;
const argument = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const SIZE_MB = argument('mb', 450);
const RUNS = argument('runs', 3);
const SAMPLE_MS = 50;
const GOAL_SHARE = 0.7;
const GOAL_RSS_MB = 64;

const log = (line = '') => process.stdout.write(`${line}\n`);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** An MP4 of exactly `bytes`: ftyp, moov, and an mdat of pseudo-random bytes (an 8 MiB random block repeated). */
function writeMp4(file: string, bytes: number): void {
  const box = (type: string, body: Buffer) => {
    const size = Buffer.alloc(4);
    size.writeUInt32BE(8 + body.length);
    return Buffer.concat([size, Buffer.from(type, 'latin1'), body]);
  };
  const ftyp = box('ftyp', Buffer.concat([Buffer.from('isom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2avc1mp41')]));
  const moov = box('moov', box('mvhd', Buffer.alloc(100)));
  const mdatBody = bytes - ftyp.length - moov.length - 8;
  const mdatHeader = Buffer.alloc(8);
  mdatHeader.writeUInt32BE(mdatBody + 8);
  mdatHeader.write('mdat', 4, 'latin1');
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, Buffer.concat([ftyp, moov, mdatHeader]));
  const block = randomBytes(8 * MB);
  for (let left = mdatBody; left > 0; left -= block.length) fs.writeSync(fd, block, 0, Math.min(block.length, left));
  fs.closeSync(fd);
}

function vmRss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
}

function sha256sum(file: string): { seconds: number; hex: string } {
  const started = process.hrtime.bigint();
  const output = execFileSync('sha256sum', [file], { encoding: 'utf8' });
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, hex: output.split(/\s+/)[0]! };
}

async function api(baseUrl: string, method: string, url: string, token: string, body: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}${url}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text).data;
}

/** PUTs the file to the upload URL with a Content-Length, streaming it from disk; resolves with the reply. */
function put(uploadUrl: string, file: string, size: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    fs.createReadStream(file, { highWaterMark: MB }).pipe(request);
  });
}

/**
 * `node <start flags> dist/server.js` as test/processes/server-process.ts starts it, with a longer
 * wait for /readyz: a first start on the embedded database applies every migration, which takes
 * a minute on a busy 2-core machine.
 */
async function startServer(env: Record<string, string | undefined>) {
  const port = await freePort();
  const childEnv: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env };
  for (const [name, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[name];
  delete childEnv.PUBLIC_BASE_URL;
  delete childEnv.NODE_OPTIONS;
  const { flags, entry } = startCommand();
  const child = spawn(process.execPath, [...flags, entry], { cwd: path.resolve(import.meta.dirname, '..'), env: childEnv, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 300_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited early (${child.exitCode})`);
    try {
      if ((await fetch(`${baseUrl}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('the server did not become ready within 5 minutes');
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    baseUrl,
    child,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'social-upload-bench-'));
  const file = path.join(directory, 'video.mp4');
  const size = SIZE_MB * MB;
  log(`social upload bench: PUT of a ${SIZE_MB} MB MP4 (${size} bytes) against dist/server.js on the embedded database, ${RUNS} runs`);
  writeMp4(file, size);
  const { hex: digest } = sha256sum(file); // also warms the page cache
  if (!/^[0-9a-f]{64}$/.test(digest)) throw new Error(`sha256sum printed no digest: ${digest}`);

  await buildServer();
  const adminToken = randomBytes(24).toString('hex');
  const server = await startServer({
    DATA_DIR: path.join(directory, 'data'),
    SOCIAL_FILES_DIR: path.join(directory, 'files'),
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'warn',
    DATABASE_URL: undefined,
    REDIS_URL: undefined,
    RUN_JOBS: 'false',
  });
  try {
    const tenant = await api(server.baseUrl, 'POST', '/admin/v1/tenants', adminToken, { name: 'social upload bench' });
    const key = (await api(server.baseUrl, 'POST', `/admin/v1/tenants/${tenant.id}/api-keys`, adminToken, { mode: 'test', scopes: ['*'], rate_limit_per_minute: 100_000 }))
      .key as string;
    const rows: Array<{ hashMbps: number; uploadMbps: number; rssGrowthMb: number; rssBeforeMb: number }> = [];
    for (let run = 1; run <= RUNS; run += 1) {
      const hashed = sha256sum(file);
      const link = await api(server.baseUrl, 'POST', '/api/v1/services/social/files/upload-links', key, { file_name: 'video.mp4', size_bytes: size, sha256: digest });
      const uploadUrl = `${server.baseUrl}${new URL(link.upload_url as string).pathname}`;
      const pid = server.child.pid!;
      const before = vmRss(pid);
      let peak = before;
      const timer = setInterval(() => (peak = Math.max(peak, vmRss(pid))), SAMPLE_MS);
      const started = process.hrtime.bigint();
      const reply = await put(uploadUrl, file, size);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      clearInterval(timer);
      peak = Math.max(peak, vmRss(pid));
      const data = reply.status === 200 ? JSON.parse(reply.body).data : undefined;
      if (data?.status !== 'ready') throw new Error(`upload ${run} answered ${reply.status}: ${reply.body.slice(0, 300)}`);
      fs.rmSync(path.join(directory, 'files', tenant.id, 'test', data.file_id), { force: true });
      const row = { hashMbps: SIZE_MB / hashed.seconds, uploadMbps: SIZE_MB / seconds, rssGrowthMb: (peak - before) / MB, rssBeforeMb: before / MB };
      rows.push(row);
      log(
        `run ${run}: sha256sum ${row.hashMbps.toFixed(0)} MB/s; PUT ${row.uploadMbps.toFixed(0)} MB/s (${((100 * row.uploadMbps) / row.hashMbps).toFixed(0)}%); server RSS ${row.rssBeforeMb.toFixed(0)} MB before, +${row.rssGrowthMb.toFixed(1)} MB at peak`,
      );
    }
    const hash = median(rows.map((row) => row.hashMbps));
    const upload = median(rows.map((row) => row.uploadMbps));
    const share = median(rows.map((row) => row.uploadMbps / row.hashMbps));
    const growth = median(rows.map((row) => row.rssGrowthMb));
    const worstGrowth = Math.max(...rows.map((row) => row.rssGrowthMb));
    log();
    log(`| ${SIZE_MB} MB PUT (median of ${RUNS}) | value | goal | |`);
    log('|---|---|---|---|');
    log(`| sha256sum of the same file | ${hash.toFixed(0)} MB/s | | |`);
    log(`| upload (stream to disk + SHA-256 + checks) | ${upload.toFixed(0)} MB/s | | |`);
    log(`| upload / sha256sum | ${(100 * share).toFixed(0)}% | >= ${100 * GOAL_SHARE}% | ${share >= GOAL_SHARE ? 'PASS' : 'FAIL'} |`);
    log(`| server RSS growth (worst run ${worstGrowth.toFixed(1)} MB) | ${growth.toFixed(1)} MB | < ${GOAL_RSS_MB} MB | ${worstGrowth < GOAL_RSS_MB ? 'PASS' : 'FAIL'} |`);
  } finally {
    await server.stop();
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
