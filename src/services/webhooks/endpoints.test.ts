import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import type { Mode } from '../../db/types.js';
import { recordTestEvent } from './test-helpers.js';
import { MINUTE_MS } from '../../lib/clock.js';

const BASE = '/api/v1/services/webhooks';
const REQUIRED_EVENT_TYPES = [
  'payments.checkout_session.completed',
  'payments.checkout_session.expired',
  'invoicing.invoice.finalized',
  'invoicing.invoice.paid',
  'invoicing.payment.created',
  'invoicing.refund.created',
  'invoicing.approval.requested',
  'invoicing.approval.decided',
  'catalog.subscription.created',
  'catalog.subscription.trial_ended',
  'catalog.subscription.renewed',
  'catalog.subscription.paused',
  'catalog.subscription.resumed',
  'catalog.subscription.canceled',
  'forms.submission.created',
  'blogs.post.published',
  'customer_auth.user.created',
  'customer_auth.user.email_verified',
  'crm.contact.created',
  'outreach.enrollment.created',
  'outreach.enrollment.exited',
  'outreach.enrollment.completed',
  'outreach.message.sent',
];
// Port 1 of loopback refuses at once: deliveries that later tests' job runs attempt fail in a millisecond.
const URL_OK = 'https://127.0.0.1:1/platform';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

async function createEndpoint(key: string, body: Record<string, unknown> = {}) {
  const response = await call(platform.app, 'POST', `${BASE}/endpoints`, { key, body: { url: URL_OK, enabled_events: ['*'], ...body } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data as Record<string, any> & { id: string; secret: string };
}

const recordEvent = (tenantId: string, mode: Mode = 'test') => recordTestEvent(platform, tenantId, mode);

describe('endpoints', () => {
  it('creates an endpoint with a whsec_ secret shown once', async () => {
    const key = await (await platform.newTenant()).key();
    const created = await createEndpoint(key, { enabled_events: ['invoicing.*', 'forms.submission.created', 'invoicing.*'], description: '  Accounting  ' });
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: URL_OK,
      description: 'Accounting',
      enabled_events: ['invoicing.*', 'forms.submission.created'],
      status: 'enabled',
      disabled_reason: null,
      livemode: false,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
      created_at: expect.any(String),
      updated_at: created.created_at,
    });
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64')).toHaveLength(24);

    const { secret, ...shown } = created;
    expect(secret).toBeTruthy();
    const got = await call(platform.app, 'GET', `${BASE}/endpoints/${created.id}`, { key });
    expect(got.json().data).toEqual(shown);
    const list = await call(platform.app, 'GET', `${BASE}/endpoints`, { key });
    expect(list.json()).toEqual({ data: [shown], meta: { limit: 50, offset: 0, total: 1, has_more: false } });
    expect(JSON.stringify(list.json())).not.toContain('whsec_');
  });

  it('stores the secret sealed, never as given', async () => {
    const tenant = await platform.newTenant();
    const created = await createEndpoint(await tenant.key());
    const row = await platform.database.db
      .selectFrom('webhook_endpoints' as never)
      .select(['secret_sealed' as never])
      .where('id' as never, '=', created.id as never)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(created.secret.slice('whsec_'.length));
  });

  it('replays a create sent again with its Idempotency-Key, secret included, and keeps that reply sealed at rest', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': `create-endpoint-${crypto.randomUUID()}` };
    const body = { url: URL_OK, enabled_events: ['*'] };
    const first = await call(platform.app, 'POST', `${BASE}/endpoints`, { key, headers, body });
    const again = await call(platform.app, 'POST', `${BASE}/endpoints`, { key, headers, body });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const secret = first.json().data.secret as string;
    const stored = await platform.database.db
      .selectFrom('idempotency_keys')
      .select('response_body')
      .where('idempotency_key', '=', headers['idempotency-key'])
      .executeTakeFirstOrThrow();
    expect(Buffer.from(stored.response_body).toString('utf8')).not.toContain(secret.slice('whsec_'.length, 20));
    expect(Buffer.from(stored.response_body).toString('utf8')).not.toContain(first.json().data.id);
  });

  it.each([
    ['an ftp URL', { url: 'ftp://example.com/x' }, 'url'],
    ['a relative URL', { url: '/hooks' }, 'url'],
    ['a URL with credentials', { url: 'https://user:pass@example.com/x' }, 'url'],
    ['no events', { enabled_events: [] }, 'enabled_events'],
    ['an unknown event type', { enabled_events: ['invoicing.invoice.exploded'] }, 'enabled_events[0]'],
    ['an unknown service prefix', { enabled_events: ['*', 'nothing.*'] }, 'enabled_events[1]'],
    ['a malformed pattern', { enabled_events: ['invoicing.*.paid'] }, 'enabled_events/0'],
    ['an unknown field', { secret: 'whsec_x' }, 'secret'],
  ])('refuses %s', async (_label, body, path) => {
    const key = await (await platform.newTenant()).key();
    const error = expectError(await call(platform.app, 'POST', `${BASE}/endpoints`, { key, body: { url: URL_OK, enabled_events: ['*'], ...body } }), 400, 'validation_failed');
    expect(error.details.map((detail: { path: string }) => detail.path.replace('/', '[').replace(/\[(\d+)$/, '[$1]'))).toContain(
      path.replace('/', '[').replace(/\[(\d+)$/, '[$1]'),
    );
  });

  it('takes http with a test-mode key only; live mode needs https', async () => {
    const tenant = await platform.newTenant();
    await createEndpoint(await tenant.key(), { url: 'http://127.0.0.1:1/x' });
    const live = await tenant.key({ mode: 'live' });
    const error = expectError(
      await call(platform.app, 'POST', `${BASE}/endpoints`, { key: live, body: { url: 'http://127.0.0.1:1/x', enabled_events: ['*'] } }),
      400,
      'validation_failed',
    );
    expect(error.details[0]).toMatchObject({ path: 'url', code: 'insecure_url' });
    const created = await call(platform.app, 'POST', `${BASE}/endpoints`, { key: live, body: { url: URL_OK, enabled_events: ['*'] } });
    expect(created.json().data).toMatchObject({ livemode: true });
  });

  it('allows 16 endpoints per tenant and mode', async () => {
    const key = await (await platform.newTenant()).key();
    for (let index = 0; index < 16; index += 1) await createEndpoint(key);
    expectError(await call(platform.app, 'POST', `${BASE}/endpoints`, { key, body: { url: URL_OK, enabled_events: ['*'] } }), 409, 'conflict');
  });

  it('updates url, events, description and status; disabling by hand says so', async () => {
    const key = await (await platform.newTenant()).key();
    const created = await createEndpoint(key);
    platform.clock.advance(MINUTE_MS);
    const patched = await call(platform.app, 'PATCH', `${BASE}/endpoints/${created.id}`, {
      key,
      body: { url: 'https://127.0.0.1:1/h', enabled_events: ['catalog.*'], description: null, status: 'disabled', expected_updated_at: created.updated_at },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().data).toMatchObject({
      url: 'https://127.0.0.1:1/h',
      enabled_events: ['catalog.*'],
      description: null,
      status: 'disabled',
      disabled_reason: 'manual',
    });
    expect(patched.json().data.updated_at).not.toBe(created.updated_at);

    expectError(
      await call(platform.app, 'PATCH', `${BASE}/endpoints/${created.id}`, { key, body: { status: 'enabled', expected_updated_at: created.updated_at } }),
      409,
      'stale_update',
    );
    expectError(await call(platform.app, 'PATCH', `${BASE}/endpoints/${created.id}`, { key, body: { status: 'paused' } }), 400, 'validation_failed');
    expectError(await call(platform.app, 'PATCH', `${BASE}/endpoints/${created.id}`, { key, body: { enabled_events: ['nope.nope.nope'] } }), 400, 'validation_failed');
  });

  it('deletes an endpoint; a second delete is 404', async () => {
    const key = await (await platform.newTenant()).key();
    const created = await createEndpoint(key);
    const deleted = await call(platform.app, 'DELETE', `${BASE}/endpoints/${created.id}`, { key });
    expect(deleted.json()).toEqual({ data: { id: created.id, deleted: true } });
    expectError(await call(platform.app, 'DELETE', `${BASE}/endpoints/${created.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/endpoints/${created.id}`, { key }), 404, 'not_found');
  });

  it('rotates the secret: a new one, shown once', async () => {
    const key = await (await platform.newTenant()).key();
    const created = await createEndpoint(key);
    const rotated = await call(platform.app, 'POST', `${BASE}/endpoints/${created.id}/rotate-secret`, { key });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().data.secret).toMatch(/^whsec_/);
    expect(rotated.json().data.secret).not.toBe(created.secret);
  });

  it('refuses a test ping and a retry on a disabled endpoint', async () => {
    const key = await (await platform.newTenant()).key();
    const created = await createEndpoint(key);
    const ping = await call(platform.app, 'POST', `${BASE}/endpoints/${created.id}/test`, { key });
    await call(platform.app, 'PATCH', `${BASE}/endpoints/${created.id}`, { key, body: { status: 'disabled' } });
    expectError(await call(platform.app, 'POST', `${BASE}/endpoints/${created.id}/test`, { key }), 409, 'conflict');
    expectError(await call(platform.app, 'POST', `${BASE}/endpoints/${created.id}/deliveries/${ping.json().data.id}/retry`, { key }), 409, 'conflict');
  });

  it('answers an unknown delivery with 404', async () => {
    const key = await (await platform.newTenant()).key();
    const created = await createEndpoint(key);
    expectError(await call(platform.app, 'POST', `${BASE}/endpoints/${created.id}/deliveries/${crypto.randomUUID()}/retry`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/endpoints/${crypto.randomUUID()}/deliveries`, { key }), 404, 'not_found');
  });

  it('filters deliveries by status and event', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const created = await createEndpoint(key);
    const ping = (await call(platform.app, 'POST', `${BASE}/endpoints/${created.id}/test`, { key })).json().data;
    const pending = await call(platform.app, 'GET', `${BASE}/endpoints/${created.id}/deliveries?status=pending&event_id=${ping.event_id}`, { key });
    expect(pending.json().data.map((delivery: { id: string }) => delivery.id)).toEqual([ping.id]);
    const none = await call(platform.app, 'GET', `${BASE}/endpoints/${created.id}/deliveries?status=succeeded`, { key });
    expect(none.json().meta.total).toBe(0);
    expectError(await call(platform.app, 'GET', `${BASE}/endpoints/${created.id}/deliveries?status=lost`, { key }), 400, 'validation_failed');
  });
});

describe('events', () => {
  it('lists the catalogue of event types', async () => {
    const key = await (await platform.newTenant()).key();
    const response = await call(platform.app, 'GET', `${BASE}/event-types?limit=200`, { key });
    expect(response.statusCode).toBe(200);
    const types = (response.json().data as Array<{ type: string; service: string; description: string }>).map((entry) => entry.type);
    expect(types).toEqual(expect.arrayContaining([...REQUIRED_EVENT_TYPES, 'webhooks.endpoint.pinged']));
    expect(types).toEqual([...types].sort());
    for (const type of types) expect(type).toMatch(/^[a-z_]+\.[a-z_]+\.[a-z_]+$/);
  });

  it('lists events newest first with type and time filters, and fetches one', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const first = await recordEvent(tenant.id);
    platform.clock.advance(MINUTE_MS);
    const between = platform.clock.now().toISOString();
    platform.clock.advance(MINUTE_MS);
    const second = await recordEvent(tenant.id);
    await recordEvent(tenant.id, 'live');
    await recordEvent((await platform.newTenant()).id);

    const all = await call(platform.app, 'GET', `${BASE}/events`, { key });
    expect(all.json().data.map((event: { id: string }) => event.id)).toEqual([second.id, first.id]);
    expect(all.json().meta).toEqual({ limit: 50, offset: 0, total: 2, has_more: false });
    const event = all.json().data[1];
    expect(event).toEqual({
      id: first.id,
      type: 'webhooks.endpoint.pinged',
      created_at: first.created_at.toISOString(),
      livemode: false,
      data: { object: expect.objectContaining({ url: 'https://127.0.0.1:1/hooks' }) },
    });

    const after = await call(platform.app, 'GET', `${BASE}/events?created_after=${encodeURIComponent(between)}`, { key });
    expect(after.json().data.map((event: { id: string }) => event.id)).toEqual([second.id]);
    const before = await call(platform.app, 'GET', `${BASE}/events?created_before=${encodeURIComponent(between)}`, { key });
    expect(before.json().data.map((event: { id: string }) => event.id)).toEqual([first.id]);
    const byType = await call(platform.app, 'GET', `${BASE}/events?type=forms.submission.created`, { key });
    expect(byType.json().meta.total).toBe(0);

    const one = await call(platform.app, 'GET', `${BASE}/events/${first.id}`, { key });
    expect(one.json().data).toEqual(event);
    expectError(await call(platform.app, 'GET', `${BASE}/events/${crypto.randomUUID()}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/events?created_after=yesterday`, { key }), 400, 'validation_failed');
  });

  it('forgets events after 30 days', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const old = await recordEvent(tenant.id);
    platform.clock.advance(31 * 24 * 60 * MINUTE_MS);
    const fresh = await recordEvent(tenant.id);
    await platform.runtime.events.sweep(platform.clock.now());
    const all = await call(platform.app, 'GET', `${BASE}/events`, { key });
    expect(all.json().data.map((event: { id: string }) => event.id)).toEqual([fresh.id]);
    expectError(await call(platform.app, 'GET', `${BASE}/events/${old.id}`, { key }), 404, 'not_found');
  });
});

const endpointFixture = async (key: string) => createEndpoint(key);
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.webhooks.view', url: () => `${BASE}/event-types`, addressesOneRow: false });
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.webhooks.view', url: () => `${BASE}/events`, addressesOneRow: false });
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.webhooks.view', url: () => `${BASE}/endpoints`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.webhooks.manage',
  url: () => `${BASE}/endpoints`,
  body: () => ({ url: URL_OK, enabled_events: ['*'] }),
  addressesOneRow: false,
});
for (const [method, suffix, scope] of [
  ['GET', '', 'service.webhooks.view'],
  ['PATCH', '', 'service.webhooks.manage'],
  ['DELETE', '', 'service.webhooks.manage'],
  ['POST', '/rotate-secret', 'service.webhooks.manage'],
  ['POST', '/test', 'service.webhooks.manage'],
  ['GET', '/deliveries', 'service.webhooks.view'],
] as const) {
  describeRouteSecurity(() => platform, {
    method,
    scope,
    setup: endpointFixture,
    url: (endpoint: { id: string }) => `${BASE}/endpoints/${endpoint.id}${suffix}`,
    ...(method === 'PATCH' ? { body: () => ({ description: 'x' }) } : {}),
    addressesOneRow: true,
  });
}
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.webhooks.manage',
  setup: async (key: string) => {
    const endpoint = await createEndpoint(key);
    const ping = await call(platform.app, 'POST', `${BASE}/endpoints/${endpoint.id}/test`, { key });
    return { endpoint, delivery: ping.json().data as { id: string } };
  },
  url: ({ endpoint, delivery }) => `${BASE}/endpoints/${endpoint.id}/deliveries/${delivery.id}/retry`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.webhooks.view',
  setup: async (key: string) => {
    const endpoint = await createEndpoint(key);
    const ping = await call(platform.app, 'POST', `${BASE}/endpoints/${endpoint.id}/test`, { key });
    return { eventId: ping.json().data.event_id as string };
  },
  url: ({ eventId }) => `${BASE}/events/${eventId}`,
  addressesOneRow: true,
});
