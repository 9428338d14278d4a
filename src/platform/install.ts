import type { FastifyInstance, FastifyReply, onRequestAsyncHookHandler, RouteOptions } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { CorsOrigins } from '../config/index.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { createAdminTokenCheck } from './auth/admin-token.js';
import { authenticate, authorize } from './auth/authenticate.js';
import type { KeyCache } from './auth/key-cache.js';
import { installErrorHandling } from './errors/handler.js';
import { AppError } from './errors/app-error.js';
import type { FaultInjector } from './fault-injection.js';
import { installCompression } from './http/compression.js';
import { createIfMatchCheck, isInternalRead, tagRepresentation } from './http/conditional.js';
import { CORS_PATH_PREFIX, installCors } from './http/cors.js';
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
  /** CORS_ORIGINS; unset: no CORS headers. */
  corsOrigins: CorsOrigins | undefined;
  /** COMPRESSION: gzip and brotli replies over 1 KB. */
  compression: boolean;
  /** Seals the replies the idempotency store keeps. */
  secretsKey: Buffer;
}

/**
 * Installs the shared v1 conventions on the root instance, before any route exists:
 * validation, the JSON body parser and input guard (body shape, control characters,
 * prototype keys), the error shape, request ids, API-key auth, scopes, rate limits,
 * idempotency, deprecation headers, conditional requests (ETag, If-None-Match, If-Match),
 * CORS, compression, OpenAPI annotations and one log line per request.
 */
export async function installPlatform(app: FastifyInstance, deps: PlatformDeps): Promise<void> {
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
  const idempotency = createIdempotencyHooks(deps.db, deps.injectFault, deps.secretsKey);

  /** The platform's checks for one public route, resolved once when the route is registered. */
  const publicRouteGuard = (scope: string, deprecated: PlatformRouteConfig['deprecated']): onRequestAsyncHookHandler =>
    async function guardPublicRoute(request, reply) {
      const key = await authenticate(request, deps.keyCache);
      request.auth = key;
      // The read behind a PATCH's If-Match is part of that request, already counted and authorised.
      if (isInternalRead(request)) return;
      await enforceRateLimit(key, reply, request.startedAt.getTime());
      authorize(key, scope);
      if (deprecated) setDeprecationHeaders(reply, deprecated);
    };

  const adminRouteGuard: onRequestAsyncHookHandler = async function guardAdminRoute(request) {
    if (!checkAdminToken) throw new AppError('not_found', 'The operator API is disabled.');
    checkAdminToken(request);
  };

  app.addHook('onRoute', (route) => {
    routeIndex.add(route.method, route.url);
    const config = annotateRoute(route);
    const isApiRoute = config.scope !== undefined || config.admin === true;
    prependHook(route, 'preValidation', createInputGuard({ body: config.bodyPolicy, refuseQuery: isApiRoute && route.schema?.querystring === undefined }));
    if (config.bodyPolicy === 'none' || config.bodyPolicy === 'optional') prependHook(route, 'preParsing', readUntypedBodyAsJson);
    if (config.etag) prependHook(route, 'onSend', tagRepresentation);
    if (config.scope !== undefined) {
      prependHook(route, 'onRequest', publicRouteGuard(config.scope, config.deprecated));
      if (config.ifMatch) prependHook(route, 'preHandler', createIfMatchCheck(app, { pinsUpdatedAt: takesExpectedUpdatedAt(route) }));
      // Before the If-Match check: a retry replays the first reply instead of comparing again.
      if (config.idempotent) {
        prependHook(route, 'preHandler', idempotency.takeKey);
        prependHook(route, 'onSend', idempotency.recordReply);
      }
    } else if (config.admin) {
      prependHook(route, 'onRequest', adminRouteGuard);
    }
  });

  // Both act on the routes registered after them: every route, as the platform is installed first.
  if (deps.corsOrigins) await installCors(app, deps.corsOrigins, routeIndex);
  if (deps.compression) await installCompression(app);

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
  // Only /api/* ever gets CORS headers (the OPTIONS route @fastify/cors adds answers its preflights).
  const outsideCors = !route.url.startsWith(CORS_PATH_PREFIX) && route.url !== '*';
  const config = { ...route.config, ...(outsideCors ? { cors: false as const } : {}) };
  route.config = config;
  const schema = (route.schema ??= {}) as Record<string, unknown> & { response?: Record<string, unknown> };
  const methods = [route.method].flat();

  if (route.url.startsWith(PUBLIC_API_PREFIX) && config.credentialInUrl) {
    // No API key: the one-time token in the URL is the credential (hosted pages aside, the one public write).
    route.config = { ...config, idempotent: false, etag: false, ifMatch: false };
    schema.security = [];
    addErrorResponses(schema, { 404: 'Unknown, wrong or malformed token in the URL: not_found.', ...SERVER_ERRORS });
  } else if (route.url.startsWith(PUBLIC_API_PREFIX)) {
    if (!config.scope) throw new Error(`Route ${methods.join(',')} ${route.url} must declare config.scope.`);
    if (!schema.response) throw new Error(`Route ${methods.join(',')} ${route.url} must declare its response schema.`);
    const mutates = methods.some((method) => method === 'POST' || method === 'PATCH' || method === 'DELETE');
    const idempotent = config.idempotent ?? mutates;
    const oneResource = namesOneResource(route.url);
    // HEAD: the route Fastify derives from each GET is registered (and annotated) on its own.
    const etag = config.etag ?? (oneResource && (methods.includes('GET') || methods.includes('HEAD')));
    const ifMatch = config.ifMatch ?? (oneResource && methods.includes('PATCH'));
    route.config = { ...config, idempotent, etag, ifMatch, bodyPolicy: bodyPolicyOf(methods, schema.body) };
    if (idempotent) schema.headers ??= IDEMPOTENCY_HEADER;
    if (etag) documentEntityTag(schema);
    if (ifMatch) documentIfMatch(schema);
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
  } else if (config.etag) {
    documentEntityTag(schema);
  } else if (route.url.startsWith(ADMIN_API_PREFIX)) {
    route.config = { ...config, admin: true, bodyPolicy: bodyPolicyOf(methods, schema.body) };
    schema.security = [{ adminToken: [] }];
    addErrorResponses(schema, { 400: 'Invalid input.', 401: 'Missing or wrong ADMIN_TOKEN.', 404: 'Unknown id.', ...SERVER_ERRORS });
  }
  return route.config ?? {};
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
  const list: unknown[] = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
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

/** A path ending in a parameter (`/contacts/:id`, `/forms/by-slug/:slug`) names one resource. */
function namesOneResource(url: string): boolean {
  return url.split('/').pop()?.startsWith(':') ?? false;
}

function takesExpectedUpdatedAt(route: RouteOptions): boolean {
  const body = route.schema?.body as { properties?: Record<string, unknown> } | undefined;
  return body?.properties?.expected_updated_at !== undefined;
}

/** ETag on the 200 reply, If-None-Match on the request, and the 304 it may get. */
function documentEntityTag(schema: Record<string, unknown> & { response?: Record<string, unknown> }): void {
  addHeaderParameters(schema, {
    'if-none-match': Type.Optional(
      Type.String({
        maxLength: 1024,
        description: 'The ETag of a copy you hold: if the resource still has it, the reply is 304 without a body.',
        examples: ['"3q2-7wEjB0mJ1xY0aQd2xB9Zp3E"'],
      }),
    ),
  });
  schema.response ??= {};
  const ok = schema.response[200];
  if (ok && typeof ok === 'object') {
    schema.response[200] = {
      ...ok,
      headers: { ETag: { type: 'string', maxLength: 64, description: 'Strong entity tag of this representation; send it back in If-None-Match (or If-Match on PATCH).' } },
    };
  }
  schema.response[304] ??= { type: 'null', description: 'Not modified: If-None-Match matched the current ETag. No body; ETag and the usual headers are sent.' };
}

function documentIfMatch(schema: Record<string, unknown> & { response?: Record<string, unknown> }): void {
  addHeaderParameters(schema, {
    'if-match': Type.Optional(
      Type.String({
        maxLength: 1024,
        description:
          'The ETag you last read (from GET of this resource); if the resource changed since, the update is refused with 412 precondition_failed. `*` only requires that it exists. An alternative to expected_updated_at.',
        examples: ['"3q2-7wEjB0mJ1xY0aQd2xB9Zp3E"'],
      }),
    ),
  });
  addErrorResponses(schema, { 412: 'If-Match does not match the current ETag: precondition_failed.' });
}

/** Adds documented request headers to the route's header schema (values are checked by the platform's hooks). */
function addHeaderParameters(schema: Record<string, unknown>, properties: Record<string, TSchema>): void {
  const existing = (schema.headers as { properties?: Record<string, TSchema> } | undefined)?.properties ?? {};
  schema.headers = Type.Object({ ...existing, ...properties });
}

function setDeprecationHeaders(reply: FastifyReply, deprecated: { since: string; sunset: string }): void {
  // RFC 9745: a Structured Field Date (@ Unix seconds); RFC 8594: an HTTP-date.
  reply.header('Deprecation', `@${Math.floor(Date.parse(deprecated.since) / 1000)}`);
  reply.header('Sunset', new Date(deprecated.sunset).toUTCString());
}
