import type { AuthenticatedKey } from '../auth/key-cache.js';
import type { IdempotentRequest } from '../idempotency/hooks.js';
import type { BodyPolicy } from './input-guard.js';

/** Per-route settings the platform reads from `config` when a route is registered or called. */
export interface PlatformRouteConfig {
  /** The scope a key needs; every route under /api/v1/services must name one. */
  scope?: string;
  /** Honour `Idempotency-Key` (on by default for POST and PATCH under /api/v1/services). */
  idempotent?: boolean;
  /** Marks the route as scheduled for removal: adds Deprecation and Sunset headers. */
  deprecated?: { since: string; sunset: string };
  /** Operator routes under /admin/v1 authenticate with ADMIN_TOKEN instead of an API key. */
  admin?: boolean;
  /** Set by the platform from the body schema: whether the route takes no body, an optional one or a required one. */
  bodyPolicy?: BodyPolicy;
  /**
   * The reply is one representation: a strong ETag and If-None-Match (304). Set by the platform on
   * every GET of one resource under /api/v1/services (a path ending in a parameter).
   */
  etag?: boolean;
  /** Set by the platform on every PATCH of one resource: honours If-Match (412 precondition_failed). */
  ifMatch?: boolean;
  /**
   * The route takes no API key: its credential is a one-time token in its URL (the social upload
   * PUT). It is documented with `security: []`, gets no rate limit, scope or idempotency, and reads
   * its body itself (a raw stream, not JSON).
   */
  credentialInUrl?: true;
  /**
   * What an Idempotency-Key replay may show of the first reply: the stored copy of a 2xx reply is
   * passed through this first (a secret shown once is stored, and replayed, as null).
   */
  redactStoredReply?: (body: Buffer) => Buffer;
  /** Read by @fastify/cors: the platform sets false on every route outside /api/, which never gets CORS headers. */
  cors?: false;
}

declare module 'fastify' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: Fastify's route config gains the platform's fields
  interface FastifyContextConfig extends PlatformRouteConfig {}

  interface FastifyInstance {
    /** Every route the app serves (HEAD and OPTIONS left out): what the OpenAPI document must describe. */
    routeTable(): ReadonlyArray<{ method: string; url: string }>;
  }

  interface FastifyRequest {
    /** Set once the API key is authenticated. */
    auth: AuthenticatedKey | undefined;
    /** Set while this request acts under an Idempotency-Key, in its transaction. */
    idempotency: IdempotentRequest | undefined;
    /** Read once per request from the injected clock. */
    startedAt: Date;
  }
}
