import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/index.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { JobRunner } from '../platform/jobs/runner.js';
import type { OutboundHttp } from '../platform/outbound/http.js';
import type { ServiceId } from '../platform/auth/scopes.js';
import type { ServiceRegistry } from './registry.js';

/** What the platform hands every service when it is created. */
export interface ServiceDeps {
  db: Db;
  clock: Clock;
  jobs: JobRunner;
  publicBaseUrl: string;
  /** 32-byte key for encrypting secrets at rest (AES-256-GCM). */
  secretsKey: Buffer;
  /** The one way to call other servers: timeouts, private-address refusal, redirects. */
  outbound: OutboundHttp;
  /** The whole validated configuration, for the few services with settings of their own. */
  config: Config;
  /** Other services' public interfaces: the only way one service reaches another. */
  services: ServiceRegistry;
}

/** One service: its id (its URL segment), its migrations, how to build it and its routes. */
export interface ServiceModule<Api> {
  id: ServiceId;
  migrations: URL;
  create(deps: ServiceDeps): Api;
  /** API routes, mounted under /api/v1/services/<id>; each declares its scope. */
  routes(api: Api): (app: FastifyInstance) => Promise<void>;
  /** Pages for people (such as a hosted checkout page), mounted at the root, outside the API. */
  pages?(api: Api): (app: FastifyInstance) => Promise<void>;
}
