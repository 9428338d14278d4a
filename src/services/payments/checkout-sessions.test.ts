import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { addMilliseconds, DAY_MS, MINUTE_MS } from '../../lib/clock.js';
import * as repository from './repository.js';
import { BASE, createLink, createSession, getSession, paySession, SESSION_BODY } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const SESSIONS = `${BASE}/checkout-sessions`;

describe('creating a checkout session', () => {
  it('answers 201 with the session: exact total, upper-case currency, hosted url, 24 h expiry', async () => {
    const key = await (await platform.newTenant()).key();
    const session = await createSession(platform, key, { ...SESSION_BODY, customer_email: 'Ada@Example.COM', metadata: { order_id: '6735' } });
    expect(session).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      status: 'open',
      payment_status: 'unpaid',
      amount_total_cents: 5300,
      currency: 'USD',
      url: `${platform.config.publicBaseUrl}/checkout/${session.id}`,
      expires_at: expect.stringMatching(ISO),
      created_at: expect.stringMatching(ISO),
      line_items: [
        { name: 'Cotton T-shirt', unit_amount_cents: 2500, quantity: 2, amount_total_cents: 5000 },
        { name: 'Gift wrap', unit_amount_cents: 300, quantity: 1, amount_total_cents: 300 },
      ],
      description: null,
      success_url: 'https://shop.example.com/thanks',
      cancel_url: 'https://shop.example.com/cart',
      customer_email: 'ada@example.com',
      metadata: { order_id: '6735' },
      payment_link_id: null,
      completed_at: null,
      payment_intent_id: null,
      card_brand: null,
      card_last4: null,
      amount_refunded_cents: 0,
    });
    expect(Date.parse(session.expires_at) - Date.parse(session.created_at)).toBe(DAY_MS);
    expect(await getSession(platform, key, session.id)).toEqual(session);
  });

  it('takes amount_cents + description as one line of quantity 1', async () => {
    const key = await (await platform.newTenant()).key();
    const session = await createSession(platform, key, { amount_cents: 15000, description: ' Consulting, March ', currency: 'jpy', success_url: 'https://example.com/paid' });
    expect(session).toMatchObject({
      amount_total_cents: 15000,
      currency: 'JPY',
      description: 'Consulting, March',
      line_items: [{ name: 'Consulting, March', unit_amount_cents: 15000, quantity: 1, amount_total_cents: 15000 }],
      cancel_url: null,
      customer_email: null,
      metadata: {},
    });
  });

  it('sums the total exactly up to the 99,999,999 cap and refuses one unit more', async () => {
    const key = await (await platform.newTenant()).key();
    const atCap = await createSession(platform, key, { ...SESSION_BODY, line_items: [{ name: 'A', unit_amount_cents: 33_333_333, quantity: 3 }] });
    expect(atCap.amount_total_cents).toBe(99_999_999);
    const over = await call(platform.app, 'POST', SESSIONS, {
      key,
      body: {
        ...SESSION_BODY,
        line_items: [
          { name: 'A', unit_amount_cents: 33_333_333, quantity: 3 },
          { name: 'B', unit_amount_cents: 1, quantity: 1 },
        ],
      },
    });
    expect(expectError(over, 400, 'validation_failed').details[0]).toMatchObject({ path: 'line_items', code: 'out_of_range', maximum: 99_999_999 });
    const biggest = await call(platform.app, 'POST', SESSIONS, {
      key,
      body: { ...SESSION_BODY, line_items: [{ name: 'A', unit_amount_cents: 99_999_999, quantity: 10_000 }] },
    });
    expectError(biggest, 400, 'validation_failed');
  });

  it('needs exactly one way to state the amount', async () => {
    const key = await (await platform.newTenant()).key();
    const { line_items, ...noItems } = SESSION_BODY;
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [noItems, 'line_items', 'required'],
      [{ ...SESSION_BODY, amount_cents: 100, description: 'x' }, 'amount_cents', 'invalid'],
      [{ ...SESSION_BODY, description: 'x' }, 'description', 'invalid'],
      [{ ...noItems, amount_cents: 100 }, 'description', 'required'],
      [{ ...noItems, description: 'Consulting' }, 'amount_cents', 'required'],
    ];
    expect(line_items).toBeDefined();
    for (const [body, path, code] of cases) {
      const error = expectError(await call(platform.app, 'POST', SESSIONS, { key, body }), 400, 'validation_failed');
      expect(error.details[0], JSON.stringify(body)).toMatchObject({ path, code });
    }
  });

  it('accepts the {CHECKOUT_SESSION_ID} template in success_url', async () => {
    const key = await (await platform.newTenant()).key();
    const session = await createSession(platform, key, { ...SESSION_BODY, success_url: 'https://shop.example.com/thanks?session_id={CHECKOUT_SESSION_ID}' });
    expect(session.success_url).toBe('https://shop.example.com/thanks?session_id={CHECKOUT_SESSION_ID}');
  });

  it('refuses hostile and malformed input with 400, never 5xx', async () => {
    const key = await (await platform.newTenant()).key();
    const item = SESSION_BODY.line_items[0]!;
    const bodies: Array<Record<string, unknown>> = [
      { ...SESSION_BODY, currency: null },
      { ...SESSION_BODY, currency: 'ABC' },
      { ...SESSION_BODY, currency: 'dollars' },
      { ...SESSION_BODY, line_items: [] },
      { ...SESSION_BODY, line_items: null },
      { ...SESSION_BODY, line_items: 'many' },
      { ...SESSION_BODY, line_items: Array.from({ length: 101 }, () => ({ ...item, quantity: 1, unit_amount_cents: 1 })) },
      { ...SESSION_BODY, line_items: [{ ...item, quantity: 0 }] },
      { ...SESSION_BODY, line_items: [{ ...item, quantity: 10_001 }] },
      { ...SESSION_BODY, line_items: [{ ...item, quantity: 1.5 }] },
      { ...SESSION_BODY, line_items: [{ ...item, quantity: '2' }] },
      { ...SESSION_BODY, line_items: [{ ...item, unit_amount_cents: 0 }] },
      { ...SESSION_BODY, line_items: [{ ...item, unit_amount_cents: -5 }] },
      { ...SESSION_BODY, line_items: [{ ...item, unit_amount_cents: 100_000_000 }] },
      { ...SESSION_BODY, line_items: [{ ...item, unit_amount_cents: 12.5 }] },
      { ...SESSION_BODY, line_items: [{ ...item, unit_amount_cents: 'Infinity' }] },
      { ...SESSION_BODY, line_items: [{ ...item, name: '   ' }] },
      { ...SESSION_BODY, line_items: [{ ...item, name: 'x'.repeat(251) }] },
      { ...SESSION_BODY, line_items: [{ ...item, name: 'tab\there' }] },
      { ...SESSION_BODY, line_items: [{ ...item, price: 1 }] },
      { ...SESSION_BODY, success_url: 'ftp://example.com/x' },
      { ...SESSION_BODY, success_url: 'javascript:alert(1)' },
      { ...SESSION_BODY, success_url: '/relative/thanks' },
      { ...SESSION_BODY, success_url: 'https://user:secret@shop.example.com/' },
      { ...SESSION_BODY, success_url: `https://example.com/${'a'.repeat(2048)}` },
      { ...SESSION_BODY, success_url: null },
      { ...SESSION_BODY, success_url: undefined },
      { ...SESSION_BODY, cancel_url: 'http://' },
      { ...SESSION_BODY, cancel_url: 'https://exa mple.com/' },
      { ...SESSION_BODY, customer_email: 'not an email' },
      { ...SESSION_BODY, customer_email: 42 },
      { ...SESSION_BODY, metadata: null },
      { ...SESSION_BODY, metadata: ['a'] },
      { ...SESSION_BODY, metadata: { n: 1 } },
      { ...SESSION_BODY, metadata: { n: null } },
      { ...SESSION_BODY, metadata: { ['k'.repeat(41)]: 'v' } },
      { ...SESSION_BODY, metadata: { '': 'v' } },
      { ...SESSION_BODY, metadata: { k: 'v'.repeat(501) } },
      { ...SESSION_BODY, metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) },
      { ...SESSION_BODY, status: 'complete' },
      { ...SESSION_BODY, amount_cents: 100 },
    ];
    for (const body of bodies) {
      const response = await call(platform.app, 'POST', SESSIONS, { key, body });
      expect(response.statusCode, `${JSON.stringify(body).slice(0, 200)} -> ${response.body.slice(0, 200)}`).toBe(400);
      expectError(response, 400, 'validation_failed');
    }
    expectError(await call(platform.app, 'POST', SESSIONS, { key, body: '{"currency":' }), 400, 'invalid_json');
    expectError(await call(platform.app, 'POST', SESSIONS, { key, body: [] }), 400, 'validation_failed');
  });

  it('still refuses form-encoded bodies on the API with 415', async () => {
    const key = await (await platform.newTenant()).key();
    const response = await call(platform.app, 'POST', SESSIONS, { key, body: 'currency=usd&amount_cents=100', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectError(response, 415, 'unsupported_media_type');
  });

  it('replays a create sent twice with the same Idempotency-Key', async () => {
    const key = await (await platform.newTenant()).key();
    const headers = { 'idempotency-key': 'checkout-7c3b' };
    const first = await call(platform.app, 'POST', SESSIONS, { key, body: SESSION_BODY, headers });
    const second = await call(platform.app, 'POST', SESSIONS, { key, body: SESSION_BODY, headers });
    expect(first.statusCode).toBe(201);
    expect(second.json()).toEqual(first.json());
    expect((await call(platform.app, 'GET', SESSIONS, { key })).json().meta.total).toBe(1);
  });

  it('refuses live sessions and live links while live payments are not configured: 503', async () => {
    const tenant = await platform.newTenant();
    const liveKey = await tenant.key({ mode: 'live' });
    const error = expectError(await call(platform.app, 'POST', SESSIONS, { key: liveKey, body: SESSION_BODY }), 503, 'live_payments_not_configured');
    expect(error.message).toMatch(/STRIPE_SECRET_KEY/);
    expectError(
      await call(platform.app, 'POST', `${BASE}/payment-links`, { key: liveKey, body: { name: 'x', amount_cents: 100, description: 'x', currency: 'usd' } }),
      503,
      'live_payments_not_configured',
    );
    expect((await call(platform.app, 'GET', SESSIONS, { key: liveKey })).json().meta.total).toBe(0);
  });
});

describe('reading checkout sessions', () => {
  it('answers 404 for unknown and malformed ids', async () => {
    const key = await (await platform.newTenant()).key();
    for (const id of ['3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c', 'nope', '1', 'x'.repeat(400), "'; drop table x; --"]) {
      expectError(await call(platform.app, 'GET', `${SESSIONS}/${encodeURIComponent(id)}`, { key }), 404, 'not_found');
    }
  });

  it('lists newest first with status and payment_link_id filters', async () => {
    const key = await (await platform.newTenant()).key();
    const first = await createSession(platform, key);
    platform.clock.advance(5);
    const second = await createSession(platform, key);
    const link = await createLink(platform, key);
    const visit = await platform.app.inject({ method: 'GET', url: `/pay/${link.id}` });
    const fromLink = visit.headers.location!.split('/').pop()!;
    expect((await paySession(platform, second.id)).statusCode).toBe(303);

    const ids = async (query = '') => (await call(platform.app, 'GET', `${SESSIONS}${query}`, { key })).json().data.map((row: { id: string }) => row.id);
    expect(await ids()).toEqual([fromLink, second.id, first.id]);
    expect(await ids('?status=complete')).toEqual([second.id]);
    expect(await ids('?status=open')).toEqual([fromLink, first.id]);
    expect(await ids(`?payment_link_id=${link.id}`)).toEqual([fromLink]);
    const page = (await call(platform.app, 'GET', `${SESSIONS}?limit=1&offset=1`, { key })).json();
    expect(page.meta).toEqual({ limit: 1, offset: 1, total: 3, has_more: true });
    for (const query of ['status=paid', 'payment_link_id=nope', 'limit=0', 'limit=201', 'offset=-1', 'colour=red']) {
      expectError(await call(platform.app, 'GET', `${SESSIONS}?${query}`, { key }), 400, 'validation_failed');
    }
  });
});

describe('expiry', () => {
  it('shows an open session as expired once 24 h pass, and the job stores it', async () => {
    const key = await (await platform.newTenant()).key();
    const session = await createSession(platform, key);
    const paid = await createSession(platform, key);
    expect((await paySession(platform, paid.id)).statusCode).toBe(303);

    // Time stands still from here: a slow job run must not carry the session past its last second.
    platform.clock.freeze();
    onTestFinished(() => platform.clock.resume());
    platform.clock.advance(DAY_MS - 1000);
    await platform.runtime.jobs.runDue();
    expect((await getSession(platform, key, session.id)).status).toBe('open');

    platform.clock.advance(1000);
    // Computed on read before the job has run.
    expect((await getSession(platform, key, session.id)).status).toBe('expired');
    const expiredIds = (await call(platform.app, 'GET', `${SESSIONS}?status=expired`, { key })).json().data.map((row: { id: string }) => row.id);
    expect(expiredIds).toEqual([session.id]);

    await platform.runtime.jobs.runDue();
    const stored = await platform.database.db
      .selectFrom('payment_checkout_sessions' as never)
      .select(['id', 'status'] as never)
      .where('id' as never, 'in', [session.id, paid.id] as never)
      .execute();
    expect(Object.fromEntries((stored as Array<{ id: string; status: string }>).map((row) => [row.id, row.status]))).toEqual({
      [session.id]: 'expired',
      [paid.id]: 'complete',
    });
    expect(await getSession(platform, key, session.id)).toMatchObject({ status: 'expired', payment_status: 'unpaid', completed_at: null });
    expect((await getSession(platform, key, paid.id)).status).toBe('complete');
    // The page says so, and paying is refused.
    expect((await platform.app.inject({ method: 'GET', url: `/checkout/${session.id}` })).statusCode).toBe(410);
  });
});

describe('expiry during a payment attempt', () => {
  it('waits for a payment in flight at expiry time, then expires the session', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const session = await createSession(platform, key);
    const owner = { tenantId: tenant.id, mode: 'test' as const };
    const db = repository.paymentsDb(platform.database.db);
    // A payment attempt takes the session one minute before it expires and holds it for two.
    platform.clock.advance(DAY_MS - MINUTE_MS);
    const now = platform.clock.now();
    expect(await repository.claimSessionForPayment(db, owner, session.id, now, addMilliseconds(now, 2 * MINUTE_MS))).toBeDefined();

    platform.clock.advance(MINUTE_MS);
    await platform.runtime.jobs.runDue();
    expect((await repository.findSession(db, owner, session.id))!.status).toBe('open');

    platform.clock.advance(MINUTE_MS);
    await platform.runtime.jobs.runDue();
    expect((await repository.findSession(db, owner, session.id))!.status).toBe('expired');
  });
});

describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.payments.checkout.create',
  url: () => SESSIONS,
  body: () => SESSION_BODY,
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.payments.checkout.read', url: () => SESSIONS, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.payments.checkout.read',
  setup: (key) => createSession(platform, key),
  url: (session: { id: string }) => `${SESSIONS}/${session.id}`,
  addressesOneRow: true,
});
