import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { JobRunner } from '../platform/jobs/runner.js';
import type { ServiceId } from '../platform/auth/scopes.js';

/** What the platform hands every service when it is created. */
export interface ServiceDeps {
  db: Db;
  clock: Clock;
  jobs: JobRunner;
  publicBaseUrl: string;
  /** 32-byte key for encrypting secrets at rest (AES-256-GCM). */
  secretsKey: Buffer;
}

/** One service: its id (its URL segment), its migrations, how to build it and its routes. */
export interface ServiceModule<Api> {
  id: ServiceId;
  migrations: URL;
  create(deps: ServiceDeps): Api;
  routes(api: Api): (app: FastifyInstance) => Promise<void>;
}
