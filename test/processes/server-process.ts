import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, startCommand } from '../../scripts/build.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ServerProcess {
  baseUrl: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout so far. */
  output(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
  /** Resolves once the process has ended by itself (or been killed), with how it ended. */
  ended(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `npm run build`: compiles src/ into dist/ for startServerProcess. Call once per test file
 * (beforeAll). Under vitest the run's global setup has built dist/ once already, and this does
 * nothing: a build in one worker swaps dist/ while a server of another worker is still loading
 * its modules from it (a failed start, "ENOENT dist/…"). The benchmarks build here.
 */
export async function buildServer(): Promise<{ outDir: string }> {
  if (process.env.VITEST) {
    const { inject } = await import('vitest');
    const built = inject('serverBuild');
    if (built) return built;
  }
  return build();
}

/**
 * Starts the server as `npm start` does, `node <the start script's flags> dist/server.js` (call
 * buildServer() first), and waits until /readyz answers.
 */
export async function startServerProcess(env: Record<string, string | undefined>): Promise<ServerProcess> {
  const port = await freePort();
  // A short shutdown grace period: no load balancer has to notice a test server leaving.
  const childEnv: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '200', ...env };
  for (const [name, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[name];
  delete childEnv.PUBLIC_BASE_URL;
  delete childEnv.NODE_OPTIONS; // vitest's, if any: the heap under test is the start script's
  const { flags, entry } = startCommand();
  const child = spawn(process.execPath, [...flags, entry], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const exited = ended.then(({ code }) => code);

  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${stdout}\n${stderr}`);
    try {
      if ((await fetch(`${baseUrl}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become ready:\n${stdout}\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  return {
    baseUrl,
    child,
    output: () => stdout,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    ended: () => ended,
  };
}

export async function http(baseUrl: string, method: string, url: string, options: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const response = await fetch(`${baseUrl}${url}`, {
    method,
    headers: {
      ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

/**
 * Starts the compiled server (call buildServer() first) for a start that is expected to fail,
 * and resolves once it exits, with everything it wrote. `env` may set PORT.
 */
export async function runFailingStart(env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', PORT: String(await freePort()), ...env };
  for (const [name, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[name];
  delete childEnv.PUBLIC_BASE_URL;
  delete childEnv.NODE_OPTIONS;
  const { flags, entry } = startCommand();
  const child = spawn(process.execPath, [...flags, entry], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}
