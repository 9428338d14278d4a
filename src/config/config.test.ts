import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './index.js';

describe('loadConfig', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: path.resolve('./data'),
      redisUrl: undefined,
      adminToken: undefined,
      logLevel: 'info',
      publicBaseUrl: 'http://127.0.0.1:3000',
      runJobs: true,
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/app',
      DATA_DIR: '/var/lib/app',
      REDIS_URL: 'redis://cache:6379',
      ADMIN_TOKEN: 'a-long-enough-operator-token',
      LOG_LEVEL: 'WARN',
      PUBLIC_BASE_URL: 'https://api.example.com/',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgres://u@db:5432/app',
      dataDir: '/var/lib/app',
      socialFilesDir: '/var/lib/app/social-files',
      redisUrl: 'redis://cache:6379',
      adminToken: 'a-long-enough-operator-token',
      logLevel: 'warn',
      publicBaseUrl: 'https://api.example.com',
    });
  });

  it('reports every bad value at once, naming the variable', () => {
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', REDIS_URL: 'http://x', ADMIN_TOKEN: 'short', LOG_LEVEL: 'loud', PUBLIC_BASE_URL: 'ftp://x' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      for (const name of ['PORT', 'DATABASE_URL', 'REDIS_URL', 'ADMIN_TOKEN', 'LOG_LEVEL', 'PUBLIC_BASE_URL']) expect(message).toContain(name);
    }
  });

  it('reads SECRETS_KEY as base64 or hex and refuses other lengths', () => {
    const key = Buffer.alloc(32, 3);
    expect(loadConfig({ SECRETS_KEY: key.toString('base64') }).secretsKey).toEqual(key);
    expect(loadConfig({ SECRETS_KEY: key.toString('hex') }).secretsKey).toEqual(key);
    expect(loadConfig({}).secretsKey).toBeUndefined();
    expect(() => loadConfig({ SECRETS_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/SECRETS_KEY/);
    expect(() => loadConfig({ SECRETS_KEY: 'not base64 at all!' })).toThrow(/SECRETS_KEY/);
  });

  it('reads STRIPE_SECRET_KEY (optional, Stripe key shape) and STRIPE_API_BASE', () => {
    expect(loadConfig({})).toMatchObject({ stripeSecretKey: undefined, stripeApiBase: 'https://api.stripe.com' });
    expect(loadConfig({ STRIPE_SECRET_KEY: 'sk_live_abc123', STRIPE_API_BASE: 'http://127.0.0.1:12111/' })).toMatchObject({
      stripeSecretKey: 'sk_live_abc123',
      stripeApiBase: 'http://127.0.0.1:12111',
    });
    expect(() => loadConfig({ STRIPE_SECRET_KEY: 'pk_live_abc' })).toThrow(/STRIPE_SECRET_KEY/);
    expect(() => loadConfig({ STRIPE_API_BASE: 'ftp://x' })).toThrow(/STRIPE_API_BASE/);
  });

  it('reads the S3-compatible object store (S3_*): off by default, AWS endpoint from the region, every problem named', () => {
    expect(loadConfig({}).objectStore).toBeUndefined();
    expect(loadConfig({ S3_BUCKET: 'media-uploads', S3_REGION: 'eu-west-3', S3_ACCESS_KEY_ID: 'AKIA1', S3_SECRET_ACCESS_KEY: 'secret' }).objectStore).toEqual({
      endpoint: 'https://s3.eu-west-3.amazonaws.com',
      region: 'eu-west-3',
      bucket: 'media-uploads',
      accessKeyId: 'AKIA1',
      secretAccessKey: 'secret',
      prefix: 'social-files/',
    });
    expect(
      loadConfig({ S3_BUCKET: 'media', S3_ENDPOINT: 'http://minio:9000/', S3_PREFIX: 'api/uploads/', S3_ACCESS_KEY_ID: 'minio', S3_SECRET_ACCESS_KEY: 'minio-secret' }).objectStore,
    ).toMatchObject({ endpoint: 'http://minio:9000', region: 'us-east-1', prefix: 'api/uploads/' });
    expect(() => loadConfig({ S3_ACCESS_KEY_ID: 'AKIA1' })).toThrow(/S3_BUCKET is required/);
    expect(() => loadConfig({ S3_BUCKET: 'media' })).toThrow(/S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required/);
    expect(() => loadConfig({ S3_BUCKET: 'Bad_Bucket', S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b' })).toThrow(/S3_BUCKET must be a bucket name/);
    expect(() => loadConfig({ S3_BUCKET: 'media', S3_PREFIX: 'no-slash', S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b' })).toThrow(/S3_PREFIX/);
    expect(() => loadConfig({ S3_BUCKET: 'media', S3_ENDPOINT: 'minio:9000', S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b' })).toThrow(/S3_ENDPOINT/);
  });

  it('reads CORS_ORIGINS (* or exact origins) and COMPRESSION', () => {
    expect(loadConfig({})).toMatchObject({ corsOrigins: undefined, compression: true });
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173,https://app.example.com' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    expect(loadConfig({ COMPRESSION: 'false' }).compression).toBe(false);
    for (const wrong of [
      'https://app.example.com/',
      'https://app.example.com/path',
      'app.example.com',
      'ftp://files.example.com',
      'https://App.example.com',
      '*, https://app.example.com',
      ',',
    ]) {
      expect(() => loadConfig({ CORS_ORIGINS: wrong }), wrong).toThrow(/CORS_ORIGINS/);
    }
    expect(() => loadConfig({ COMPRESSION: 'gzip' })).toThrow(/COMPRESSION/);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', REDIS_URL: ' ', ADMIN_TOKEN: '' })).toMatchObject({ databaseUrl: undefined, redisUrl: undefined, adminToken: undefined });
  });

  it('honours FAULT_INJECTION only under NODE_ENV=test and refuses to start with it anywhere else', () => {
    expect(loadConfig({}).faultInjection).toEqual([]);
    expect(loadConfig({ NODE_ENV: 'test', FAULT_INJECTION: 'idempotency:after-write, idempotency:after-commit' }).faultInjection).toEqual([
      'idempotency:after-write',
      'idempotency:after-commit',
    ]);
    expect(() => loadConfig({ FAULT_INJECTION: 'idempotency:after-write' })).toThrow(/FAULT_INJECTION.*NODE_ENV=test/);
    expect(() => loadConfig({ NODE_ENV: 'production', FAULT_INJECTION: 'idempotency:after-write' })).toThrow(/NODE_ENV=test/);
    expect(() => loadConfig({ NODE_ENV: 'test', FAULT_INJECTION: 'idempotency:somewhere' })).toThrow(/idempotency:somewhere/);
  });

  it('has bounded timeouts by default, and reads each from its variable', () => {
    expect(loadConfig({})).toMatchObject({
      http: { headersTimeoutMs: 10_000, requestTimeoutMs: 600_000, keepAliveTimeoutMs: 5_000, idleTimeoutMs: 10_000 },
      database: { statementTimeoutMs: 30_000, lockTimeoutMs: 10_000, idleInTransactionTimeoutMs: 60_000, connectionWaitMs: 5_000, embeddedHoldTimeoutMs: 30_000 },
      outbound: { connectTimeoutMs: 5_000, totalTimeoutMs: 20_000, allowPrivateTargets: false },
      shutdown: { graceMs: 5_000, timeoutMs: 25_000 },
    });
    const config = loadConfig({
      HTTP_HEADERS_TIMEOUT_MS: '2000',
      HTTP_REQUEST_TIMEOUT_MS: '0',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000',
      HTTP_IDLE_TIMEOUT_MS: '3000',
      DB_STATEMENT_TIMEOUT_MS: '0',
      DB_LOCK_TIMEOUT_MS: '500',
      DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '1000',
      DB_CONNECTION_WAIT_MS: '250',
      DB_EMBEDDED_HOLD_TIMEOUT_MS: '4000',
      OUTBOUND_CONNECT_TIMEOUT_MS: '1000',
      OUTBOUND_TIMEOUT_MS: '3000',
      ALLOW_PRIVATE_TARGETS: 'true',
      SHUTDOWN_GRACE_MS: '0',
      SHUTDOWN_TIMEOUT_MS: '1000',
    });
    expect(config.http).toEqual({ headersTimeoutMs: 2_000, requestTimeoutMs: 0, keepAliveTimeoutMs: 65_000, idleTimeoutMs: 3_000 });
    expect(config.database).toEqual({ statementTimeoutMs: 0, lockTimeoutMs: 500, idleInTransactionTimeoutMs: 1_000, connectionWaitMs: 250, embeddedHoldTimeoutMs: 4_000 });
    expect(config.outbound).toEqual({ connectTimeoutMs: 1_000, totalTimeoutMs: 3_000, allowPrivateTargets: true });
    expect(config.shutdown).toEqual({ graceMs: 0, timeoutMs: 1_000 });
  });

  it('refuses timeouts that are not whole milliseconds, that would never end, or that contradict each other', () => {
    try {
      loadConfig({
        HTTP_HEADERS_TIMEOUT_MS: '0',
        HTTP_IDLE_TIMEOUT_MS: '1.5',
        DB_CONNECTION_WAIT_MS: '0',
        OUTBOUND_TIMEOUT_MS: 'soon',
        ALLOW_PRIVATE_TARGETS: 'yes',
        SHUTDOWN_GRACE_MS: '30000',
        SHUTDOWN_TIMEOUT_MS: '10000',
      });
      expect.unreachable();
    } catch (error) {
      const message = (error as Error).message;
      for (const name of [
        'HTTP_HEADERS_TIMEOUT_MS',
        'HTTP_IDLE_TIMEOUT_MS',
        'DB_CONNECTION_WAIT_MS',
        'OUTBOUND_TIMEOUT_MS',
        'ALLOW_PRIVATE_TARGETS',
        'SHUTDOWN_TIMEOUT_MS must be longer',
      ]) {
        expect(message).toContain(name);
      }
    }
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' })).toThrow(/HTTP_REQUEST_TIMEOUT_MS must not be shorter/);
  });
});
