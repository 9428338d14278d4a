import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeCurrency } from '../../src/lib/currency.js';
import { CurrencyCode } from '../../src/platform/http/schemas.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
let releaseSlowRequest: () => void = () => {};
let slowRequestReached: () => void = () => {};
const reached = new Promise<void>((resolve) => (slowRequestReached = resolve));
beforeAll(async () => {
  platform = await startTestPlatform();
  // Routes declared the way a service declares them, to exercise platform behaviour.
  platform.app.get('/api/v1/services/crm/test-crash', {
    config: { scope: 'service.crm.view' },
    schema: { response: { 200: Type.Object({ data: Type.Object({}) }) } },
    handler: async () => {
      throw new Error('database password is hunter2');
    },
  });
  platform.app.post('/api/v1/services/crm/test-currency', {
    config: { scope: 'service.crm.manage' },
    schema: {
      body: Type.Object({ currency: CurrencyCode }, { additionalProperties: false }),
      response: { 200: Type.Object({ data: Type.Object({ currency: Type.String() }) }) },
    },
    handler: async (request) => ({ data: { currency: normalizeCurrency((request.body as { currency: string }).currency)! } }),
  });
  platform.app.get('/api/v1/services/crm/test-slow', {
    config: { scope: 'service.crm.view' },
    schema: { response: { 200: Type.Object({ data: Type.Object({ finished: Type.Boolean() }) }) } },
    handler: async () => {
      await new Promise<void>((resolve) => {
        releaseSlowRequest = resolve;
        slowRequestReached();
      });
      return { data: { finished: true } };
    },
  });
});
afterAll(() => platform.close());

describe('unexpected failures', () => {
  it('answer 500 internal_error in the error shape without leaking the cause', async () => {
    const key = await (await platform.newTenant()).key();
    const response = await call(platform.app, 'GET', '/api/v1/services/crm/test-crash', { key });
    const error = expectError(response, 500, 'internal_error');
    expect(response.body).not.toContain('hunter2');
    expect(error.message).toContain('Service-Request-Id');
  });
});

describe('currency codes', () => {
  it('accepts ISO 4217 in any case and returns it upper-case', async () => {
    const key = await (await platform.newTenant()).key();
    const response = await call(platform.app, 'POST', '/api/v1/services/crm/test-currency', { key, body: { currency: 'eur' } });
    expect(response.json().data.currency).toBe('EUR');
  });

  it.each(['XYZ', 'EU', 'EURO', 'e1r'])('refuses %s with 400 validation_failed', async (currency) => {
    const key = await (await platform.newTenant()).key();
    const error = expectError(await call(platform.app, 'POST', '/api/v1/services/crm/test-currency', { key, body: { currency } }), 400, 'validation_failed');
    expect(error.details[0]!.path).toBe('currency');
  });
});

describe('graceful shutdown', () => {
  it('once shutdown begins: not ready but still serving; once closing: finishes a request in flight, closing its connection, and stops accepting', async () => {
    const key = await (await platform.newTenant()).key();
    const address = await platform.app.listen({ port: 0, host: '127.0.0.1' });
    expect((await fetch(`${address}/readyz`)).status).toBe(200);

    platform.runtime.beginShutdown();
    const readiness = await call(platform.app, 'GET', '/readyz');
    expectError(readiness, 503, 'service_unavailable');
    expect(readiness.headers['retry-after']).toBe('1');
    expect((await call(platform.app, 'GET', '/api/v1/services/crm/contacts', { key })).statusCode).toBe(200);

    const inFlight = fetch(`${address}/api/v1/services/crm/test-slow`, { headers: { authorization: `Bearer ${key}` } });
    await reached;
    const closing = platform.runtime.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    releaseSlowRequest();
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(response.headers.get('connection')).toBe('close');
    expect(await response.json()).toEqual({ data: { finished: true } });
    await closing;
    await expect(fetch(`${address}/healthz`)).rejects.toThrow();
  });
});
