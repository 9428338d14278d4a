import { ConfigError, loadConfig } from './config/index.js';
import { bootstrapDefaultTenant } from './platform/tenants/service.js';
import { createRuntime } from './runtime.js';

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
  if (first) printFirstKey(first.secret, config.publicBaseUrl);

  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    try {
      await runtime.close();
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  app.log.info(
    { database: runtime.database.backend, redis: Boolean(config.redisUrl), admin_api: Boolean(config.adminToken) },
    `serving on ${config.publicBaseUrl} (docs at ${config.publicBaseUrl}/docs)`,
  );
}

/** Printed once, on the first start with an empty database; never logged, never shown again. */
function printFirstKey(secret: string, baseUrl: string): void {
  process.stdout.write(
    [
      '',
      'First start: created tenant "default" with a test API key (scope *). It is shown only this once:',
      '',
      `  ${secret}`,
      '',
      'Try it:',
      `  curl -H "Authorization: Bearer ${secret}" ${baseUrl}/api/v1/services/crm/contacts`,
      '',
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
