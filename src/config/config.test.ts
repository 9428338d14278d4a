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
    expect(loadConfig({ STRIPE_SECRET_KEY: 'sk_live_abc123', STRIPE_API_BASE: 'http://127.0.0.1:12111/' })).toMatchObject({ stripeSecretKey: 'sk_live_abc123', stripeApiBase: 'http://127.0.0.1:12111' });
    expect(() => loadConfig({ STRIPE_SECRET_KEY: 'pk_live_abc' })).toThrow(/STRIPE_SECRET_KEY/);
    expect(() => loadConfig({ STRIPE_API_BASE: 'ftp://x' })).toThrow(/STRIPE_API_BASE/);
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
});
