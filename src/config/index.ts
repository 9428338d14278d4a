import path from 'node:path';
import { FAULT_POINTS, type FaultPoint } from '../platform/fault-injection.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  /** Unset: embedded PGlite under dataDir. */
  databaseUrl: string | undefined;
  dataDir: string;
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
  /** Crash points for crash tests (FAULT_INJECTION); always empty unless NODE_ENV=test. */
  faultInjection: FaultPoint[];
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

  const runJobsText = (text('RUN_JOBS') ?? 'true').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(runJobsText)) {
    problems.push('RUN_JOBS must be true or false.');
  }

  const secretsKey = parseSecretsKey(text('SECRETS_KEY'), problems);

  const stripeSecretKey = text('STRIPE_SECRET_KEY');
  if (stripeSecretKey !== undefined && !/^(sk|rk)_(live|test)_[0-9A-Za-z]+$/.test(stripeSecretKey)) {
    problems.push('STRIPE_SECRET_KEY must be a Stripe secret or restricted key (sk_live_…, sk_test_…, rk_live_… or rk_test_…).');
  }

  const stripeApiBase = (text('STRIPE_API_BASE') ?? 'https://api.stripe.com').replace(/\/+$/, '');
  if (!isHttpUrl(stripeApiBase)) {
    problems.push(`STRIPE_API_BASE must be an absolute http(s) URL; got "${stripeApiBase}".`);
  }

  const faultInjection = parseFaultInjection(text('FAULT_INJECTION'), text('NODE_ENV'), problems);

  if (problems.length > 0) throw new ConfigError(problems);

  return {
    port: port!,
    host,
    databaseUrl,
    dataDir: path.resolve(text('DATA_DIR') ?? './data'),
    redisUrl,
    adminToken,
    logLevel,
    publicBaseUrl,
    runJobs: runJobsText === 'true' || runJobsText === '1',
    secretsKey,
    stripeSecretKey,
    stripeApiBase,
    faultInjection,
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
