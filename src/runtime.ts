import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Redis } from 'ioredis';
import { buildApp, serviceModules } from './app.js';
import type { Config, LogLevel } from './config/index.js';
import { openDatabase, type Database } from './db/database.js';
import { migrate, platformMigrations } from './db/migrator.js';
import { type Clock, DAY_MS, HOUR_MS, addMilliseconds, systemClock } from './lib/clock.js';
import { KeyCache, watchRevocations } from './platform/auth/key-cache.js';
import { EventLog } from './platform/events/event-log.js';
import { Draining } from './platform/http/draining.js';
import { sweepExpired } from './platform/idempotency/store.js';
import { resolveSecretsKey } from './platform/secrets-key.js';
import { deleteFinishedJobs, JobRunner } from './platform/jobs/runner.js';
import { createOutboundHttp, type OutboundHttp } from './platform/outbound/http.js';
import { connectRedis } from './platform/rate-limit/redis.js';
import { RedisRateLimitStore, type RateLimitStore } from './platform/rate-limit/store.js';
import { findApiKeyByHash, findKeysRevokedSince } from './platform/tenants/repository.js';

export interface Runtime {
  app: FastifyInstance;
  database: Database;
  clock: Clock;
  jobs: JobRunner;
  events: EventLog;
  keyCache: KeyCache;
  outbound: OutboundHttp;
  draining: Draining;
  /**
   * The first step of a graceful shutdown: /readyz answers 503 from now on, every reply
   * closes its connection, and no new background job is claimed. The server keeps serving.
   */
  beginShutdown(): void;
  /**
   * Stops background work (the running job finishes, or its claim is released after
   * `releaseJobsAfterMs`), stops accepting connections, answers the requests in flight, then
   * closes Redis, outbound connections and the database, in that order.
   */
  close(options?: { releaseJobsAfterMs?: number }): Promise<void>;
}

export interface RuntimeOptions {
  clock?: Clock;
  /** Use this database instead of opening one from the config (tests share one per file). */
  database?: Database;
  logger?: FastifyBaseLogger;
  /** Poll for due jobs in the background (tests call `jobs.runDue()` instead). */
  startJobs?: boolean;
}

const PLATFORM_SWEEP = 'platform.sweep';
/** Finished job rows are kept this long for inspection, then deleted. */
const FINISHED_JOB_RETENTION_MS = 7 * DAY_MS;

/** Opens storage, applies migrations and assembles the app with its background work. */
export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const clock = options.clock ?? systemClock;
  const ownsDatabase = options.database === undefined;
  const database = options.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, timeouts: config.database }));
  let redis: Redis | undefined;
  try {
    await migrate(database, [platformMigrations, ...serviceModules.map((module) => ({ owner: module.id, directory: module.migrations }))]);
    redis = config.redisUrl ? await connectRedis(config.redisUrl) : undefined;
  } catch (error) {
    if (ownsDatabase) await database.close();
    throw error;
  }

  const db = database.db;
  const keyCache = new KeyCache({
    load: async (keyHash) => {
      const row = await findApiKeyByHash(db, keyHash);
      if (!row || row.revoked_at) return undefined;
      return { id: row.id, tenantId: row.tenant_id, mode: row.mode, scopes: row.scopes, rateLimitPerMinute: row.rate_limit_per_minute };
    },
  });

  const rateLimitStore: RateLimitStore | undefined = redis ? new RedisRateLimitStore(redis) : undefined;

  const logger = options.logger ?? createLogger(config.logLevel);
  const jobs = new JobRunner({ db, clock, log: logger });
  const events = new EventLog({ db, clock });
  const secretsKey = resolveSecretsKey({
    configured: config.secretsKey,
    backend: database.backend,
    dataDir: ownsDatabase ? config.dataDir : undefined,
    log: logger,
  });
  const outbound = createOutboundHttp(config.outbound);
  const draining = new Draining();
  const app = await buildApp(config, { database, clock, keyCache, rateLimitStore, jobs, events, logger, secretsKey, outbound, draining });

  const revocations = watchRevocations({
    cache: keyCache,
    findRevokedSince: (since) => findKeysRevokedSince(db, since),
    onError: (error) => app.log.warn({ err: error }, 'revocation watch failed'),
  });

  jobs.register(PLATFORM_SWEEP, async (_job, now) => {
    const idempotencyKeys = await sweepExpired(db, now);
    const finishedJobs = await deleteFinishedJobs(db, addMilliseconds(now, -FINISHED_JOB_RETENTION_MS));
    const oldEvents = await events.sweep(now);
    if (idempotencyKeys + finishedJobs + oldEvents > 0) app.log.info({ idempotency_keys: idempotencyKeys, finished_jobs: finishedJobs, events: oldEvents }, 'swept expired rows');
    return { rescheduleAt: addMilliseconds(now, HOUR_MS) };
  });
  await jobs.ensureRecurring(PLATFORM_SWEEP);
  if (options.startJobs ?? config.runJobs) jobs.start();

  let closed = false;
  const beginShutdown = () => {
    draining.start();
    void jobs.stop(); // no new claims; close() waits for the job in hand
  };
  return {
    app,
    database,
    clock,
    jobs,
    events,
    keyCache,
    outbound,
    draining,
    beginShutdown,
    async close({ releaseJobsAfterMs } = {}) {
      if (closed) return;
      closed = true;
      beginShutdown();
      revocations.stop();
      await Promise.all([jobs.stop({ releaseAfterMs: releaseJobsAfterMs }), app.close()]);
      await rateLimitStore?.close();
      await outbound.close();
      if (ownsDatabase) await database.close();
    },
  };
}

/**
 * One JSON line per event. Nothing logs request headers or bodies; the redaction is
 * a second fence in case something ever does.
 *
 * Lines go to stdout in batches: under load a write system call per line costs more than
 * the rest of the log line.
 */
export function createLogger(level: LogLevel): FastifyBaseLogger {
  return pino(
    {
      level,
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'secret', 'token', 'password', 'upload_token', 'upload_url', 'req.url'],
        censor: '[redacted]',
      },
    },
    logDestination(),
  );
}

/**
 * Stdout, buffered: lines leave in writes of about 4 KB, and at least once a second so a quiet
 * server's lines are not held back; pino writes what is left synchronously when the process exits.
 */
function logDestination() {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  // With a callback, flush reports a closed destination to it instead of throwing.
  setInterval(() => destination.flush(() => {}), 1000).unref();
  return destination;
}
