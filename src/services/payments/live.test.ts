import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { FakeStripe } from '../../../test/fakes/fake-stripe.js';
import { asJson, recordedEvents } from '../../../test/recorded-events.js';
import { BASE, createLink, createSession, DECLINED_CARD, getLink, getSession, LINK_BODY, openPage, paySession } from './test-helpers.js';

/** Live mode with STRIPE_SECRET_KEY set, against a fake Stripe on 127.0.0.1 (never the network). */
const fake = new FakeStripe('sk_live_fakeSecret123');
let platform: TestPlatform;
beforeAll(async () => {
  const stripeBase = await fake.start();
  platform = await startTestPlatform({ env: { STRIPE_SECRET_KEY: fake.secretKey, STRIPE_API_BASE: stripeBase } });
});
afterAll(async () => {
  await platform.close();
  await fake.stop();
});

describe('live payments through the Stripe adapter', () => {
  it('creates a live session and pays it through Stripe', async () => {
    const tenant = await platform.newTenant('Acme Live');
    const liveKey = await tenant.key({ mode: 'live' });
    const session = await createSession(platform, liveKey);
    const page = await openPage(platform, `/checkout/${session.id}`);
    expect(page.response.statusCode).toBe(200);
    expect(page.html).not.toContain('Test mode.');
    const before = fake.requests.length;

    const response = await paySession(platform, session.id);
    expect(response.statusCode).toBe(303);
    const sent = fake.requests.slice(before);
    expect(sent.map((request) => request.path)).toEqual(['/v1/payment_intents', expect.stringMatching(/^\/v1\/payment_intents\/pi_fake_\d+\/confirm$/)]);
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${fake.secretKey}`);
    expect(sent[0]!.form.get('amount')).toBe('5300');
    expect(sent[0]!.form.get('currency')).toBe('usd');
    expect(sent[0]!.form.get('metadata[checkout_session_id]')).toBe(session.id);
    expect(sent[1]!.form.get('payment_method_data[card][number]')).toBe('4242424242424242');

    expect(await getSession(platform, liveKey, session.id)).toMatchObject({
      status: 'complete',
      payment_status: 'paid',
      payment_intent_id: sent[1]!.path.split('/')[3],
      card_last4: '4242',
    });
    const events = await recordedEvents(platform, tenant.id, 'payments.checkout_session.completed', 'live');
    expect(events.map((event) => event.livemode)).toEqual([true]);
    expect(asJson(events[0]!.data.object)).toEqual(asJson(await getSession(platform, liveKey, session.id)));
  });

  it("shows Stripe's decline message and reuses the payment intent on the next attempt", async () => {
    const liveKey = await (await platform.newTenant()).key({ mode: 'live' });
    const session = await createSession(platform, liveKey);
    const declined = await paySession(platform, session.id, DECLINED_CARD);
    expect(declined.statusCode).toBe(402);
    expect(declined.body).toContain('Your card was declined.');
    const afterDecline = await getSession(platform, liveKey, session.id);
    expect(afterDecline).toMatchObject({ status: 'open', payment_status: 'unpaid', payment_intent_id: expect.stringMatching(/^pi_fake_/) });

    const before = fake.requests.length;
    expect((await paySession(platform, session.id)).statusCode).toBe(303);
    expect(fake.requests.slice(before).map((request) => request.path)).toEqual([`/v1/payment_intents/${afterDecline.payment_intent_id}/confirm`]);
  });

  it('keeps the session open and payable when Stripe fails, and says so on the page', async () => {
    const liveKey = await (await platform.newTenant()).key({ mode: 'live' });
    const link = await createLink(platform, liveKey, { ...LINK_BODY, max_uses: 1 });
    const sessionId = (await platform.app.inject({ method: 'GET', url: `/pay/${link.id}` })).headers.location!.replace('/checkout/', '');
    fake.failNext = 500;
    const failed = await paySession(platform, sessionId);
    expect(failed.statusCode).toBe(502);
    expect(failed.body).toContain('could not be completed just now');
    expect((await getSession(platform, liveKey, sessionId)).status).toBe('open');
    expect((await getLink(platform, liveKey, link.id)).use_count).toBe(0);
    expect((await paySession(platform, sessionId)).statusCode).toBe(303);
    expect((await getLink(platform, liveKey, link.id)).use_count).toBe(1);
  });

  it('sends ISK to Stripe in its two-decimal units: 1500 kronur as 150000', async () => {
    const liveKey = await (await platform.newTenant()).key({ mode: 'live' });
    const session = await createSession(platform, liveKey, { amount_cents: 1500, description: 'Hot dog', currency: 'isk', success_url: 'https://example.com/' });
    expect(session).toMatchObject({ amount_total_cents: 1500, currency: 'ISK' });
    const before = fake.requests.length;
    expect((await paySession(platform, session.id)).statusCode).toBe(303);
    expect(fake.requests[before]!.form.get('amount')).toBe('150000');
  });

  it('keeps test-mode sessions in the sandbox even when Stripe is configured', async () => {
    const testKey = await (await platform.newTenant()).key();
    const session = await createSession(platform, testKey);
    const before = fake.requests.length;
    expect((await paySession(platform, session.id)).statusCode).toBe(303);
    expect(fake.requests.length).toBe(before);
    expect((await getSession(platform, testKey, session.id)).payment_intent_id).toMatch(/^pi_sandbox_/);
  });

  it('refunds a live session through Stripe’s refunds API, with the payment intent stored when it was paid', async () => {
    const tenant = await platform.newTenant();
    const liveKey = await tenant.key({ mode: 'live' });
    const session = await createSession(platform, liveKey);
    expect((await paySession(platform, session.id)).statusCode).toBe(303);
    const paid = await getSession(platform, liveKey, session.id);
    expect(paid.payment_intent_id).toMatch(/^pi_fake_/);

    const before = fake.requests.length;
    const partial = await call(platform.app, 'POST', `${BASE}/refunds`, {
      key: liveKey,
      body: { checkout_session_id: session.id, amount_cents: 1300, reason: 'duplicate', metadata: { ticket: 'T-9' } },
    });
    expect(partial.statusCode, partial.body).toBe(201);
    const sent = fake.requests.slice(before);
    expect(sent.map((request) => request.path)).toEqual(['/v1/refunds']);
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${fake.secretKey}`);
    expect(Object.fromEntries(sent[0]!.form)).toEqual({
      payment_intent: paid.payment_intent_id,
      amount: '1300',
      reason: 'duplicate',
      'metadata[checkout_session_id]': session.id,
      'metadata[ticket]': 'T-9',
    });
    expect(sent[0]!.headers['idempotency-key']).toBe(`checkout-session-${session.id}-refund-0-1300`);
    expect(partial.json().data).toMatchObject({
      status: 'succeeded',
      amount_cents: 1300,
      processor_refund_id: expect.stringMatching(/^re_fake_/),
      payment_intent_id: paid.payment_intent_id,
    });

    fake.refundStatus = 'pending';
    try {
      const rest = await call(platform.app, 'POST', `${BASE}/refunds`, { key: liveKey, body: { checkout_session_id: session.id } });
      expect(rest.json().data).toMatchObject({ status: 'pending', amount_cents: 4000, session_amount_refunded_cents: 5300 });
    } finally {
      fake.refundStatus = 'succeeded';
    }
    expect((await getSession(platform, liveKey, session.id)).amount_refunded_cents).toBe(5300);
    const events = await recordedEvents(platform, tenant.id, 'payments.refund.created', 'live');
    expect(events.map((event) => [event.livemode, event.data.object.status])).toEqual([
      [true, 'pending'],
      [true, 'succeeded'],
    ]);
  });

  it('records nothing when Stripe fails a refund: 502 payment_processor_error, and the refund can be tried again', async () => {
    const tenant = await platform.newTenant();
    const liveKey = await tenant.key({ mode: 'live' });
    const session = await createSession(platform, liveKey);
    expect((await paySession(platform, session.id)).statusCode).toBe(303);
    fake.failNext = 500;
    expectError(await call(platform.app, 'POST', `${BASE}/refunds`, { key: liveKey, body: { checkout_session_id: session.id } }), 502, 'payment_processor_error');
    expect((await getSession(platform, liveKey, session.id)).amount_refunded_cents).toBe(0);
    expect(await recordedEvents(platform, tenant.id, 'payments.refund.created', 'live')).toEqual([]);

    const done = await call(platform.app, 'POST', `${BASE}/refunds`, { key: liveKey, body: { checkout_session_id: session.id } });
    expect(done.statusCode, done.body).toBe(201);
    expect((await getSession(platform, liveKey, session.id)).amount_refunded_cents).toBe(5300);
    expect(await recordedEvents(platform, tenant.id, 'payments.refund.created', 'live')).toHaveLength(1);
  });
});
