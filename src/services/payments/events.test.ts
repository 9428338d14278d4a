import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { asJson, recordedEvents } from '../../../test/recorded-events.js';
import { addMilliseconds, DAY_MS, MINUTE_MS } from '../../lib/clock.js';
import * as repository from './repository.js';
import { BASE, createSession, DECLINED_CARD, getSession, GOOD_CARD, openPage, paySession, postForm } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const COMPLETED = 'payments.checkout_session.completed';
const EXPIRED = 'payments.checkout_session.expired';
const REFUNDED = 'payments.refund.created';

async function newTenant() {
  const tenant = await platform.newTenant();
  return { tenantId: tenant.id, key: await tenant.key() };
}

describe('payments.checkout_session.completed', () => {
  it('is recorded once when the hosted page pays the session, carrying the session as GET shows it', async () => {
    const { tenantId, key } = await newTenant();
    const session = await createSession(platform, key);
    expect((await paySession(platform, session.id)).statusCode).toBe(303);

    const events = await recordedEvents(platform, tenantId, COMPLETED);
    expect(events).toHaveLength(1);
    expect(events[0]!.livemode).toBe(false);
    expect(asJson(events[0]!.data.object)).toEqual(asJson(await getSession(platform, key, session.id)));
    expect(events[0]!.data.object).toMatchObject({ id: session.id, status: 'complete', payment_status: 'paid', card_last4: '4242' });
  });

  it('is not recorded for a declined card or an invalid card form', async () => {
    const { tenantId, key } = await newTenant();
    const session = await createSession(platform, key);
    expect((await paySession(platform, session.id, DECLINED_CARD)).statusCode).toBe(402);
    expect((await paySession(platform, session.id, { ...GOOD_CARD, card_number: '4242 4242 4242 4241' })).statusCode).toBe(400);
    expect(await recordedEvents(platform, tenantId, COMPLETED)).toEqual([]);
    expect((await getSession(platform, key, session.id)).status).toBe('open');
  });

  it('is recorded once when the form is submitted twice at the same time and once more later', async () => {
    const { tenantId, key } = await newTenant();
    const session = await createSession(platform, key);
    const { token } = await openPage(platform, `/checkout/${session.id}`);
    const form = { ...GOOD_CARD, csrf_token: token! };
    await Promise.all([postForm(platform, `/checkout/${session.id}`, form), postForm(platform, `/checkout/${session.id}`, form)]);
    expect((await postForm(platform, `/checkout/${session.id}`, form)).statusCode).toBe(303);

    const events = await recordedEvents(platform, tenantId, COMPLETED);
    expect(events).toHaveLength(1);
    expect(asJson(events[0]!.data.object)).toEqual(asJson(await getSession(platform, key, session.id)));
  });
});

describe('payments.checkout_session.expired', () => {
  it('is recorded once by the expiry job, and not for a session paid in time', async () => {
    const { tenantId, key } = await newTenant();
    const session = await createSession(platform, key);
    const paid = await createSession(platform, key);
    expect((await paySession(platform, paid.id)).statusCode).toBe(303);

    platform.clock.advance(DAY_MS - 1000);
    await platform.runtime.jobs.runDue();
    expect(await recordedEvents(platform, tenantId, EXPIRED)).toEqual([]);

    platform.clock.advance(1000);
    await platform.runtime.jobs.runDue();
    const events = await recordedEvents(platform, tenantId, EXPIRED);
    expect(events).toHaveLength(1);
    expect(events[0]!.livemode).toBe(false);
    expect(asJson(events[0]!.data.object)).toEqual(asJson(await getSession(platform, key, session.id)));
    expect(events[0]!.data.object).toMatchObject({ id: session.id, status: 'expired', payment_status: 'unpaid' });

    platform.clock.advance(DAY_MS);
    await platform.runtime.jobs.runDue();
    expect(await recordedEvents(platform, tenantId, EXPIRED)).toHaveLength(1);
    // The paid session's expiry job matched no open session: nothing was recorded for it.
    expect(await recordedEvents(platform, tenantId, COMPLETED)).toHaveLength(1);
  });

  it('is not recorded while a payment attempt holds the session, only once it is expired after the hold', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const session = await createSession(platform, key);
    const owner = { tenantId: tenant.id, mode: 'test' as const };
    const db = repository.paymentsDb(platform.database.db);
    platform.clock.advance(DAY_MS - MINUTE_MS);
    const now = platform.clock.now();
    expect(await repository.claimSessionForPayment(db, owner, session.id, now, addMilliseconds(now, 2 * MINUTE_MS))).toBeDefined();

    platform.clock.advance(MINUTE_MS);
    await platform.runtime.jobs.runDue();
    expect(await recordedEvents(platform, tenant.id, EXPIRED)).toEqual([]);

    platform.clock.advance(MINUTE_MS);
    await platform.runtime.jobs.runDue();
    const events = await recordedEvents(platform, tenant.id, EXPIRED);
    expect(events).toHaveLength(1);
    expect(asJson(events[0]!.data.object)).toEqual(asJson(await getSession(platform, key, session.id)));
  });
});

describe('payments.refund.created', () => {
  it('is recorded once per refund, carrying the refund as GET shows it, and not for a refused refund', async () => {
    const { tenantId, key } = await newTenant();
    const session = await createSession(platform, key);
    expectError(await call(platform.app, 'POST', `${BASE}/refunds`, { key, body: { checkout_session_id: session.id } }), 409, 'checkout_session_not_paid');
    expect((await paySession(platform, session.id)).statusCode).toBe(303);
    const partial = await call(platform.app, 'POST', `${BASE}/refunds`, { key, body: { checkout_session_id: session.id, amount_cents: 300 } });
    const rest = await call(platform.app, 'POST', `${BASE}/refunds`, { key, body: { checkout_session_id: session.id } });
    expectError(await call(platform.app, 'POST', `${BASE}/refunds`, { key, body: { checkout_session_id: session.id } }), 409, 'checkout_session_fully_refunded');

    const events = await recordedEvents(platform, tenantId, REFUNDED);
    expect(events.map((event) => event.data.object.id)).toEqual([rest.json().data.id, partial.json().data.id]);
    for (const event of events) {
      expect(event.livemode).toBe(false);
      const fetched = await call(platform.app, 'GET', `${BASE}/refunds/${String(event.data.object.id)}`, { key });
      expect(asJson(event.data.object)).toEqual(asJson(fetched.json().data));
    }
    expect(events[0]!.data.object).toMatchObject({
      checkout_session_id: session.id,
      amount_cents: 5000,
      currency: 'USD',
      status: 'succeeded',
      session_amount_refunded_cents: 5300,
    });
    expect(events[1]!.data.object).toMatchObject({ amount_cents: 300, session_amount_total_cents: 5300, session_amount_refunded_cents: 300 });
  });
});
