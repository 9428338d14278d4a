import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { call, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { WebhookReceiver } from '../../../test/fakes/webhook-receiver.js';
import type { Mode } from '../../db/types.js';
import { recordTestEvent } from './test-helpers.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from '../../lib/clock.js';
import { RETRY_DELAYS_MS } from './retry-schedule.js';

const BASE = '/api/v1/services/webhooks';

let platform: TestPlatform;
let receiver: WebhookReceiver;
beforeAll(async () => {
  platform = await startTestPlatform();
  receiver = await new WebhookReceiver().start();
});
afterAll(async () => {
  await receiver.close();
  await platform.close();
});

interface Endpoint {
  id: string;
  secret: string;
  url: string;
  status: string;
}

async function createEndpoint(key: string, body: Record<string, unknown> = {}): Promise<Endpoint> {
  const response = await call(platform.app, 'POST', `${BASE}/endpoints`, { key, body: { url: receiver.newUrl(), enabled_events: ['*'], ...body } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data as Endpoint;
}

/** Records an event as a service would (outside a request), of a type the webhooks service declares. */
const recordEvent = (tenantId: string, mode: Mode = 'test') => recordTestEvent(platform, tenantId, mode);

async function deliveries(key: string, endpointId: string) {
  const response = await call(platform.app, 'GET', `${BASE}/endpoints/${endpointId}/deliveries`, { key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data as Array<Record<string, any>>;
}

const runDue = () => platform.runtime.jobs.runDue();

describe('delivery', () => {
  it('POSTs the event, signed so that the standardwebhooks package verifies it, once', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const endpoint = await createEndpoint(key);
    const event = await recordEvent(tenant.id);
    await runDue();
    await runDue();

    expect(receiver.receivedAt(endpoint.url)).toHaveLength(1);
    const [request] = receiver.receivedAt(endpoint.url);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['webhook-id']).toBe(event.id);
    const verified = new Webhook(endpoint.secret).verify(request!.body, request!.headers as Record<string, string>) as Record<string, any>;
    const stored = (await call(platform.app, 'GET', `${BASE}/events/${event.id}`, { key })).json().data;
    expect(verified).toEqual(stored);
    expect(verified).toMatchObject({ id: event.id, type: 'webhooks.endpoint.pinged', livemode: false });

    const [delivery] = await deliveries(key, endpoint.id);
    expect(delivery).toMatchObject({ event_id: event.id, status: 'succeeded', attempt_count: 1, status_code: 200, response_body: 'ok', error: null, next_attempt_at: null });
    expect(delivery!.attempts).toHaveLength(1);
  });

  it('refuses a tampered body or signature', async () => {
    const tenant = await platform.newTenant();
    const endpoint = await createEndpoint(await tenant.key());
    await recordEvent(tenant.id);
    await runDue();
    const [request] = receiver.receivedAt(endpoint.url);
    const headers = request!.headers as Record<string, string>;
    expect(() => new Webhook(endpoint.secret).verify(request!.body.replace('"livemode":false', '"livemode":true'), headers)).toThrow();
    const otherSecret = 'whsec_' + Buffer.alloc(24, 1).toString('base64');
    expect(() => new Webhook(otherSecret).verify(request!.body, headers)).toThrow();
  });

  it('retries a failing receiver on the schedule: 500, 500, then 200 is exactly three attempts', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const endpoint = await createEndpoint(key);
    receiver.answer(endpoint.url, [500, 500], 200, 'busy');
    const start = platform.clock.now().getTime();
    await recordEvent(tenant.id);

    await runDue();
    expect(receiver.receivedAt(endpoint.url)).toHaveLength(1);
    let [delivery] = await deliveries(key, endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1, status_code: 500, response_body: 'busy' });
    expect(delivery!.error).toContain('500');
    const firstRetry = Date.parse(delivery!.next_attempt_at) - Date.parse(delivery!.last_attempt_at);
    expect(firstRetry).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[0]!);
    expect(firstRetry).toBeLessThanOrEqual(RETRY_DELAYS_MS[0]! * 1.1);

    platform.clock.advance(RETRY_DELAYS_MS[0]! / 2);
    await runDue();
    expect(receiver.receivedAt(endpoint.url)).toHaveLength(1);

    platform.clock.advance(RETRY_DELAYS_MS[0]!);
    await runDue();
    expect(receiver.receivedAt(endpoint.url)).toHaveLength(2);
    [delivery] = await deliveries(key, endpoint.id);
    const secondRetry = Date.parse(delivery!.next_attempt_at) - Date.parse(delivery!.last_attempt_at);
    expect(secondRetry).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[1]!);
    expect(secondRetry).toBeLessThanOrEqual(RETRY_DELAYS_MS[1]! * 1.1);

    platform.clock.advance(RETRY_DELAYS_MS[1]! * 1.1);
    await runDue();
    platform.clock.advance(DAY_MS);
    await runDue();
    expect(receiver.receivedAt(endpoint.url)).toHaveLength(3);
    expect(new Set(receiver.receivedAt(endpoint.url).map((request) => request.headers['webhook-id'])).size).toBe(1);
    [delivery] = await deliveries(key, endpoint.id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 3, status_code: 200, next_attempt_at: null });
    expect(delivery!.attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([500, 500, 200]);
    expect(Date.parse(delivery!.attempts[2].attempted_at) - start).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[0]! + RETRY_DELAYS_MS[1]!);
  });

  it('gives up after the last retry, about three days on, and disables an endpoint that never succeeded', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const endpoint = await createEndpoint(key);
    receiver.answer(endpoint.url, [], 503);
    const start = platform.clock.now().getTime();
    await recordEvent(tenant.id);
    for (;;) {
      await runDue();
      const [delivery] = await deliveries(key, endpoint.id);
      if (delivery!.next_attempt_at === null) break;
      platform.clock.advance(Date.parse(delivery!.next_attempt_at) - platform.clock.now().getTime());
    }
    expect(receiver.receivedAt(endpoint.url)).toHaveLength(RETRY_DELAYS_MS.length + 1);
    const [delivery] = await deliveries(key, endpoint.id);
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: RETRY_DELAYS_MS.length + 1, next_attempt_at: null, status_code: 503 });
    const lastAttemptAfter = Date.parse(delivery!.last_attempt_at) - start;
    expect(lastAttemptAfter).toBeGreaterThan(3 * DAY_MS);
    expect(lastAttemptAfter).toBeLessThan(3.5 * DAY_MS);

    const after = (await call(platform.app, 'GET', `${BASE}/endpoints/${endpoint.id}`, { key })).json().data;
    expect(after).toMatchObject({ status: 'disabled', disabled_reason: 'failing' });

    // A disabled endpoint receives nothing new; enabling it again clears its record.
    await recordEvent(tenant.id);
    await runDue();
    expect(receiver.receivedAt(endpoint.url)).toHaveLength(RETRY_DELAYS_MS.length + 1);
    const enabled = await call(platform.app, 'PATCH', `${BASE}/endpoints/${endpoint.id}`, { key, body: { status: 'enabled' } });
    expect(enabled.json().data).toMatchObject({ status: 'enabled', disabled_reason: null });
  });

  it('keeps an endpoint that failed for three days but succeeded in between', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const endpoint = await createEndpoint(key);
    receiver.answer(endpoint.url, [500], 200);
    await recordEvent(tenant.id);
    await runDue();
    platform.clock.advance(MINUTE_MS);
    await runDue();
    receiver.answer(endpoint.url, [500], 200);
    platform.clock.advance(2 * DAY_MS + 23 * HOUR_MS);
    await recordEvent(tenant.id);
    await runDue();
    expect((await call(platform.app, 'GET', `${BASE}/endpoints/${endpoint.id}`, { key })).json().data.status).toBe('enabled');
  });

  it('sends each event only to endpoints subscribed to its type, of its own tenant and mode', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const other = await platform.newTenant();
    const onlyInvoicing = await createEndpoint(key, { enabled_events: ['invoicing.*'] });
    const exact = await createEndpoint(key, { enabled_events: ['webhooks.endpoint.pinged'] });
    const prefix = await createEndpoint(key, { enabled_events: ['webhooks.*'] });

    await recordEvent(tenant.id);
    await recordEvent(other.id);
    await recordEvent(tenant.id, 'live');
    await runDue();

    expect(await deliveries(key, onlyInvoicing.id)).toHaveLength(0);
    expect(await deliveries(key, exact.id)).toHaveLength(1);
    expect(await deliveries(key, prefix.id)).toHaveLength(1);
    expect(receiver.receivedAt(onlyInvoicing.url)).toHaveLength(0);
    for (const endpoint of [exact, prefix]) {
      expect(receiver.receivedAt(endpoint.url)).toHaveLength(1);
      expect(JSON.parse(receiver.receivedAt(endpoint.url)[0]!.body)).toMatchObject({ livemode: false });
    }
  });

  it('signs with both secrets for a day after a rotation, then with the new one alone', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const endpoint = await createEndpoint(key);
    const rotated = await call(platform.app, 'POST', `${BASE}/endpoints/${endpoint.id}/rotate-secret`, { key });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const newSecret = rotated.json().data.secret as string;
    expect(newSecret).not.toBe(endpoint.secret);

    await recordEvent(tenant.id);
    await runDue();
    const during = receiver.receivedAt(endpoint.url)[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [endpoint.secret, newSecret]) expect(() => new Webhook(secret).verify(during.body, during.headers as Record<string, string>)).not.toThrow();

    platform.clock.advance(DAY_MS + SECOND_MS);
    await recordEvent(tenant.id);
    await runDue();
    const after = receiver.receivedAt(endpoint.url)[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => new Webhook(newSecret).verify(after.body, after.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(after.body, after.headers as Record<string, string>)).toThrow();
  });

  it('sends a test ping to that endpoint alone, and redelivers on request with the same webhook-id', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const target = await createEndpoint(key);
    const bystander = await createEndpoint(key);
    const ping = await call(platform.app, 'POST', `${BASE}/endpoints/${target.id}/test`, { key });
    expect(ping.statusCode, ping.body).toBe(202);
    expect(ping.json().data).toMatchObject({ endpoint_id: target.id, event_type: 'webhooks.endpoint.pinged', status: 'pending', attempt_count: 0, attempts: [] });
    await runDue();
    expect(receiver.receivedAt(target.url)).toHaveLength(1);
    expect(JSON.parse(receiver.receivedAt(target.url)[0]!.body)).toMatchObject({ type: 'webhooks.endpoint.pinged', data: { object: { id: target.id } } });
    expect(await deliveries(key, bystander.id)).toHaveLength(0);

    const deliveryId = ping.json().data.id as string;
    const retried = await call(platform.app, 'POST', `${BASE}/endpoints/${target.id}/deliveries/${deliveryId}/retry`, { key });
    expect(retried.statusCode, retried.body).toBe(202);
    expect(retried.json().data).toMatchObject({ id: deliveryId, status: 'pending', attempt_count: 1 });
    await runDue();
    expect(receiver.receivedAt(target.url)).toHaveLength(2);
    expect(receiver.receivedAt(target.url)[1]!.headers['webhook-id']).toBe(receiver.receivedAt(target.url)[0]!.headers['webhook-id']);
    const [delivery] = await deliveries(key, target.id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 2 });
    expect(delivery!.attempts.map((attempt: { manual: boolean }) => attempt.manual)).toEqual([false, true]);
  });

  it('a manual retry of a failing delivery keeps its schedule after it', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const endpoint = await createEndpoint(key);
    receiver.answer(endpoint.url, [500, 500], 200);
    await recordEvent(tenant.id);
    await runDue();
    const [before] = await deliveries(key, endpoint.id);
    await call(platform.app, 'POST', `${BASE}/endpoints/${endpoint.id}/deliveries/${before!.id}/retry`, { key });
    await runDue();
    const [after] = await deliveries(key, endpoint.id);
    expect(after).toMatchObject({ status: 'pending', attempt_count: 2, next_attempt_at: before!.next_attempt_at });
  });

  it('keeps the first 1 KB of a long reply', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const endpoint = await createEndpoint(key);
    receiver.answer(endpoint.url, [], 200, 'é'.repeat(2000));
    await recordEvent(tenant.id);
    await runDue();
    const [delivery] = await deliveries(key, endpoint.id);
    expect(Buffer.byteLength(delivery!.response_body as string)).toBe(1024);
    expect(delivery!.response_body).toBe('é'.repeat(512));
  });

  it('records a receiver that cannot be reached as a failed attempt, and retries it', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const endpoint = await createEndpoint(key, { url: 'http://127.0.0.1:9/nothing-listens-here' });
    await recordEvent(tenant.id);
    await runDue();
    const [delivery] = await deliveries(key, endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1, status_code: null, response_body: null });
    expect(delivery!.error).toMatch(/^network|^connect/);
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const endpoint = await createEndpoint(key);
    receiver.answer(endpoint.url, [302], 200);
    await recordEvent(tenant.id);
    await runDue();
    const [delivery] = await deliveries(key, endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', status_code: 302 });
  });
});

describe('delivery to a private address without ALLOW_PRIVATE_TARGETS', () => {
  let strict: TestPlatform;
  beforeAll(async () => {
    strict = await startTestPlatform({ env: { ALLOW_PRIVATE_TARGETS: 'false' } });
  });
  afterAll(() => strict.close());

  it('is refused: nothing reaches the receiver and the attempt names the reason', async () => {
    const tenant = await strict.newTenant();
    const key = await tenant.key();
    const url = receiver.newUrl();
    const created = await call(strict.app, 'POST', `${BASE}/endpoints`, { key, body: { url, enabled_events: ['*'] } });
    expect(created.statusCode, created.body).toBe(201);
    const ping = await call(strict.app, 'POST', `${BASE}/endpoints/${created.json().data.id}/test`, { key });
    expect(ping.statusCode).toBe(202);
    await strict.runtime.jobs.runDue();
    expect(receiver.receivedAt(url)).toHaveLength(0);
    const list = await call(strict.app, 'GET', `${BASE}/endpoints/${created.json().data.id}/deliveries`, { key });
    const [delivery] = list.json().data;
    expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1, status_code: null });
    expect(delivery.error).toMatch(/^private_target/);
  });
});
