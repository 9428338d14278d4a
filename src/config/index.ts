import path from 'node:path';
import { FAULT_POINTS, type FaultPoint } from '../platform/fault-injection.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  /** Unset: embedded PGlite under dataDir. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** Where the social service keeps uploaded files (SOCIAL_FILES_DIR; default DATA_DIR/social-files). */
  socialFilesDir: string;
  /** An S3-compatible object store for uploaded files (S3_BUCKET and its S3_* settings); unset: local disk. */
  objectStore: S3Settings | undefined;
  redisUrl: string | undefined;
  /** Unset: the operator API under /admin/v1 is not mounted at all. */
  adminToken: string | undefined;
  logLevel: LogLevel;
  /** Base for absolute URLs in replies, without a trailing slash. */
  publicBaseUrl: string;
  /** Run background jobs in this process (several processes may all do so safely). */
  runJobs: boolean;
  /**
   * 32-byte key that encrypts secrets at rest (TOTP secrets). Required with DATABASE_URL;
   * on the embedded database it is generated once into DATA_DIR when unset.
   */
  secretsKey: Buffer | undefined;
  /** Stripe secret key for live-mode payments; unset: live checkout sessions are refused. */
  stripeSecretKey: string | undefined;
  /** Base URL of the Stripe API (a stripe-mock or a proxy in tests and staging). */
  stripeApiBase: string;
  /** Twilio credentials for live-mode outreach messages (TWILIO_*); unset: live messages fail. */
  twilio: TwilioSettings | undefined;
  /** Crash points for crash tests (FAULT_INJECTION); always empty unless NODE_ENV=test. */
  faultInjection: FaultPoint[];
  /** Origins allowed to call /api/* from a browser (CORS_ORIGINS); unset: no CORS headers at all. */
  corsOrigins: CorsOrigins | undefined;
  /** Compress replies over 1 KB with gzip or brotli (COMPRESSION); off behind a proxy that compresses. */
  compression: boolean;
  /** Write every reply both ways and fail on a difference (SERIALIZER_CROSS_CHECK; the test suite sets it). */
  serializerCrossCheck: boolean;
  /** AI-monitored SEO questions allowed per tenant and mode (SEO_AI_MONITOR_LIMIT, default 25). */
  seoAiMonitorLimit: number;
  http: HttpTimeouts;
  database: DatabaseTimeouts;
  outbound: OutboundSettings;
  shutdown: ShutdownSettings;
}

/** An S3-compatible object store, addressed path-style: `<endpoint>/<bucket>/<prefix><key>`. */
export interface S3Settings {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Prepended to every key; empty or ending in `/`. */
  prefix: string;
}

/** Twilio Messaging: account, auth token, and the sender (a number or a messaging service). */
export interface TwilioSettings {
  accountSid: string;
  authToken: string;
  /** E.164 sender number (TWILIO_FROM_NUMBER), or unset with a messaging service. */
  fromNumber: string | undefined;
  /** Messaging service sid (TWILIO_MESSAGING_SERVICE_SID), or unset with a sender number. */
  messagingServiceSid: string | undefined;
  /** Base URL of the Twilio API (TWILIO_API_BASE; a mock in staging). */
  apiBase: string;
}

/** Every origin (`*`), or a list of exact origins such as `https://app.example.com`. */
export type CorsOrigins = '*' | readonly string[];

/** How long the HTTP server waits on a client (docs/operations.md, "Timeouts"). */
export interface HttpTimeouts {
  /** The whole header section must arrive within this of the connection (or of the request's first byte). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this; 0: no limit. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** A connection on which the client sends or reads nothing for this long, while the server waits on it, is closed. */
  idleTimeoutMs: number;
}

export interface DatabaseTimeouts {
  /** PostgreSQL `statement_timeout` of the API's connections. */
  statementTimeoutMs: number;
  /** PostgreSQL `lock_timeout`. */
  lockTimeoutMs: number;
  /** PostgreSQL `idle_in_transaction_session_timeout`. */
  idleInTransactionTimeoutMs: number;
  /** How long a request waits for a pooled connection (or the embedded session) before 503. */
  connectionWaitMs: number;
  /** Embedded database: how long one holder may keep the single session before it is rolled back. */
  embeddedHoldTimeoutMs: number;
}

/** Every outbound HTTP request (src/platform/outbound/http.ts). */
export interface OutboundSettings {
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  /** Allow loopback, private, link-local and other non-public targets (development and tests only). */
  allowPrivateTargets: boolean;
}

export interface ShutdownSettings {
  /** After SIGTERM: not ready at once, but keep serving this long so a load balancer notices. */
  graceMs: number;
  /** From the signal to exit; past it the process logs what is left and exits 1. */
  timeoutMs: number;
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const MIN_ADMIN_TOKEN_LENGTH = 16;

/**
 * Reads and validates configuration from an environment object. Every problem is
 * collected so the operator sees all of them at once, not one per restart.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const text = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };
  const milliseconds = (name: string, fallback: number, { min = 1, max = 24 * 60 * 60 * 1000, zeroMeansOff = false } = {}): number => {
    const value = text(name);
    if (value === undefined) return fallback;
    const number = Number(value);
    if (!/^\d+$/.test(value) || ((number < min || number > max) && !(zeroMeansOff && number === 0))) {
      problems.push(`${name} must be a whole number of milliseconds from ${min} to ${max}${zeroMeansOff ? ' (or 0 for no limit)' : ''}; got "${value}".`);
      return fallback;
    }
    return number;
  };
  const flag = (name: string, fallback: boolean): boolean => {
    const value = (text(name) ?? String(fallback)).toLowerCase();
    if (!['true', 'false', '1', '0'].includes(value)) problems.push(`${name} must be true or false.`);
    return value === 'true' || value === '1';
  };

  const port = parsePort(text('PORT') ?? '3000', problems);
  const host = text('HOST') ?? '127.0.0.1';

  const databaseUrl = text('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL (unset it to use the embedded database).');
  }

  const redisUrl = text('REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push('REDIS_URL must be a redis:// or rediss:// URL.');
  }

  const adminToken = text('ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    problems.push(`ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (use a random secret).`);
  }

  const logLevel = (text('LOG_LEVEL') ?? 'info').toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got "${text('LOG_LEVEL')}".`);
  }

  const publicBaseUrl = (text('PUBLIC_BASE_URL') ?? `http://${hostForUrl(host)}:${port ?? 3000}`).replace(/\/+$/, '');
  if (!isHttpUrl(publicBaseUrl)) {
    problems.push(`PUBLIC_BASE_URL must be an absolute http(s) URL; got "${publicBaseUrl}".`);
  }

  const runJobs = flag('RUN_JOBS', true);

  const secretsKey = parseSecretsKey(text('SECRETS_KEY'), problems);

  const stripeSecretKey = text('STRIPE_SECRET_KEY');
  if (stripeSecretKey !== undefined && !/^(sk|rk)_(live|test)_[0-9A-Za-z]+$/.test(stripeSecretKey)) {
    problems.push('STRIPE_SECRET_KEY must be a Stripe secret or restricted key (sk_live_…, sk_test_…, rk_live_… or rk_test_…).');
  }

  const stripeApiBase = (text('STRIPE_API_BASE') ?? 'https://api.stripe.com').replace(/\/+$/, '');
  if (!isHttpUrl(stripeApiBase)) {
    problems.push(`STRIPE_API_BASE must be an absolute http(s) URL; got "${stripeApiBase}".`);
  }

  const twilio = parseTwilio(text, problems);
  const objectStore = parseObjectStore(text, problems);

  const corsOrigins = parseCorsOrigins(text('CORS_ORIGINS'), problems);
  const compression = flag('COMPRESSION', true);
  const serializerCrossCheck = flag('SERIALIZER_CROSS_CHECK', false);

  const seoAiMonitorLimitText = text('SEO_AI_MONITOR_LIMIT') ?? '25';
  const seoAiMonitorLimit = Number(seoAiMonitorLimitText);
  if (!/^\d+$/.test(seoAiMonitorLimitText) || seoAiMonitorLimit > 100_000) {
    problems.push(`SEO_AI_MONITOR_LIMIT must be an integer from 0 to 100000; got "${seoAiMonitorLimitText}".`);
  }

  const faultInjection = parseFaultInjection(text('FAULT_INJECTION'), text('NODE_ENV'), problems);
  const http: HttpTimeouts = {
    headersTimeoutMs: milliseconds('HTTP_HEADERS_TIMEOUT_MS', 10_000, { min: 100 }),
    requestTimeoutMs: milliseconds('HTTP_REQUEST_TIMEOUT_MS', 10 * 60_000, { min: 100, zeroMeansOff: true }),
    keepAliveTimeoutMs: milliseconds('HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, { min: 100 }),
    idleTimeoutMs: milliseconds('HTTP_IDLE_TIMEOUT_MS', 10_000, { min: 100 }),
  };
  if (http.requestTimeoutMs !== 0 && http.requestTimeoutMs < http.headersTimeoutMs) {
    problems.push('HTTP_REQUEST_TIMEOUT_MS must not be shorter than HTTP_HEADERS_TIMEOUT_MS (the headers are part of the request).');
  }

  const database: DatabaseTimeouts = {
    statementTimeoutMs: milliseconds('DB_STATEMENT_TIMEOUT_MS', 30_000, { zeroMeansOff: true }),
    lockTimeoutMs: milliseconds('DB_LOCK_TIMEOUT_MS', 10_000, { zeroMeansOff: true }),
    idleInTransactionTimeoutMs: milliseconds('DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', 60_000, { zeroMeansOff: true }),
    connectionWaitMs: milliseconds('DB_CONNECTION_WAIT_MS', 5_000),
    embeddedHoldTimeoutMs: milliseconds('DB_EMBEDDED_HOLD_TIMEOUT_MS', 30_000, { min: 10 }),
  };

  const outbound: OutboundSettings = {
    connectTimeoutMs: milliseconds('OUTBOUND_CONNECT_TIMEOUT_MS', 5_000),
    totalTimeoutMs: milliseconds('OUTBOUND_TIMEOUT_MS', 20_000),
    allowPrivateTargets: flag('ALLOW_PRIVATE_TARGETS', false),
  };

  const shutdown: ShutdownSettings = {
    graceMs: milliseconds('SHUTDOWN_GRACE_MS', 5_000, { min: 0 }),
    timeoutMs: milliseconds('SHUTDOWN_TIMEOUT_MS', 25_000, { min: 100 }),
  };
  if (shutdown.timeoutMs <= shutdown.graceMs) {
    problems.push('SHUTDOWN_TIMEOUT_MS must be longer than SHUTDOWN_GRACE_MS (the drain happens after the grace period, within the timeout).');
  }

  if (problems.length > 0) throw new ConfigError(problems);

  return {
    port: port!,
    host,
    databaseUrl,
    dataDir: path.resolve(text('DATA_DIR') ?? './data'),
    socialFilesDir: path.resolve(text('SOCIAL_FILES_DIR') ?? path.join(text('DATA_DIR') ?? './data', 'social-files')),
    objectStore,
    redisUrl,
    adminToken,
    logLevel,
    publicBaseUrl,
    runJobs,
    secretsKey,
    stripeSecretKey,
    stripeApiBase,
    twilio,
    faultInjection,
    corsOrigins,
    compression,
    serializerCrossCheck,
    seoAiMonitorLimit,
    http,
    database,
    outbound,
    shutdown,
  };
}

function parsePort(value: string, problems: string[]): number | undefined {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port < 0 || port > 65535) {
    problems.push(`PORT must be an integer from 0 to 65535; got "${value}".`);
    return undefined;
  }
  return port;
}

function parseSecretsKey(value: string | undefined, problems: string[]): Buffer | undefined {
  if (value === undefined) return undefined;
  const key = /^[0-9a-f]{64}$/i.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (key.length !== 32 || (!/^[0-9a-f]{64}$/i.test(value) && key.toString('base64').replace(/=+$/, '') !== value.replace(/=+$/, ''))) {
    problems.push('SECRETS_KEY must be 32 bytes, written as 64 hex characters or base64 (e.g. `openssl rand -base64 32`).');
    return undefined;
  }
  return key;
}

/** `*` alone, or comma-separated origins, each exactly scheme://host[:port] as a browser sends it in `Origin`. */
function parseCorsOrigins(value: string | undefined, problems: string[]): CorsOrigins | undefined {
  if (value === undefined) return undefined;
  if (value === '*') return '*';
  const origins = value
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  const wrong = origins.filter((origin) => !isOrigin(origin));
  if (origins.length === 0 || wrong.length > 0) {
    problems.push(
      `CORS_ORIGINS must be * or comma-separated origins such as https://app.example.com (scheme, host and port only, no path or trailing slash)${wrong.length > 0 ? `; not an origin: "${wrong.join('", "')}"` : ''}.`,
    );
    return undefined;
  }
  return [...new Set(origins)];
}

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

/** A server that would crash on purpose must never start by accident: outside NODE_ENV=test it refuses to. */
function parseFaultInjection(value: string | undefined, nodeEnv: string | undefined, problems: string[]): FaultPoint[] {
  if (value === undefined) return [];
  if (nodeEnv !== 'test') {
    problems.push('FAULT_INJECTION is for crash tests only: it needs NODE_ENV=test. Unset it.');
    return [];
  }
  const points = value.split(',').map((point) => point.trim());
  const unknown = points.filter((point) => !(FAULT_POINTS as readonly string[]).includes(point));
  if (unknown.length > 0) problems.push(`FAULT_INJECTION must list points among ${FAULT_POINTS.join(', ')}; got "${unknown.join(', ')}".`);
  return points.filter((point): point is FaultPoint => (FAULT_POINTS as readonly string[]).includes(point));
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function parseObjectStore(text: (name: string) => string | undefined, problems: string[]): S3Settings | undefined {
  const bucket = text('S3_BUCKET');
  const accessKeyId = text('S3_ACCESS_KEY_ID');
  const secretAccessKey = text('S3_SECRET_ACCESS_KEY');
  if (bucket === undefined) {
    if (accessKeyId !== undefined || secretAccessKey !== undefined || text('S3_ENDPOINT') !== undefined) problems.push('S3_BUCKET is required with the other S3_* settings.');
    return undefined;
  }
  const region = text('S3_REGION') ?? 'us-east-1';
  const endpoint = (text('S3_ENDPOINT') ?? `https://s3.${region}.amazonaws.com`).replace(/\/+$/, '');
  const prefix = text('S3_PREFIX') ?? 'social-files/';
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) problems.push(`S3_BUCKET must be a bucket name (3-63 lower-case letters, digits, dots and hyphens); got "${bucket}".`);
  if (!/^[a-z0-9-]{1,40}$/.test(region)) problems.push(`S3_REGION must be a region name such as us-east-1; got "${region}".`);
  if (!isHttpUrl(endpoint)) problems.push(`S3_ENDPOINT must be an absolute http(s) URL; got "${endpoint}".`);
  if (!/^([A-Za-z0-9_.-]+\/)*$/.test(prefix)) problems.push(`S3_PREFIX must be empty or path segments ending in "/"; got "${prefix}".`);
  if (accessKeyId === undefined || secretAccessKey === undefined) problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required with S3_BUCKET.');
  return { endpoint, region, bucket, accessKeyId: accessKeyId ?? '', secretAccessKey: secretAccessKey ?? '', prefix };
}

function parseTwilio(text: (name: string) => string | undefined, problems: string[]): TwilioSettings | undefined {
  const accountSid = text('TWILIO_ACCOUNT_SID');
  const authToken = text('TWILIO_AUTH_TOKEN');
  const fromNumber = text('TWILIO_FROM_NUMBER');
  const messagingServiceSid = text('TWILIO_MESSAGING_SERVICE_SID');
  const apiBase = (text('TWILIO_API_BASE') ?? 'https://api.twilio.com').replace(/\/+$/, '');
  if (accountSid === undefined && authToken === undefined) return undefined;
  if (accountSid === undefined || !/^AC[0-9a-fA-F]{32}$/.test(accountSid)) problems.push('TWILIO_ACCOUNT_SID must be a Twilio account sid (AC and 32 hex digits).');
  if (authToken === undefined) problems.push('TWILIO_AUTH_TOKEN is required with TWILIO_ACCOUNT_SID.');
  if (fromNumber === undefined && messagingServiceSid === undefined) problems.push('Twilio needs TWILIO_FROM_NUMBER or TWILIO_MESSAGING_SERVICE_SID.');
  if (fromNumber !== undefined && !/^\+[1-9][0-9]{6,14}$/.test(fromNumber)) problems.push('TWILIO_FROM_NUMBER must be an E.164 number (+14155550100).');
  if (messagingServiceSid !== undefined && !/^MG[0-9a-fA-F]{32}$/.test(messagingServiceSid)) problems.push('TWILIO_MESSAGING_SERVICE_SID must be MG and 32 hex digits.');
  if (!isHttpUrl(apiBase)) problems.push(`TWILIO_API_BASE must be an absolute http(s) URL; got "${apiBase}".`);
  return { accountSid: accountSid ?? '', authToken: authToken ?? '', fromNumber, messagingServiceSid, apiBase };
}
