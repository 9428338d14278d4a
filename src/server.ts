import { ConfigError, loadConfig, type Config, type ShutdownSettings } from './config/index.js';
import { bootstrapDefaultTenant, type Tenant } from './platform/tenants/service.js';
import { createRuntime, type Runtime } from './runtime.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }

  const runtime = await createRuntime(config);
  const { app } = runtime;

  const first = await bootstrapDefaultTenant({ db: runtime.database.db, clock: runtime.clock });
  if (first) printFirstKey(first.tenant, first.secret, config.publicBaseUrl);

  const shutdown = gracefulShutdown(runtime, config.shutdown);
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    const problem = listenProblem(error, config);
    if (!problem) throw error;
    await runtime.close(); // releases the embedded database's lock and Redis before exiting
    exitWithError(problem);
  }
  app.log.info(
    { database: runtime.database.backend, redis: Boolean(config.redisUrl), admin_api: Boolean(config.adminToken) },
    `serving on ${config.publicBaseUrl} (docs at ${config.publicBaseUrl}/docs)`,
  );
}

/**
 * On the first signal: not ready at once (/readyz 503, every reply closes its connection, no
 * new jobs), serving on for the grace period so a load balancer notices; then the listening
 * socket closes (new connections are refused), requests in flight are answered, the running
 * job finishes or is released, Redis and the pools close, and the process exits 0. Past the
 * shutdown timeout it logs and exits 1. A second signal skips what is left of the grace period.
 */
function gracefulShutdown(runtime: Runtime, settings: ShutdownSettings): (signal: string) => void {
  const { app } = runtime;
  let started: number | undefined;
  let endGrace = () => {};
  return (signal) => {
    if (started !== undefined) {
      app.log.info({ signal }, 'shutting down: second signal, skipping the rest of the grace period');
      endGrace();
      return;
    }
    started = Date.now();
    setTimeout(() => {
      app.log.error({ timeout_ms: settings.timeoutMs }, 'shutdown did not finish in time: exiting with requests or jobs still open');
      process.exit(1);
    }, settings.timeoutMs).unref();
    runtime.beginShutdown();
    app.log.info({ signal, grace_ms: settings.graceMs }, 'shutting down: not ready, serving until the grace period ends');
    const grace = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, settings.graceMs);
      endGrace = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    void grace
      .then(async () => {
        app.log.info('shutting down: refusing new connections, finishing in-flight requests');
        const left = settings.timeoutMs - (Date.now() - started!);
        // Leave a second for closing Redis and the pools after the job in hand.
        await runtime.close({ releaseJobsAfterMs: Math.max(0, left - 1_000) });
        process.exit(0);
      })
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
}

/** What an operator can do about a listen failure, in one line; undefined for anything unforeseen. */
function listenProblem(error: unknown, config: Config): string | undefined {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'EADDRINUSE':
      return `port ${config.port} is already in use (on ${config.host}); set PORT to another port`;
    case 'EACCES':
      return `no permission to listen on port ${config.port} (ports below 1024 need privileges); set PORT to another port`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${config.host}: no such address on this machine; set HOST to one of its addresses (or 0.0.0.0)`;
    default:
      return undefined;
  }
}

/** Start-up failures end in one line on stderr and exit status 1, never a stack trace. */
function exitWithError(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

/** Printed once, on the first start with an empty database; never logged, never shown again. */
function printFirstKey(tenant: Tenant, secret: string, baseUrl: string): void {
  process.stdout.write(
    [
      '',
      `First start: created tenant "${tenant.name}" with a test API key (scope *). It is shown only this once:`,
      '',
      `  ${secret}`,
      '',
      `Tenant: ${tenant.name} (id ${tenant.id})`,
      `Lost the key? Find the tenant with "npm run admin -- list-tenants" and make a new key with`,
      `"npm run admin -- create-key --tenant ${tenant.id} --mode test --scopes '*'" (see README, "Tenants and keys").`,
      '',
      'Try it:',
      `  curl -H "Authorization: Bearer ${secret}" ${baseUrl}/api/v1/services/crm/contacts`,
      '',
      '',
    ].join('\n'),
  );
}

// A database or Redis that cannot be reached (UnreachableError), an embedded database held by
// another process, a failed migration: each error's message already says what and where.
main().catch((error: unknown) => exitWithError(error instanceof Error ? error.message : String(error)));
