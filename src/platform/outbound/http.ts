import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, request as undiciRequest } from 'undici';
import type { OutboundSettings } from '../../config/index.js';

/**
 * The one way the server calls other servers (payment providers, webhooks, crawlers):
 *
 * - a connect timeout and a total timeout (connect, redirects, headers and body together);
 * - targets that are not public unicast addresses (loopback, private, link-local,
 *   unique-local, carrier-grade NAT, multicast, unspecified, reserved...) are refused, both as
 *   IP literals and after DNS resolution, and the address a socket actually connected to is
 *   checked again, so neither a hostname resolving to 127.0.0.1 nor a redirect to an internal
 *   address gets through; `allowPrivateTargets` lifts this for development and tests;
 * - redirects are followed by hand, each hop checked, at most `maxRedirects`;
 * - replies are read into memory up to `maxResponseBytes`.
 */
export interface OutboundHttp {
  request(url: string | URL, init?: OutboundRequestInit): Promise<OutboundResponse>;
  /** Closes pooled connections (at shutdown). */
  close(): Promise<void>;
}

export interface OutboundRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** 0 answers a redirect as it is; default 5. */
  maxRedirects?: number;
  /** Default 10 MB; a longer reply fails with `response_too_large`. */
  maxResponseBytes?: number;
  /** Cancels the request early (the total timeout applies in any case). */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The URL that answered, after redirects. */
  url: string;
  body: Buffer;
  text(): string;
}

export type OutboundFailure = 'private_target' | 'invalid_url' | 'connect_timeout' | 'timeout' | 'too_many_redirects' | 'response_too_large' | 'network';

/** Every failure of an outbound request; its message names the target but never the request's headers or body. */
export class OutboundRequestError extends Error {
  override readonly name = 'OutboundRequestError';

  constructor(
    readonly reason: OutboundFailure,
    message: string,
  ) {
    super(message);
  }
}

const DEFAULT_MAX_REDIRECTS = 5;
const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Whether `address` (an IP literal, v4 or v6, v4-mapped included) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

export interface OutboundHttpOptions {
  /** Which resolved addresses may be connected to; tests narrow it to tell two loopback addresses apart. */
  isAllowedAddress?: (address: string) => boolean;
}

export function createOutboundHttp(settings: OutboundSettings, { isAllowedAddress = isPublicAddress }: OutboundHttpOptions = {}): OutboundHttp {
  const refusal = (address: string | undefined, hostname: string) => refusePrivate(address, hostname, isAllowedAddress);
  const guard = settings.allowPrivateTargets ? undefined : refusal;
  const publicOnlyLookup = onlyAllowedLookup(isAllowedAddress);
  const connect = buildConnector({ timeout: settings.connectTimeoutMs, ...(guard ? { lookup: publicOnlyLookup } : {}) });
  const agent = new Agent({
    connect: guard
      ? (options, callback) =>
          connect(options, (error, socket) => {
            if (error) return callback(error, null);
            const refused = guard(socket.remoteAddress, options.hostname);
            if (!refused) return callback(null, socket);
            socket.destroy();
            callback(refused, null);
          })
      : connect,
    headersTimeout: settings.totalTimeoutMs,
    bodyTimeout: settings.totalTimeoutMs,
  });

  async function request(target: string | URL, init: OutboundRequestInit = {}): Promise<OutboundResponse> {
    const deadline = AbortSignal.timeout(settings.totalTimeoutMs);
    const signal = init.signal ? AbortSignal.any([deadline, init.signal]) : deadline;
    const maxRedirects = init.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    let url = parseTarget(target);
    let method = (init.method ?? 'GET').toUpperCase();
    let headers = { ...init.headers };
    let body = init.body;
    for (let hop = 0; ; hop += 1) {
      const literalRefusal = guard?.(unbracketed(url.hostname), url.hostname);
      if (literalRefusal) throw literalRefusal;
      let response;
      try {
        response = await undiciRequest(url, { dispatcher: agent, method: method as 'GET', headers, body, signal });
      } catch (error) {
        throw failure(error, url, deadline);
      }
      const location = response.headers.location;
      if (REDIRECT_STATUSES.has(response.statusCode) && typeof location === 'string' && maxRedirects > 0) {
        await response.body.dump().catch(() => {});
        if (hop >= maxRedirects) throw new OutboundRequestError('too_many_redirects', `More than ${maxRedirects} redirects from ${parseTarget(target).origin}.`);
        const next = parseTarget(new URL(location, url));
        if (next.origin !== url.origin) headers = withoutCredentials(headers);
        if (response.statusCode === 303 || ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')) {
          method = method === 'HEAD' ? 'HEAD' : 'GET';
          body = undefined;
          headers = withoutBodyHeaders(headers);
        }
        url = next;
        continue;
      }
      const limit = init.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of response.body) {
          size += (chunk as Buffer).length;
          if (size > limit) {
            response.body.destroy();
            throw new OutboundRequestError('response_too_large', `The reply from ${url.origin} is larger than ${limit} bytes.`);
          }
          chunks.push(chunk as Buffer);
        }
      } catch (error) {
        throw failure(error, url, deadline);
      }
      const bytes = Buffer.concat(chunks);
      return { status: response.statusCode, headers: response.headers, url: url.toString(), body: bytes, text: () => bytes.toString('utf8') };
    }
  }

  return {
    request,
    async close() {
      await agent.close();
    },
  };
}

function refusePrivate(address: string | undefined, hostname: string, isAllowedAddress: (address: string) => boolean): OutboundRequestError | undefined {
  if (address === undefined || !ipaddr.isValid(address)) return undefined; // a hostname: checked after DNS
  if (isAllowedAddress(address)) return undefined;
  const where = unbracketed(hostname) === address ? address : `${hostname} (${address})`;
  const range = ipaddr.process(address).range();
  return new OutboundRequestError('private_target', `Refused to connect to ${where}: not a public address${range === 'unicast' ? '' : ` (${range})`}.`);
}

/** DNS resolution that fails when any address of the name is not allowed (no mixing a public and an internal record). */
function onlyAllowedLookup(isAllowedAddress: (address: string) => boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.find((entry) => !isAllowedAddress(entry.address));
      if (refused) return callback(refusePrivate(refused.address, hostname, isAllowedAddress)!, '', 0);
      // node asks for every address when it tries them in turn (autoSelectFamily), else for one.
      if (options.all) return (callback as unknown as (error: null, all: dns.LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

function parseTarget(target: string | URL): URL {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new OutboundRequestError('invalid_url', 'The target is not an absolute URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRequestError('invalid_url', `Only http and https targets are allowed, not ${url.protocol}`);
  if (url.username || url.password) throw new OutboundRequestError('invalid_url', 'Credentials in the URL are not allowed.');
  return url;
}

function failure(error: unknown, url: URL, deadline: AbortSignal): OutboundRequestError {
  if (error instanceof OutboundRequestError) return error;
  const cause = findOutboundCause(error);
  if (cause) return cause;
  const code = (error as { code?: unknown }).code;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return new OutboundRequestError('connect_timeout', `Connecting to ${url.origin} timed out.`);
  if (deadline.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new OutboundRequestError('timeout', `The request to ${url.origin} did not finish in time.`);
  }
  return new OutboundRequestError('network', `The request to ${url.origin} failed: ${typeof code === 'string' ? code : (error as Error).name}.`);
}

/** Our own refusal may come back wrapped by undici (as a cause). */
function findOutboundCause(error: unknown): OutboundRequestError | undefined {
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth += 1) {
    if (current instanceof OutboundRequestError) return current;
  }
  return undefined;
}

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !['authorization', 'cookie', 'proxy-authorization'].includes(name.toLowerCase())));
}

function withoutBodyHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !['content-type', 'content-length', 'content-encoding'].includes(name.toLowerCase())));
}

function unbracketed(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}
