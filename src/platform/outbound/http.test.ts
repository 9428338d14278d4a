import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundHttp, isPublicAddress, OutboundRequestError, type OutboundHttp } from './http.js';

/** A local server whose handler each test sets; records what reached it. */
class LocalServer {
  readonly received: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders }> = [];
  handler: http.RequestListener = (_request, response) => response.end('ok');
  readonly #server = http.createServer((request, response) => {
    this.received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
    this.handler(request, response);
  });
  port = 0;

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

const SETTINGS = { connectTimeoutMs: 1_000, totalTimeoutMs: 2_000, allowPrivateTargets: false };

async function failureOf(promise: Promise<unknown>): Promise<OutboundRequestError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OutboundRequestError);
  return error as OutboundRequestError;
}

const servers = [new LocalServer(), new LocalServer()];
const [target, other] = servers as [LocalServer, LocalServer];
const clients: OutboundHttp[] = [];
function client(settings: Partial<typeof SETTINGS> = {}, isAllowedAddress?: (address: string) => boolean): OutboundHttp {
  const created = createOutboundHttp({ ...SETTINGS, ...settings }, isAllowedAddress ? { isAllowedAddress } : {});
  clients.push(created);
  return created;
}
/** Treats 127.0.0.1 as if it were public, so a redirect from it to another internal address can be tested. */
const only127001 = (address: string) => address === '127.0.0.1' || address === '::ffff:127.0.0.1';

beforeAll(() => Promise.all(servers.map((server) => server.start())));
afterAll(async () => {
  await Promise.all(clients.map((created) => created.close()));
  await Promise.all(servers.map((server) => server.stop()));
});
afterEach(() => {
  for (const server of servers) {
    server.received.length = 0;
    server.handler = (_request, response) => response.end('ok');
  }
});

describe('which addresses are public', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
  ])('%s is not', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('the outbound client refuses non-public targets', () => {
  it.each(['http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]:80/', 'http://[::ffff:7f00:1]/', 'http://100.64.0.1/', 'http://0.0.0.0/'])(
    'refuses the IP literal in %s before connecting',
    async (url) => {
      const error = await failureOf(client().request(url));
      expect(error.reason).toBe('private_target');
      expect(error.message).toMatch(/not a public address/);
    },
  );

  it('refuses a loopback IP literal with a port, and nothing reaches the server', async () => {
    const error = await failureOf(client().request(`${target.url}/secret`));
    expect(error.reason).toBe('private_target');
    expect(target.received).toEqual([]);
  });

  it('refuses a hostname that resolves to a loopback address (checked after DNS)', async () => {
    const error = await failureOf(client().request(`http://localhost:${target.port}/`));
    expect(error.reason).toBe('private_target');
    expect(error.message).toContain('localhost');
    expect(target.received).toEqual([]);
  });

  it('refuses a redirect to a private address', async () => {
    target.handler = (_request, response) => response.writeHead(302, { location: 'http://10.0.0.1/admin' }).end();
    const error = await failureOf(client({}, only127001).request(`${target.url}/start`));
    expect(error.reason).toBe('private_target');
    expect(error.message).toContain('10.0.0.1');
    expect(target.received.map((request) => request.url)).toEqual(['/start']);
  });

  it('connects to loopback when private targets are allowed (development and tests)', async () => {
    const response = await client({ allowPrivateTargets: true }).request(`http://localhost:${target.port}/hello`);
    expect(response.status).toBe(200);
    expect(response.text()).toBe('ok');
  });

  it('refuses targets that are not http(s) URLs, or carry credentials', async () => {
    expect((await failureOf(client({ allowPrivateTargets: true }).request('file:///etc/passwd'))).reason).toBe('invalid_url');
    expect((await failureOf(client({ allowPrivateTargets: true }).request('not a url'))).reason).toBe('invalid_url');
    expect((await failureOf(client({ allowPrivateTargets: true }).request(`http://user:pw@127.0.0.1:${target.port}/`))).reason).toBe('invalid_url');
  });
});

describe('redirects', () => {
  it('follows them, turning a POST into a GET on 303, and keeps a 307 as it was', async () => {
    target.handler = (request, response) => {
      if (request.url === '/form') return void response.writeHead(303, { location: '/done' }).end();
      if (request.url === '/moved') return void response.writeHead(307, { location: '/echo' }).end();
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => response.end(`${request.method} ${request.url} ${body}`));
    };
    const outbound = client({ allowPrivateTargets: true });
    const seeOther = await outbound.request(`${target.url}/form`, { method: 'POST', body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(seeOther.text()).toBe('GET /done ');
    expect(seeOther.url).toBe(`${target.url}/done`);
    const temporary = await outbound.request(`${target.url}/moved`, { method: 'POST', body: 'b=2' });
    expect(temporary.text()).toBe('POST /echo b=2');
  });

  it('drops credentials when a redirect leaves the origin', async () => {
    target.handler = (_request, response) => response.writeHead(302, { location: `${other.url}/landing` }).end();
    await client({ allowPrivateTargets: true }).request(`${target.url}/`, { headers: { authorization: 'Bearer secret', 'x-trace': '1' } });
    expect(target.received[0]!.headers.authorization).toBe('Bearer secret');
    expect(other.received[0]!.headers.authorization).toBeUndefined();
    expect(other.received[0]!.headers['x-trace']).toBe('1');
  });

  it('gives up after the redirect limit, and answers a redirect as it is with maxRedirects 0', async () => {
    target.handler = (_request, response) => response.writeHead(302, { location: '/again' }).end();
    const outbound = client({ allowPrivateTargets: true });
    expect((await failureOf(outbound.request(`${target.url}/`, { maxRedirects: 3 }))).reason).toBe('too_many_redirects');
    expect(target.received).toHaveLength(4);
    expect((await outbound.request(`${target.url}/`, { maxRedirects: 0 })).status).toBe(302);
  });
});

describe('timeouts and sizes', () => {
  it('aborts a request to a server that never answers after the total timeout', async () => {
    target.handler = () => {}; // accepts, reads, never answers
    const error = await failureOf(client({ allowPrivateTargets: true, totalTimeoutMs: 300 }).request(`${target.url}/hang`));
    expect(error.reason).toBe('timeout');
    expect(error.message).toContain(target.url);
  });

  it('counts the body in the total timeout: a reply that trickles forever is cut', async () => {
    target.handler = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => response.write('.'), 50);
      response.on('close', () => clearInterval(timer));
    };
    const error = await failureOf(client({ allowPrivateTargets: true, totalTimeoutMs: 400 }).request(`${target.url}/trickle`));
    expect(error.reason).toBe('timeout');
  });

  it('refuses a reply larger than the limit', async () => {
    target.handler = (_request, response) => response.end('x'.repeat(2048));
    const error = await failureOf(client({ allowPrivateTargets: true }).request(`${target.url}/big`, { maxResponseBytes: 1024 }));
    expect(error.reason).toBe('response_too_large');
  });

  it('reports a refused connection as a network failure naming the target only', async () => {
    const error = await failureOf(client({ allowPrivateTargets: true }).request('http://127.0.0.1:1/', { headers: { authorization: 'Bearer sk_live_secret' } }));
    expect(error.reason).toBe('network');
    expect(error.message).toContain('http://127.0.0.1:1');
    expect(error.message).not.toContain('sk_live_secret');
  });
});
