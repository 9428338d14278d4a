import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/database.js';
import { ManualClock } from '../src/lib/clock.js';
import { createLogger, createRuntime } from '../src/runtime.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';

/**
 * The OpenAPI document exactly as the server serves it, from an app on a throwaway embedded
 * database: for the client generator and the contract proxy, which need it before any
 * server runs.
 */
export async function servedOpenApiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({
    ADMIN_TOKEN: 'openapi-document-admin-token-01',
    LOG_LEVEL: 'silent',
    RUN_JOBS: 'false',
    SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
    DATABASE_URL: undefined,
    REDIS_URL: undefined,
  });
  const database = await openDatabase({ databaseUrl: undefined, dataDir: undefined, poolSize: 1, timeouts: config.database });
  const runtime = await createRuntime(config, { clock: new ManualClock(), database, startJobs: false, logger: createLogger('silent') });
  try {
    return (await runtime.app.inject({ method: 'GET', url: OPENAPI_PATH })).json();
  } finally {
    await runtime.close();
    await database.close();
  }
}
