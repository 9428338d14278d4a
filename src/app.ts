import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from './config/index.js';
import type { Database } from './db/database.js';
import type { Clock } from './lib/clock.js';
import type { KeyCache } from './platform/auth/key-cache.js';
import { adminRoutes } from './platform/admin/routes.js';
import { faultInjector } from './platform/fault-injection.js';
import { httpServerOptions, watchConnections, type Connections } from './platform/http/connection-timeouts.js';
import type { Draining } from './platform/http/draining.js';
import { healthRoutes } from './platform/http/health.js';
import { installPlatform } from './platform/install.js';
import { sharedSerializerFactory } from './platform/http/serialization.js';
import { AppError } from './platform/errors/app-error.js';
import { sendError } from './platform/errors/handler.js';
import type { EventLog } from './platform/events/event-log.js';
import type { JobRunner } from './platform/jobs/runner.js';
import { installOpenApi } from './platform/openapi/index.js';
import type { OutboundHttp } from './platform/outbound/http.js';
import type { RateLimitStore } from './platform/rate-limit/store.js';
import { createTenantAdmin } from './platform/tenants/service.js';
import { affiliatesModule } from './services/affiliates/index.js';
import { appointmentsModule } from './services/appointments/index.js';
import { tasksModule } from './services/tasks/index.js';
import { blogsModule } from './services/blogs/index.js';
import { catalogModule } from './services/catalog/index.js';
import { crmModule } from './services/crm/index.js';
import { customerAuthModule } from './services/customer-auth/index.js';
import { formsModule } from './services/forms/index.js';
import { invoicingModule } from './services/invoicing/index.js';
import { outreachModule } from './services/outreach/index.js';
import { paymentsModule } from './services/payments/index.js';
import { socialModule } from './services/social/index.js';
import { seoModule } from './services/seo/index.js';
import { webhooksModule } from './services/webhooks/index.js';
import type { ServiceModule } from './services/module.js';
import { ServiceRegistry } from './services/registry.js';

/** Every service, in the order its migrations run. Adding a service is one line here. */
export const serviceModules: ServiceModule<unknown, unknown>[] = [
  crmModule,
  blogsModule,
  formsModule,
  invoicingModule,
  customerAuthModule,
  catalogModule,
  paymentsModule,
  webhooksModule,
  appointmentsModule,
  tasksModule,
  outreachModule,
  affiliatesModule,
  socialModule,
  seoModule,
];

export interface AppDeps {
  database: Database;
  clock: Clock;
  keyCache: KeyCache;
  rateLimitStore: RateLimitStore | undefined;
  jobs: JobRunner;
  events: EventLog;
  logger: FastifyBaseLogger;
  secretsKey: Buffer;
  outbound: OutboundHttp;
  /** Set when shutdown begins: /readyz turns 503. */
  draining: Draining;
}

const REQUEST_ID_PATTERN = /^[\w.:@-]{1,128}$/;

export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    schemaController: { compilersFactory: { buildSerializer: sharedSerializerFactory({ crossCheck: config.serializerCrossCheck }) } },
    // One line per request is written by the platform's onResponse hook instead.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    requestIdHeader: false,
    genReqId: (request) => {
      const sent = request.headers['x-request-id'];
      return typeof sent === 'string' && REQUEST_ID_PATTERN.test(sent) ? sent : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    // Path parameters (ids, slugs up to 120 characters) stay well below this; longer ones are 404.
    routerOptions: { maxParamLength: 500 },
    // A URL the router cannot even read (bad percent-encoding, an over-long parameter) names no resource.
    frameworkErrors: (_error, request, reply) => {
      reply.header('Service-Request-Id', request.id);
      sendError(reply, new AppError('not_found', 'No resource has this URL.'));
    },
    // Server timeouts: docs/operations.md, "Timeouts".
    http: httpServerOptions(config.http),
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    requestTimeout: config.http.requestTimeoutMs,
    // A request that reaches a closing server was sent before the client could know: answer it
    // (with Connection: close) rather than refuse work the client has already handed over.
    return503OnClosing: false,
  });

  const connections = watchConnections(app.server, config.http.idleTimeoutMs);
  closeConnectionsWhenClosing(app, connections, config.http.keepAliveTimeoutMs);
  await installPlatform(app, {
    db: deps.database.db,
    clock: deps.clock,
    keyCache: deps.keyCache,
    rateLimitStore: deps.rateLimitStore,
    adminToken: config.adminToken,
    injectFault: faultInjector(config.faultInjection),
    corsOrigins: config.corsOrigins,
    compression: config.compression,
    secretsKey: deps.secretsKey,
  });
  await installOpenApi(app, config.publicBaseUrl);

  await app.register(healthRoutes({ ping: () => deps.database.ping(), draining: deps.draining }));

  if (config.adminToken) {
    const admin = createTenantAdmin({ db: deps.database.db, clock: deps.clock });
    await app.register(adminRoutes({ admin, keyCache: deps.keyCache }), { prefix: '/admin/v1' });
  }

  const shared = { db: deps.database.db, clock: deps.clock, jobs: deps.jobs, events: deps.events, outbound: deps.outbound, services: new ServiceRegistry() };
  const settingsSource = { config, secretsKey: deps.secretsKey };
  for (const module of serviceModules) deps.events.declare(module.id, module.events ?? []);
  for (const module of serviceModules) {
    const api = module.create({ ...shared, settings: module.settings?.(settingsSource) });
    shared.services.provide(module.id, api);
    await app.register(module.routes(api), { prefix: `/api/v1/services/${module.id}` });
    if (module.pages) await app.register(module.pages(api));
  }

  return app;
}

/**
 * Once the server stops accepting connections (app.close(), after the shutdown grace period),
 * every reply tells the client to close its keep-alive connection, so its next request goes to
 * a new connection, which is refused cleanly, instead of into a socket about to close.
 *
 * Node's server.close() would also destroy every keep-alive connection idle at that instant,
 * and a client that has just sent its next request on one gets a reset for a request it cannot
 * know the fate of. So idle connections get a short last chance instead: one more request,
 * answered with Connection: close, or closed after a second of silence.
 *
 * Replies during the grace period keep their connections: a client told to reconnect then
 * would be connecting when the listening socket closes, and connections the kernel accepted
 * but node had not yet taken are reset, not refused.
 */
function closeConnectionsWhenClosing(app: FastifyInstance, connections: Connections, keepAliveTimeoutMs: number): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    app.server.closeIdleConnections = () => connections.closeIdleAfter(Math.min(keepAliveTimeoutMs, 1_000));
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  });
}
