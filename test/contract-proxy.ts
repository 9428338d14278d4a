import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { servedOpenApiDocument } from '../scripts/openapi-document.js';
import { isError, isUnresolvedRoute, UPSTREAM_HEADER, type ProxyFinding } from './contract-proxy-client.js';

/**
 * The outside contract check: Stoplight Prism's validation proxy in front of the servers
 * under test. One Prism process serves the whole run; it forwards to a small router that
 * passes each request on to the test app named by the `x-contract-upstream` header (every
 * test file has its own app on its own port). Prism reports what it finds in the
 * `sl-violations` reply header; the harness fails a test on a response violation or on a
 * request violation the server accepted, and writes every finding to the report folder,
 * which the run's teardown sums up (the figure in docs/testing.md).
 */

export interface ContractProxy {
  url: string;
  reportDir: string;
  /** The document Prism holds (the one a fresh server serves). */
  documentPath: string;
  stop(): Promise<Summary>;
}

export interface Summary {
  requests: number;
  responseViolations: number;
  acceptedRequestViolations: number;
  refusedRequestViolations: number;
  unresolvedAnswered: number;
  examples: string[];
}

export async function startContractProxy(): Promise<ContractProxy> {
  const workDir = mkdtempSync(path.join(tmpdir(), 'contract-proxy-'));
  const reportDir = path.join(workDir, 'findings');
  const documentPath = path.join(workDir, 'openapi.json');
  writeFileSync(documentPath, JSON.stringify(await servedOpenApiDocument()));
  mkdirSync(reportDir);

  const router = await startRouter();
  const routerPort = (router.address() as AddressInfo).port;
  const prism = await startPrism(documentPath, `http://127.0.0.1:${routerPort}`, path.join(workDir, 'prism.log'));

  return {
    url: `http://127.0.0.1:${prism.port}`,
    reportDir,
    documentPath,
    async stop() {
      prism.child.kill('SIGTERM');
      await new Promise<void>((resolve) => router.close(() => resolve()));
      const summary = summarise(reportDir);
      rmSync(workDir, { recursive: true, force: true });
      return summary;
    },
  };
}

async function startRouter(): Promise<http.Server> {
  // A fresh connection per request: a kept-alive one races the app listener's idle timeout.
  const agent = new http.Agent({ keepAlive: false });
  const router = http.createServer((request, reply) => {
    const port = Number(request.headers[UPSTREAM_HEADER]);
    const headers = { ...request.headers };
    delete headers[UPSTREAM_HEADER];
    const forward = http.request({ host: '127.0.0.1', port, method: request.method, path: request.url, headers, agent }, (upstream) => {
      reply.writeHead(upstream.statusCode ?? 502, upstream.rawHeaders);
      upstream.pipe(reply);
    });
    forward.on('error', (error) => {
      reply.writeHead(502, { 'content-type': 'text/plain' });
      reply.end(`contract router: ${error.message}`);
    });
    request.pipe(forward);
  });
  await new Promise<void>((resolve) => router.listen(0, '127.0.0.1', resolve));
  return router;
}

async function startPrism(documentPath: string, upstream: string, logPath: string): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const binary = path.resolve('node_modules/.bin/prism');
  const child = spawn(binary, ['proxy', documentPath, upstream, '--host', '127.0.0.1', '--port', String(port), '--cors=false', '--errors=false', '-v', 'warn'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (await answers(port)) {
      child.stdout?.removeAllListeners('data');
      child.stdout?.resume();
      return { child, port };
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  child.kill('SIGKILL');
  writeFileSync(logPath, output);
  throw new Error(`Prism did not start (exit ${child.exitCode}):\n${output.slice(-2000)}`);
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = http.get({ host: '127.0.0.1', port, path: '/healthz', headers: { [UPSTREAM_HEADER]: '1' } }, (reply) => {
      reply.resume();
      resolve(true);
    });
    probe.on('error', () => resolve(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = http.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function summarise(reportDir: string): Summary {
  const summary: Summary = { requests: 0, responseViolations: 0, acceptedRequestViolations: 0, refusedRequestViolations: 0, unresolvedAnswered: 0, examples: [] };
  for (const file of readdirSync(reportDir)) {
    for (const line of readFileSync(path.join(reportDir, file), 'utf8').split('\n')) {
      if (!line) continue;
      const finding = JSON.parse(line) as ProxyFinding;
      summary.requests += 1;
      const errors = finding.violations.filter(isError);
      const response = errors.filter((violation) => violation.location[0] === 'response');
      const request = errors.filter((violation) => violation.location[0] !== 'response');
      summary.responseViolations += response.length;
      if (finding.status < 400 && finding.violations.some(isUnresolvedRoute)) summary.unresolvedAnswered += 1;
      if (finding.status < 400) summary.acceptedRequestViolations += request.length;
      else summary.refusedRequestViolations += request.length;
      if ((response.length > 0 || (finding.status < 400 && request.length > 0)) && summary.examples.length < 20) {
        summary.examples.push(`${finding.operation} -> ${finding.status}: ${JSON.stringify(errors)}`);
      }
    }
  }
  return summary;
}
