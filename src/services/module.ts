import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/index.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { EventLog, EventTypeDeclaration } from '../platform/events/event-log.js';
import type { JobRunner } from '../platform/jobs/runner.js';
import type { OutboundHttp } from '../platform/outbound/http.js';
import type { ServiceId } from '../platform/auth/scopes.js';
import type { ServiceRegistry } from './registry.js';

/** Where a service's settings come from: the validated configuration and the platform's secrets key. */
export interface SettingsSource {
  config: Config;
  /** 32-byte key for encrypting secrets at rest (AES-256-GCM). */
  secretsKey: Buffer;
}

/** What the platform hands every service when it is created. */
export interface ServiceDeps<Settings = undefined> {
  db: Db;
  clock: Clock;
  jobs: JobRunner;
  /** The event log: record an event with the transaction of the change it reports. */
  events: EventLog;
  /** The one way to call other servers: timeouts, private-address refusal, redirects. */
  outbound: OutboundHttp;
  /** Other services' public interfaces: the only way one service reaches another. */
  services: ServiceRegistry;
  /** This service's own slice of the configuration, as its module picked it; nothing else. */
  settings: Settings;
}

/** One service: its id (its URL segment), its migrations, how to build it and its routes. */
export interface ServiceModule<Api, Settings = undefined> {
  id: ServiceId;
  migrations: URL;
  /** The event types this service records (the catalogue served at GET /webhooks/event-types). */
  events?: readonly EventTypeDeclaration[];
  /** Picks the settings this service reads; services without settings leave it out. */
  settings?(source: SettingsSource): Settings;
  create(deps: ServiceDeps<Settings>): Api;
  /** API routes, mounted under /api/v1/services/<id>; each declares its scope. */
  routes(api: Api): (app: FastifyInstance) => Promise<void>;
  /** Pages for people (such as a hosted checkout page), mounted at the root, outside the API. */
  pages?(api: Api): (app: FastifyInstance) => Promise<void>;
}
