import type { FastifyInstance, FastifyReply, onRequestHookHandler, RouteOptions } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { createAdminTokenCheck } from './auth/admin-token.js';
import { authenticate, authorize } from './auth/authenticate.js';
import type { KeyCache } from './auth/key-cache.js';
import { installErrorHandling } from './errors/handler.js';
import { AppError } from './errors/app-error.js';
import type { FaultInjector } from './fault-injection.js';
import { RouteIndex } from './http/route-index.js';
import { ErrorResponse, ErrorRef } from './http/schemas.js';
import { bodyPolicyOf, createInputGuard } from './http/input-guard.js';
import { installJsonBodies, readUntypedBodyAsJson } from './http/json-body.js';
import { installValidation } from './http/validation.js';
import { createIdempotencyHooks } from './idempotency/hooks.js';
import { createRateLimiter } from './rate-limit/enforce.js';
import type { RateLimitStore } from './rate-limit/store.js';
import type { PlatformRouteConfig } from './http/fastify-types.js';

export const PUBLIC_API_PREFIX = '/api/v1/services/';
export const ADMIN_API_PREFIX = '/admin/v1/';

export interface PlatformDeps {
  db: Db;
  clock: Clock;
  keyCache: KeyCache;
  rateLimitStore: RateLimitStore | undefined;
  adminToken: string | undefined;
  /** Crash points for crash tests; a no-op in every normal start. */
  injectFault: FaultInjector;
}

/**
 * Installs the shared v1 conventions on the root instance, before any route exists:
 * validation, the JSON body parser and input guard (body shape, control characters,
 * prototype keys), the error shape, request ids, API-key auth, scopes, rate limits,
 * idempotency, deprecation headers, OpenAPI annotations and one log line per request.
 */
export function installPlatform(app: FastifyInstance, deps: PlatformDeps): void {
  const routeIndex = new RouteIndex();
  app.decorate('routeTable', () => routeIndex.list());
  installValidation(app);
  installJsonBodies(app);
  installErrorHandling(app, routeIndex);
  app.addSchema(ErrorResponse);

  app.decorateRequest('auth', undefined);
  app.decorateRequest('idempotency', undefined);
  app.decorateRequest('startedAt', undefined as unknown as Date);

  const enforceRateLimit = createRateLimiter(deps.rateLimitStore, app.log);
  const checkAdminToken = deps.adminToken ? createAdminTokenCheck(deps.adminToken) : undefined;
  const idempotency = createIdempotencyHooks(deps.db, deps.injectFault);

  /** The platform's checks for one public route, resolved once when the route is registered. */
  const publicRouteGuard = (scope: string, deprecated: PlatformRouteConfig['deprecated']): onRequestHookHandler =>
    async function guardPublicRoute(request, reply) {
      const key = await authenticate(request, deps.keyCache);
      request.auth = key;
      await enforceRateLimit(key, reply, request.startedAt.getTime());
      authorize(key, scope);
      if (deprecated) setDeprecationHeaders(reply, deprecated);
    };

  const adminRouteGuard: onRequestHookHandler = async function guardAdminRoute(request) {
    if (!checkAdminToken) throw new AppError('not_found', 'The operator API is disabled.');
    checkAdminToken(request);
  };

  app.addHook('onRoute', (route) => {
    routeIndex.add(route.method, route.url);
    const config = annotateRoute(route);
    const isApiRoute = config.scope !== undefined || config.admin === true;
    prependHook(route, 'preValidation', createInputGuard({ body: config.bodyPolicy, refuseQuery: isApiRoute && route.schema?.querystring === undefined }));
    if (config.bodyPolicy === 'none' || config.bodyPolicy === 'optional') prependHook(route, 'preParsing', readUntypedBodyAsJson);
    if (config.scope !== undefined) {
      prependHook(route, 'onRequest', publicRouteGuard(config.scope, config.deprecated));
      if (config.idempotent) {
        prependHook(route, 'preHandler', idempotency.takeKey);
        prependHook(route, 'onSend', idempotency.recordReply);
      }
    } else if (config.admin) {
      prependHook(route, 'onRequest', adminRouteGuard);
    }
  });

  // Runs for every request, matched or not, so 404s carry a request id too.
  app.addHook('onRequest', (request, reply, done) => {
    request.startedAt = deps.clock.now();
    reply.header('Service-Request-Id', request.id);
    done();
  });

  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        tenant_id: request.auth?.tenantId,
        mode: request.auth?.mode,
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
    done();
  });
}

/**
 * Public API routes must name their scope; the platform adds what every such route
 * shares to its schema: the security requirement, the error responses and the
 * deprecation flag, so the OpenAPI document tells the truth without repetition.
 */
function annotateRoute(route: RouteOptions): PlatformRouteConfig {
  const config = (route.config ?? {}) as PlatformRouteConfig;
  const schema = (route.schema ??= {}) as Record<string, unknown> & { response?: Record<string, unknown> };
  const methods = [route.method].flat();

  if (route.url.startsWith(PUBLIC_API_PREFIX)) {
    if (!config.scope) throw new Error(`Route ${methods.join(',')} ${route.url} must declare config.scope.`);
    if (!schema.response) throw new Error(`Route ${methods.join(',')} ${route.url} must declare its response schema.`);
    const mutates = methods.some((method) => method === 'POST' || method === 'PATCH' || method === 'DELETE');
    const idempotent = config.idempotent ?? mutates;
    route.config = { ...config, idempotent, bodyPolicy: bodyPolicyOf(methods, schema.body) };
    if (idempotent) schema.headers ??= IDEMPOTENCY_HEADER;
    schema.security = [{ apiKey: [config.scope] }];
    const conflicts = platformConflicts(idempotent, schema.body);
    if (conflicts) schema.response[409] = withPlatformConflicts(schema.response[409], conflicts);
    addErrorResponses(schema, {
      400: 'Invalid input: validation_failed, invalid_json.',
      401: 'Missing, malformed, unknown or revoked API key: unauthorized.',
      403: 'The key lacks the scope: insufficient_scope.',
      404: 'Unknown id, or a row of another tenant or mode: not_found.',
      429: 'Over the per-key rate limit: rate_limited (see Retry-After).',
      ...(methods.includes('POST') || methods.includes('PATCH') || methods.includes('PUT')
        ? { 413: 'Body too large: payload_too_large.', 415: 'Body is not JSON: unsupported_media_type.' }
        : {}),
      ...SERVER_ERRORS,
    });
    if (config.deprecated) schema.deprecated = true;
  } else if (route.url.startsWith(ADMIN_API_PREFIX)) {
    route.config = { ...config, admin: true, bodyPolicy: bodyPolicyOf(methods, schema.body) };
    schema.security = [{ adminToken: [] }];
    addErrorResponses(schema, { 400: 'Invalid input.', 401: 'Missing or wrong ADMIN_TOKEN.', 404: 'Unknown id.', ...SERVER_ERRORS });
  }
  return (route.config ?? {}) as PlatformRouteConfig;
}

/** The conflicts the platform itself raises on a route: idempotency keys, and stale `expected_updated_at`. */
function platformConflicts(idempotent: boolean, body: unknown): Array<[code: string, why: string]> | undefined {
  const properties = (body as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  const conflicts: Array<[string, string]> = [
    ...('expected_updated_at' in properties ? [['stale_update', 'expected_updated_at is not the current version'] as [string, string]] : []),
    ...(idempotent
      ? [
          ['idempotency_key_conflict', 'the Idempotency-Key was used with another request'] as [string, string],
          ['idempotency_key_in_use', 'the first request with the Idempotency-Key is still running'] as [string, string],
        ]
      : []),
  ];
  return conflicts.length > 0 ? conflicts : undefined;
}

/** The route's own 409 (the rules of its resource), with the platform's conflicts it does not name yet. */
function withPlatformConflicts(declared: unknown, conflicts: Array<[string, string]>): unknown {
  const own = (declared as { description?: string } | undefined)?.description;
  const added = conflicts.filter(([code]) => !own?.includes(code)).map(([code, why]) => `${code} (${why})`);
  if (!own) return { ...ErrorRef, description: `Conflict: ${added.join('; ')}.` };
  return { ...ErrorRef, description: added.length > 0 ? `${own.replace(/\.$/, '')}; or ${added.join('; ')}.` : own };
}

/** What any operation may answer when the fault is on our side. */
const SERVER_ERRORS = {
  500: 'Something failed on our side: internal_error (quote the Service-Request-Id).',
  503: 'The database is busy or unreachable, or the server is shutting down: service_unavailable; retry after Retry-After.',
};

type HookName = 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler' | 'onSend';

/** Puts the platform's hook before any hook the route declares itself. */
function prependHook(route: RouteOptions, name: HookName, hook: unknown): void {
  const existing = route[name] as unknown;
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
  (route as unknown as Record<HookName, unknown[]>)[name] = [hook, ...list];
}

/** Documents the header; its value is checked by the idempotency hook, which names it in errors. */
const IDEMPOTENCY_HEADER = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description: 'Makes the request safe to retry: the same key with the same request within 24 hours replays the first reply (1-255 visible characters; a UUID is ideal).',
      examples: ['5f0c2a9e-8d1b-4c1e-9a7f-3b2d6e4f8a01'],
    }),
  ),
});

function addErrorResponses(schema: { response?: Record<string, unknown> }, errors: Record<number, string | undefined>): void {
  schema.response ??= {};
  for (const [status, description] of Object.entries(errors)) {
    if (description === undefined) continue;
    schema.response[status] ??= { ...ErrorRef, description };
  }
}

function setDeprecationHeaders(reply: FastifyReply, deprecated: { since: string; sunset: string }): void {
  // RFC 9745: a Structured Field Date (@ Unix seconds); RFC 8594: an HTTP-date.
  reply.header('Deprecation', `@${Math.floor(Date.parse(deprecated.since) / 1000)}`);
  reply.header('Sunset', new Date(deprecated.sunset).toUTCString());
}
