import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const LIST = '/api/v1/services/crm/contacts';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids', () => {
  it('echoes X-Request-Id as Service-Request-Id', async () => {
    const key = await (await platform.newTenant()).key();
    const response = await call(platform.app, 'GET', LIST, { key, headers: { 'x-request-id': 'b5a2c7a4-0d8e-4a53-9f0e-1f2d3c4b5a69' } });
    expect(response.headers['service-request-id']).toBe('b5a2c7a4-0d8e-4a53-9f0e-1f2d3c4b5a69');
  });

  it('mints a fresh UUID when none is sent, on errors too', async () => {
    const first = await call(platform.app, 'GET', LIST);
    const second = await call(platform.app, 'GET', '/nowhere');
    expect(first.headers['service-request-id']).toMatch(UUID);
    expect(second.headers['service-request-id']).toMatch(UUID);
    expect(first.headers['service-request-id']).not.toBe(second.headers['service-request-id']);
  });

  it('replaces an unusable X-Request-Id instead of echoing it', async () => {
    const response = await call(platform.app, 'GET', LIST, { headers: { 'x-request-id': `${'x'.repeat(300)}` } });
    expect(response.headers['service-request-id']).toMatch(UUID);
    const injected = await call(platform.app, 'GET', LIST, { headers: { 'x-request-id': 'abc def<script>' } });
    expect(injected.headers['service-request-id']).toMatch(UUID);
  });
});

describe('per-key rate limits', () => {
  it('sets X-RateLimit-* on every response, Reset in Unix seconds at the end of the minute', async () => {
    const key = await (await platform.newTenant()).key({ rateLimitPerMinute: 60 });
    const response = await call(platform.app, 'GET', LIST, { key });
    expect(response.headers['x-ratelimit-limit']).toBe('60');
    expect(response.headers['x-ratelimit-remaining']).toBe('59');
    const reset = Number(response.headers['x-ratelimit-reset']);
    const now = platform.clock.now().getTime() / 1000;
    expect(reset % 60).toBe(0);
    expect(reset).toBeGreaterThan(now);
    expect(reset - now).toBeLessThanOrEqual(60);
  });

  it('answers 429 rate_limited with Retry-After once the minute is used up', async () => {
    platform.clock.freeze(new Date('2026-11-21T10:00:15.000Z'));
    try {
      const key = await (await platform.newTenant()).key({ rateLimitPerMinute: 3 });
      for (let i = 0; i < 3; i += 1) expect((await call(platform.app, 'GET', LIST, { key })).statusCode).toBe(200);
      const refused = await call(platform.app, 'GET', LIST, { key });
      expectError(refused, 429, 'rate_limited');
      expect(refused.headers['retry-after']).toBe('45');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(refused.headers['x-ratelimit-reset']).toBe(String(Date.parse('2026-11-21T10:01:00.000Z') / 1000));

      platform.clock.advance(45_000); // the next window
      expect((await call(platform.app, 'GET', LIST, { key })).statusCode).toBe(200);
    } finally {
      platform.clock.resume();
    }
  });

  it('counts each key separately, even within one tenant', async () => {
    platform.clock.freeze(new Date('2026-11-21T11:00:00.000Z'));
    try {
      const tenant = await platform.newTenant();
      const busy = await tenant.key({ rateLimitPerMinute: 1 });
      const quiet = await tenant.key({ rateLimitPerMinute: 1 });
      expect((await call(platform.app, 'GET', LIST, { key: busy })).statusCode).toBe(200);
      expectError(await call(platform.app, 'GET', LIST, { key: busy }), 429, 'rate_limited');
      expect((await call(platform.app, 'GET', LIST, { key: quiet })).statusCode).toBe(200);
    } finally {
      platform.clock.resume();
    }
  });

  it('uses 60 per minute when the key was created without a limit', async () => {
    const tenant = await platform.newTenant();
    const { secret } = await platform.admin.createApiKey(tenant.id, { mode: 'test', scopes: ['*'] });
    const response = await call(platform.app, 'GET', LIST, { key: secret });
    expect(response.headers['x-ratelimit-limit']).toBe('60');
  });
});
