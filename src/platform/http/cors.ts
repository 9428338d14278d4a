import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CorsOrigins } from '../../config/index.js';
import type { RouteMethodIndex } from '../errors/handler.js';

/** Where browsers of other origins may call: the public API and its OpenAPI document. */
export const CORS_PATH_PREFIX = '/api/';

/** What a browser may send: the API key, JSON, idempotency and request ids, conditional requests. */
const ALLOWED_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id', 'If-Match', 'If-None-Match'];

/** What a script may read of a reply besides the CORS-safelisted headers. */
const EXPOSED_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Service-Request-Id', 'Deprecation', 'Sunset', 'ETag'];

/** Chromium caps a preflight cache at two hours; longer values only matter to Firefox. */
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

const NO_CORS: FastifyCorsOptions = { origin: false };

/**
 * CORS for /api/* only, with @fastify/cors deciding per request through a delegator:
 *
 * - a request of an allowed origin gets `Access-Control-Allow-Origin` (the origin echoed, or `*`)
 *   and `Access-Control-Expose-Headers`, also on errors, so a script can read them;
 * - its preflight (OPTIONS with `Access-Control-Request-Method`) on a known path is answered 204
 *   before any authentication, with the methods of that path, the allowed request headers and
 *   `Access-Control-Max-Age`;
 * - everything else (another origin, no Origin, a plain OPTIONS, an unknown path, hosted pages,
 *   the operator API, /docs) gets no CORS header at all and falls through to the platform's
 *   answer: the refused preflight is the plain OPTIONS reply, 204 with `Allow`, which the
 *   browser treats as a refusal because `Access-Control-Allow-Origin` is missing.
 *
 * No credentials: keys travel in `Authorization`, never in cookies.
 */
export async function installCors(app: FastifyInstance, origins: CorsOrigins, routes: RouteMethodIndex): Promise<void> {
  const allowsEveryOrigin = origins === '*';
  const allowed = new Set(allowsEveryOrigin ? [] : origins);
  const actualRequest: FastifyCorsOptions = {
    origin: allowsEveryOrigin ? '*' : true,
    exposedHeaders: EXPOSED_HEADERS,
    preflight: false,
  };

  function optionsFor(request: FastifyRequest): FastifyCorsOptions {
    if (!request.url.startsWith(CORS_PATH_PREFIX)) return NO_CORS;
    const origin = request.headers.origin;
    if (origin === undefined || !(allowsEveryOrigin || allowed.has(origin))) return NO_CORS;
    if (request.method !== 'OPTIONS') return actualRequest;
    if (request.headers['access-control-request-method'] === undefined) return NO_CORS;
    const methods = routes.methodsFor(request.url);
    if (methods.length === 0) return NO_CORS;
    return {
      ...actualRequest,
      preflight: true,
      methods: methods.includes('GET') ? [...methods, 'HEAD'] : methods,
      allowedHeaders: ALLOWED_REQUEST_HEADERS,
      maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    };
  }

  await app.register(cors, {
    hideOptionsRoute: true,
    delegator: (request, callback) => callback(null, optionsFor(request)),
  });
}
