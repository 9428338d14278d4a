import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { asJson, recordedEvents } from '../../../test/recorded-events.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { DAY_MS } from '../../lib/clock.js';
import { BASE, createSession, getSession, paySession } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const REFUNDS = `${BASE}/refunds`;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function paidSession(key: string, body?: Record<string, unknown>) {
  const session = await createSession(platform, key, body);
  expect((await paySession(platform, session.id)).statusCode).toBe(303);
  return getSession(platform, key, session.id);
}

function refund(key: string, body: Record<string, unknown>, headers?: Record<string, string>) {
  return call(platform.app, 'POST', REFUNDS, { key, body, ...(headers ? { headers } : {}) });
}

async function refunded(key: string, body: Record<string, unknown>) {
  const response = await refund(key, body);
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

describe('refunding a paid checkout session (sandbox)', () => {
  it('refunds everything by default, at once, and the session shows amount_refunded_cents', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const session = await paidSession(key);
    expect(session.amount_refunded_cents).toBe(0);

    const made = await refunded(key, { checkout_session_id: session.id, reason: 'requested_by_customer', metadata: { ticket: 'T-1' } });
    expect(made).toEqual({
      id: expect.stringMatching(UUID),
      checkout_session_id: session.id,
      amount_cents: 5300,
      currency: 'USD',
      status: 'succeeded',
      reason: 'requested_by_customer',
      metadata: { ticket: 'T-1' },
      payment_intent_id: session.payment_intent_id,
      processor_refund_id: expect.stringMatching(/^re_sandbox_[0-9a-f]{32}$/),
      session_amount_total_cents: 5300,
      session_amount_refunded_cents: 5300,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(await getSession(platform, key, session.id)).toMatchObject({ status: 'complete', payment_status: 'paid', amount_total_cents: 5300, amount_refunded_cents: 5300 });
    const fetched = await call(platform.app, 'GET', `${REFUNDS}/${made.id}`, { key });
    expect(fetched.json().data).toEqual(made);

    const events = await recordedEvents(platform, tenant.id, 'payments.refund.created');
    expect(events).toHaveLength(1);
    expect(asJson(events[0]!.data.object)).toEqual(asJson(made));

    const again = expectError(await refund(key, { checkout_session_id: session.id }), 409, 'checkout_session_fully_refunded');
    expect(again.details[0]).toMatchObject({ path: 'checkout_session_id', code: 'fully_refunded', amount_refunded_cents: 5300 });
    const more = expectError(await refund(key, { checkout_session_id: session.id, amount_cents: 1 }), 400, 'validation_failed');
    expect(more.details[0]).toMatchObject({ path: 'amount_cents', code: 'out_of_range', maximum: 0 });
    expect(await recordedEvents(platform, tenant.id, 'payments.refund.created')).toHaveLength(1);
  });

  it('refunds in parts up to the amount paid, the last part being the default remainder', async () => {
    const key = await (await platform.newTenant()).key();
    const session = await paidSession(key);
    const first = await refunded(key, { checkout_session_id: session.id, amount_cents: 1000 });
    expect(first).toMatchObject({ amount_cents: 1000, reason: null, metadata: {}, session_amount_refunded_cents: 1000 });
    expect((await getSession(platform, key, session.id)).amount_refunded_cents).toBe(1000);

    const over = expectError(await refund(key, { checkout_session_id: session.id, amount_cents: 4301 }), 400, 'validation_failed');
    expect(over.details[0]).toMatchObject({ path: 'amount_cents', code: 'out_of_range', maximum: 4300 });
    const rest = await refunded(key, { checkout_session_id: session.id });
    expect(rest).toMatchObject({ amount_cents: 4300, session_amount_total_cents: 5300, session_amount_refunded_cents: 5300 });

    const list = await call(platform.app, 'GET', `${REFUNDS}?checkout_session_id=${session.id}`, { key });
    expect(list.json().data.map((row: { id: string }) => row.id)).toEqual([rest.id, first.id]);
    expect(list.json().meta).toMatchObject({ total: 2 });
  });

  it('refuses open and expired sessions with 409 checkout_session_not_paid, and unknown or foreign ones with 400', async () => {
    const key = await (await platform.newTenant()).key();
    const open = await createSession(platform, key);
    expect(expectError(await refund(key, { checkout_session_id: open.id }), 409, 'checkout_session_not_paid').details[0]).toMatchObject({
      path: 'checkout_session_id',
      code: 'not_paid',
      status: 'open',
    });
    const expiring = await createSession(platform, key);
    platform.clock.advance(DAY_MS + 1000);
    expect(expectError(await refund(key, { checkout_session_id: expiring.id }), 409, 'checkout_session_not_paid').details[0]).toMatchObject({ status: 'expired' });

    const unknown = expectError(await refund(key, { checkout_session_id: '00000000-0000-4000-8000-000000000000' }), 400, 'validation_failed');
    expect(unknown.details[0]).toMatchObject({ path: 'checkout_session_id', code: 'not_found' });
    const otherKey = await (await platform.newTenant()).key();
    const foreign = await paidSession(otherKey);
    expect(expectError(await refund(key, { checkout_session_id: foreign.id }), 400, 'validation_failed').details[0]).toMatchObject({ code: 'not_found' });
    const liveKey = await (await platform.newTenant()).key({ mode: 'live' });
    // A live key on a server without Stripe: refused before anything is looked up.
    expectError(await refund(liveKey, { checkout_session_id: foreign.id }), 503, 'live_payments_not_configured');
    expect((await getSession(platform, otherKey, foreign.id)).amount_refunded_cents).toBe(0);
  });

  it('answers bad input with 400 naming the field', async () => {
    const key = await (await platform.newTenant()).key();
    const session = await paidSession(key);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'checkout_session_id'],
      [{ checkout_session_id: 'not-a-uuid' }, 'checkout_session_id'],
      [{ checkout_session_id: session.id, amount_cents: 0 }, 'amount_cents'],
      [{ checkout_session_id: session.id, amount_cents: -5 }, 'amount_cents'],
      [{ checkout_session_id: session.id, amount_cents: 10.5 }, 'amount_cents'],
      [{ checkout_session_id: session.id, amount_cents: '100' }, 'amount_cents'],
      [{ checkout_session_id: session.id, reason: 'changed_mind' }, 'reason'],
      [{ checkout_session_id: session.id, surprise: true }, 'surprise'],
    ];
    for (const [body, path] of cases) {
      const error = expectError(await refund(key, body), 400, 'validation_failed');
      expect(JSON.stringify(error.details), JSON.stringify(body)).toContain(path);
    }
    expect((await getSession(platform, key, session.id)).amount_refunded_cents).toBe(0);

    const kwd = await paidSession(key, { amount_cents: 1500, description: 'Tea', currency: 'kwd', success_url: 'https://example.com/' });
    const fils = expectError(await refund(key, { checkout_session_id: kwd.id, amount_cents: 5 }), 400, 'validation_failed');
    expect(fils.details[0]).toMatchObject({ path: 'amount_cents', code: 'invalid_value' });
    expect(await refunded(key, { checkout_session_id: kwd.id, amount_cents: 500 })).toMatchObject({ amount_cents: 500, currency: 'KWD' });
  });

  it('never refunds more than was paid under concurrent requests', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const session = await paidSession(key);
    const replies = await Promise.all(Array.from({ length: 8 }, () => refund(key, { checkout_session_id: session.id, amount_cents: 1000 })));
    const statuses = replies.map((reply) => reply.statusCode).sort();
    expect(statuses).toEqual([201, 201, 201, 201, 201, 400, 400, 400]);
    for (const reply of replies) if (reply.statusCode === 400) expectError(reply, 400, 'validation_failed');
    expect((await getSession(platform, key, session.id)).amount_refunded_cents).toBe(5000);
    expect(await recordedEvents(platform, tenant.id, 'payments.refund.created')).toHaveLength(5);
    const totals = replies.filter((reply) => reply.statusCode === 201).map((reply) => reply.json().data.session_amount_refunded_cents);
    expect(totals.sort((a, b) => a - b)).toEqual([1000, 2000, 3000, 4000, 5000]);
  });

  it('replays a refund sent again with its Idempotency-Key, refunding once', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const session = await paidSession(key);
    const headers = { 'idempotency-key': 'refund-once' };
    const first = await refund(key, { checkout_session_id: session.id, amount_cents: 700 }, headers);
    const again = await refund(key, { checkout_session_id: session.id, amount_cents: 700 }, headers);
    expect(first.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect((await getSession(platform, key, session.id)).amount_refunded_cents).toBe(700);
    expect(await recordedEvents(platform, tenant.id, 'payments.refund.created')).toHaveLength(1);
  });

  it('lists refunds newest first with the standard page, filtered by session; unknown ids are 404', async () => {
    const key = await (await platform.newTenant()).key();
    const a = await paidSession(key);
    const b = await paidSession(key);
    const ra = await refunded(key, { checkout_session_id: a.id, amount_cents: 100 });
    platform.clock.advance(1000);
    const rb = await refunded(key, { checkout_session_id: b.id, amount_cents: 200 });
    const all = await call(platform.app, 'GET', `${REFUNDS}?limit=1`, { key });
    expect(all.json()).toMatchObject({ data: [{ id: rb.id }], meta: { total: 2, limit: 1, offset: 0 } });
    const second = await call(platform.app, 'GET', `${REFUNDS}?limit=1&offset=1`, { key });
    expect(second.json().data.map((row: { id: string }) => row.id)).toEqual([ra.id]);
    const filtered = await call(platform.app, 'GET', `${REFUNDS}?checkout_session_id=${a.id}`, { key });
    expect(filtered.json().data.map((row: { id: string }) => row.id)).toEqual([ra.id]);
    expectError(await call(platform.app, 'GET', `${REFUNDS}?checkout_session_id=nope`, { key }), 400, 'validation_failed');
    expectError(await call(platform.app, 'GET', `${REFUNDS}/00000000-0000-4000-8000-000000000000`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${REFUNDS}/12345`, { key }), 404, 'not_found');
    const otherKey = await (await platform.newTenant()).key();
    expectError(await call(platform.app, 'GET', `${REFUNDS}/${ra.id}`, { key: otherKey }), 404, 'not_found');
    expect((await call(platform.app, 'GET', REFUNDS, { key: otherKey })).json().meta.total).toBe(0);
  });
});

describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.payments.refunds.write',
  setup: (key) => paidSession(key),
  url: () => REFUNDS,
  body: (session: { id: string }) => ({ checkout_session_id: session.id, amount_cents: 100 }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.payments.refunds.read', url: () => REFUNDS, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.payments.refunds.read',
  setup: async (key) => refunded(key, { checkout_session_id: (await paidSession(key)).id, amount_cents: 100 }),
  url: (made: { id: string }) => `${REFUNDS}/${made.id}`,
  addressesOneRow: true,
});
