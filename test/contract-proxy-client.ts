import { appendFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { RequestShape } from './contract.js';

/** The harness side of the Prism pass (test/contract-proxy.ts starts the proxy for the run). */

export const UPSTREAM_HEADER = 'x-contract-upstream';
const VIOLATIONS_HEADER = 'sl-violations';

export interface Violation {
  location: string[];
  severity: string;
  code: string | number;
  message: string;
}

export interface ProxyFinding {
  operation: string;
  status: number;
  violations: Violation[];
}

export function isError(violation: Violation): boolean {
  return violation.severity === 'Error';
}

/** Prism's finding for a request that matches no operation of the document (a warning, in its terms). */
export function isUnresolvedRoute(violation: Violation): boolean {
  return violation.message === 'Selected route not found';
}

// A fresh connection per call: a kept-alive one races the server's idle timeout ("socket hang up").
const agent = new http.Agent({ keepAlive: false });
const listening = new WeakMap<FastifyInstance, Promise<number>>();

/**
 * Sends the request through Prism to the app (listening on a port of its own from the first
 * proxied call on), and returns the reply as `app.inject` would have, with Prism's findings.
 * Undefined when the request cannot travel over a real connection as written (a header or
 * URL only the in-process injector accepts); the harness then calls the app in-process.
 */
export async function callThroughContractProxy(
  app: FastifyInstance,
  proxy: { url: string },
  request: RequestShape,
): Promise<{ response: LightMyRequestResponse; violations: Violation[] } | undefined> {
  const port = await portOf(app);
  const target = new URL(proxy.url);
  const headers: Record<string, string> = { ...request.headers, [UPSTREAM_HEADER]: String(port) };
  if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
  let outgoing: http.ClientRequest;
  const reply = new Promise<http.IncomingMessage>((resolve, reject) => {
    try {
      outgoing = http.request({ host: target.hostname, port: target.port, method: request.method, path: request.url, headers, agent }, resolve);
    } catch {
      resolve(undefined as never);
      return;
    }
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
  const incoming = await reply;
  if (!incoming) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const rawPayload = Buffer.concat(chunks);
  const responseHeaders = { ...incoming.headers };
  const violations = JSON.parse(String(responseHeaders[VIOLATIONS_HEADER] ?? '[]')) as Violation[];
  delete responseHeaders[VIOLATIONS_HEADER];
  const payload = rawPayload.toString('utf8');
  const response = {
    raw: { req: outgoing!, res: incoming },
    rawPayload,
    headers: responseHeaders,
    statusCode: incoming.statusCode ?? 0,
    statusMessage: incoming.statusMessage ?? '',
    trailers: {},
    payload,
    body: payload,
    json: () => JSON.parse(payload),
    stream: () => {
      throw new Error('stream() is not available on a proxied reply');
    },
    cookies: [],
  } as unknown as LightMyRequestResponse;
  return { response, violations };
}

/**
 * The app's own listener for proxied calls: a plain HTTP server handing requests to Fastify's
 * router, so the app itself stays free to listen where a test wants it to.
 */
function portOf(app: FastifyInstance): Promise<number> {
  let port = listening.get(app);
  if (!port) {
    const server = http.createServer((request, reply) => app.routing(request, reply));
    // Hooks cannot be added to a started app, so nothing closes this server: it and its
    // connections are unreferenced, and never keep a test worker from exiting.
    server.on('connection', (socket) => socket.unref());
    server.unref();
    port = new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
    listening.set(app, port);
  }
  return port;
}

/** Every proxied call leaves one line in the run's report folder, summed up at the end of the run. */
export function recordProxyFinding(reportDir: string, finding: ProxyFinding): void {
  appendFileSync(path.join(reportDir, `${process.pid}.jsonl`), `${JSON.stringify(finding)}\n`);
}
