import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS } from '../../lib/clock.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { BASE, fixtures, type CouponData, type SubscriptionData } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { newKey, createCoupon, getCoupon, productWithPrice, createContact, startSubscription, getSubscription, ok } = fixtures(() => platform);

function inFuture(ms: number): string {
  return new Date(platform.clock.now().getTime() + ms).toISOString();
}

async function subscriber(key: string) {
  const { product, price } = await productWithPrice(key);
  const contact = await createContact(key);
  return { product, price, contact, start: (body: Record<string, unknown> = {}) => startSubscription(key, { product_id: product.id, contact_id: contact.id, ...body }) };
}

describe('creating discount codes', () => {
  it('creates a percentage code, inferring discount_type, and reads it back', async () => {
    const key = await newKey();
    const coupon = await createCoupon(key, { code: ' Summer25 ', percent_off: 12.5, description: ' launch ' });
    expect(coupon).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      code: 'Summer25',
      description: 'launch',
      discount_type: 'percent',
      percent_off: 12.5,
      amount_off_cents: null,
      currency: null,
      max_redemptions: null,
      redeemed_count: 0,
      starts_at: null,
      expires_at: null,
      active: true,
      redeemable: true,
      created_at: expect.any(String),
      updated_at: coupon.created_at,
    });
    expect(await getCoupon(key, coupon.id)).toEqual(coupon);
  });

  it('creates an amount code with an upper-cased currency, limits and a window', async () => {
    const key = await newKey();
    const startsAt = inFuture(HOUR_MS);
    const expiresAt = inFuture(DAY_MS);
    const coupon = await createCoupon(key, {
      code: 'TENOFF',
      discount_type: 'amount',
      amount_off_cents: 1000,
      currency: 'eur',
      max_redemptions: 5,
      starts_at: startsAt,
      expires_at: expiresAt,
    });
    expect(coupon).toMatchObject({
      discount_type: 'amount',
      percent_off: null,
      amount_off_cents: 1000,
      currency: 'EUR',
      max_redemptions: 5,
      starts_at: startsAt,
      expires_at: expiresAt,
      redeemable: false, // not started yet
    });
  });

  it('refuses a code already used in the tenant and mode, whatever its case, with 409 coupon_code_taken', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const first = await createCoupon(key, { code: 'WELCOME', percent_off: 10 });
    const error = expectError(await call(platform.app, 'POST', `${BASE}/coupons`, { key, body: { code: 'welcome', percent_off: 20 } }), 409, 'coupon_code_taken');
    expect(error.details[0]).toMatchObject({ path: 'code', code: 'already_exists', coupon_id: first.id });
    // Another tenant, or the live mode of the same tenant, has its own codes.
    await createCoupon(await newKey(), { code: 'WELCOME', percent_off: 10 });
    await createCoupon(await tenant.key({ mode: 'live' }), { code: 'welcome', percent_off: 10 });
  });

  it('lets exactly one of two concurrent creates of the same code win', async () => {
    const key = await newKey();
    const replies = await Promise.all(['RACE', 'race'].map((code) => call(platform.app, 'POST', `${BASE}/coupons`, { key, body: { code, percent_off: 5 } })));
    expect(replies.map((reply) => reply.statusCode).sort()).toEqual([201, 409]);
    expect((await call(platform.app, 'GET', `${BASE}/coupons?code=Race`, { key })).json().meta.total).toBe(1);
  });

  it('refuses bad input with 400 validation_failed naming the field', async () => {
    const key = await newKey();
    const cases: Array<[Record<string, unknown>, string | undefined]> = [
      [{ code: 'A' }, 'percent_off'],
      [{ code: 'A', discount_type: 'amount' }, 'amount_off_cents'],
      [{ code: 'A', percent_off: 10, amount_off_cents: 100, currency: 'usd' }, 'amount_off_cents'],
      [{ code: 'A', discount_type: 'amount', percent_off: 10 }, 'discount_type'],
      [{ code: 'A', discount_type: 'percent', amount_off_cents: 100, currency: 'usd' }, 'discount_type'],
      [{ code: 'A', amount_off_cents: 100 }, 'currency'],
      [{ code: 'A', percent_off: 10, currency: 'usd' }, 'currency'],
      [{ code: 'A', percent_off: 10.125 }, 'percent_off'],
      [{ code: 'A', percent_off: 0 }, undefined],
      [{ code: 'A', percent_off: 100.01 }, undefined],
      [{ code: 'A', percent_off: '10' }, undefined],
      [{ code: 'A', percent_off: null }, undefined],
      [{ code: 'A', amount_off_cents: 0, currency: 'usd' }, undefined],
      [{ code: 'A', amount_off_cents: 1.5, currency: 'usd' }, undefined],
      [{ code: 'A', amount_off_cents: 100, currency: 'ZZZ' }, undefined],
      [{ code: 'A', discount_type: 'fixed', percent_off: 10 }, undefined],
      [{ code: '', percent_off: 10 }, undefined],
      [{ code: '   ', percent_off: 10 }, undefined],
      [{ code: 'TWO WORDS', percent_off: 10 }, undefined],
      [{ code: 'x'.repeat(65), percent_off: 10 }, undefined],
      [{ code: null, percent_off: 10 }, undefined],
      [{ code: 'A', percent_off: 10, max_redemptions: 0 }, undefined],
      [{ code: 'A', percent_off: 10, max_redemptions: 2.5 }, undefined],
      [{ code: 'A', percent_off: 10, expires_at: 'tomorrow' }, undefined],
      [{ code: 'A', percent_off: 10, expires_at: '2001-01-01T00:00:00.000Z' }, 'expires_at'],
      [{ code: 'A', percent_off: 10, starts_at: inFuture(2 * DAY_MS), expires_at: inFuture(DAY_MS) }, 'expires_at'],
      [{ code: 'A', percent_off: 10, redeemed_count: 3 }, undefined],
      [{ code: 'A', percent_off: 10, redeemable: true }, undefined],
    ];
    for (const [body, path] of cases) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/coupons`, { key, body }), 400, 'validation_failed');
      if (path) expect(error.details[0]?.path, JSON.stringify(body)).toBe(path);
    }
    expect((await call(platform.app, 'GET', `${BASE}/coupons`, { key })).json().meta.total).toBe(0);
  });
});

describe('reading, listing and updating codes', () => {
  it('lists newest first with filters on active and code', async () => {
    const key = await newKey();
    const a = await createCoupon(key, { code: 'ALPHA', percent_off: 10 });
    const b = await createCoupon(key, { code: 'beta', percent_off: 20, active: false });
    const ids = async (query: string) => (await call(platform.app, 'GET', `${BASE}/coupons?${query}`, { key })).json().data.map((c: CouponData) => c.id);
    expect(await ids('')).toEqual([b.id, a.id]);
    expect(await ids('active=true')).toEqual([a.id]);
    expect(await ids('active=false')).toEqual([b.id]);
    expect(await ids('code=BETA')).toEqual([b.id]);
    expect(await ids('code=%25')).toEqual([]);
    for (const query of ['active=1', 'code=', `code=${'x'.repeat(81)}`, 'redeemable=true']) {
      expectError(await call(platform.app, 'GET', `${BASE}/coupons?${query}`, { key }), 400, 'validation_failed');
    }
  });

  it('updates the editable fields only, never below the redemptions made, guarded by expected_updated_at', async () => {
    const key = await newKey();
    const { start } = await subscriber(key);
    const coupon = await createCoupon(key, { code: 'EDIT', percent_off: 10, max_redemptions: 5 });
    expect((await start({ coupon_code: 'edit' })).statusCode).toBe(201);
    expect((await start({ coupon_code: 'EDIT' })).statusCode).toBe(201);
    const current = await getCoupon(key, coupon.id);
    expect(current.redeemed_count).toBe(2);
    expect(Date.parse(current.updated_at)).toBeGreaterThan(Date.parse(coupon.updated_at));

    const expiresAt = inFuture(7 * DAY_MS);
    const updated = await ok<CouponData>('PATCH', `${BASE}/coupons/${coupon.id}`, key, {
      description: 'Spring',
      max_redemptions: 2,
      expires_at: expiresAt,
      expected_updated_at: current.updated_at,
    });
    expect(updated).toMatchObject({ description: 'Spring', max_redemptions: 2, expires_at: expiresAt, redeemed_count: 2, active: true, redeemable: false });

    const tooLow = expectError(await call(platform.app, 'PATCH', `${BASE}/coupons/${coupon.id}`, { key, body: { max_redemptions: 1 } }), 400, 'validation_failed');
    expect(tooLow.details[0]).toMatchObject({ path: 'max_redemptions', code: 'out_of_range', redeemed_count: 2 });
    expectError(
      await call(platform.app, 'PATCH', `${BASE}/coupons/${coupon.id}`, { key, body: { description: 'x', expected_updated_at: current.updated_at } }),
      409,
      'stale_update',
    );
    for (const body of [
      { code: 'NEW' },
      { percent_off: 50 },
      { amount_off_cents: 100 },
      { redeemed_count: 0 },
      { active: null },
      { expires_at: '2001-01-01T00:00:00.000Z' },
      { starts_at: inFuture(8 * DAY_MS) },
    ]) {
      expectError(await call(platform.app, 'PATCH', `${BASE}/coupons/${coupon.id}`, { key, body }), 400, 'validation_failed');
    }
    const unlimited = await ok<CouponData>('PATCH', `${BASE}/coupons/${coupon.id}`, key, { max_redemptions: null, expires_at: null });
    expect(unlimited).toMatchObject({ max_redemptions: null, expires_at: null, redeemable: true });
  });

  it('answers unknown, malformed and foreign coupon ids with 404', async () => {
    const key = await newKey();
    const coupon = await createCoupon(key, { code: 'MINE', percent_off: 10 });
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000']) {
      expectError(await call(platform.app, 'GET', `${BASE}/coupons/${id}`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'PATCH', `${BASE}/coupons/${id}`, { key, body: { description: 'x' } }), 404, 'not_found');
      expectError(await call(platform.app, 'POST', `${BASE}/coupons/${id}/retire`, { key }), 404, 'not_found');
    }
    expectError(await call(platform.app, 'POST', `${BASE}/coupons/${coupon.id}/retire`, { key: await newKey() }), 404, 'not_found');
  });
});

describe('retiring a code (spec state table)', () => {
  it('active -> active false, redeemable false; subscriptions already using it keep their discount', async () => {
    const key = await newKey();
    const { start } = await subscriber(key);
    const coupon = await createCoupon(key, { code: 'RETIRE', percent_off: 25 });
    const started = await start({ coupon_code: 'retire' });
    expect(started.statusCode, started.body).toBe(201);
    const subscription = started.json().data as SubscriptionData;
    expect(subscription).toMatchObject({
      coupon_id: coupon.id,
      coupon_code: 'RETIRE',
      discount: { discount_type: 'percent', percent_off: 25, amount_off_cents: null, currency: null },
      unit_price_cents: 2900,
    });

    platform.clock.advance(5);
    const retired = await ok<CouponData>('POST', `${BASE}/coupons/${coupon.id}/retire`, key);
    expect(retired).toMatchObject({ id: coupon.id, active: false, redeemable: false, redeemed_count: 1 });
    expect(Date.parse(retired.updated_at)).toBeGreaterThan(Date.parse(coupon.updated_at));
    const kept = await getSubscription(key, subscription.id);
    expect(kept).toMatchObject({ coupon_id: coupon.id, coupon_code: 'RETIRE', discount: subscription.discount, unit_price_cents: 2900, quantity: 1 });

    // Retiring again is harmless: 200 with the code unchanged. An empty JSON body is accepted too.
    const again = await call(platform.app, 'POST', `${BASE}/coupons/${coupon.id}/retire`, { key, body: {} });
    expect(again.statusCode).toBe(200);
    expect(again.json().data).toEqual(retired);
    expectError(await call(platform.app, 'POST', `${BASE}/coupons/${coupon.id}/retire`, { key, body: { now: true } }), 400, 'validation_failed');

    const refused = expectError(await start({ coupon_code: 'RETIRE' }), 400, 'coupon_not_redeemable');
    expect(refused.details[0]).toMatchObject({ path: 'coupon_code', code: 'inactive', coupon_id: coupon.id });
  });
});

describe('redeeming a code when starting a subscription (spec state table)', () => {
  it('applies a redeemable code and counts the redemption', async () => {
    const key = await newKey();
    const { start } = await subscriber(key);
    const coupon = await createCoupon(key, { code: 'USD5', amount_off_cents: 500, currency: 'USD', max_redemptions: 2 });
    const reply = await start({ coupon_code: '  usd5 ', quantity: 2 });
    expect(reply.statusCode, reply.body).toBe(201);
    expect(reply.json().data).toMatchObject({
      coupon_id: coupon.id,
      coupon_code: 'USD5',
      discount: { discount_type: 'amount', amount_off_cents: 500, currency: 'USD', percent_off: null },
    });
    expect(await getCoupon(key, coupon.id)).toMatchObject({ redeemed_count: 1, redeemable: true });
  });

  it('gives 400 coupon_not_redeemable for a code switched off, not started, expired or used up, and starts nothing', async () => {
    const key = await newKey();
    const { start, contact } = await subscriber(key);
    const off = await createCoupon(key, { code: 'OFF', percent_off: 10, active: false });
    const later = await createCoupon(key, { code: 'LATER', percent_off: 10, starts_at: inFuture(DAY_MS) });
    const soon = await createCoupon(key, { code: 'SOON', percent_off: 10, expires_at: inFuture(HOUR_MS) });
    const once = await createCoupon(key, { code: 'ONCE', percent_off: 10, max_redemptions: 1 });
    expect((await start({ coupon_code: 'ONCE' })).statusCode).toBe(201);
    platform.clock.advance(HOUR_MS); // SOON's expires_at has passed (it is the first instant the code is no longer valid)

    for (const [coupon, reason] of [
      [off, 'inactive'],
      [later, 'not_started'],
      [soon, 'expired'],
      [once, 'exhausted'],
    ] as const) {
      expect((await getCoupon(key, coupon.id)).redeemable).toBe(false);
      const error = expectError(await start({ coupon_code: coupon.code }), 400, 'coupon_not_redeemable');
      expect(error.details[0]).toMatchObject({ path: 'coupon_code', code: reason, coupon_id: coupon.id });
      expect(error.message).toContain(coupon.code);
    }
    const list = await call(platform.app, 'GET', `${BASE}/subscriptions?contact_id=${contact.id}`, { key });
    expect(list.json().meta.total).toBe(1);
    expect((await getCoupon(key, once.id)).redeemed_count).toBe(1);

    // A code that has started is redeemable from its starts_at on.
    platform.clock.advance(DAY_MS);
    expect((await getCoupon(key, later.id)).redeemable).toBe(true);
    expect((await start({ coupon_code: 'later' })).statusCode).toBe(201);
  });

  it('refuses an unknown code (400 not_found) and an amount code in another currency (400 currency_mismatch)', async () => {
    const key = await newKey();
    const { start } = await subscriber(key);
    const euros = await createCoupon(key, { code: 'EUR5', amount_off_cents: 500, currency: 'EUR' });
    const unknown = expectError(await start({ coupon_code: 'NOPE' }), 400, 'validation_failed');
    expect(unknown.details[0]).toMatchObject({ path: 'coupon_code', code: 'not_found' });
    const foreign = await createCoupon(await newKey(), { code: 'THEIRS', percent_off: 50 });
    expect(expectError(await start({ coupon_code: foreign.code }), 400, 'validation_failed').details[0]).toMatchObject({ code: 'not_found' });
    const mismatch = expectError(await start({ coupon_code: 'eur5' }), 400, 'coupon_not_redeemable');
    expect(mismatch.details[0]).toMatchObject({ path: 'coupon_code', code: 'currency_mismatch' });
    expect((await getCoupon(key, euros.id)).redeemed_count).toBe(0);
    for (const coupon_code of ['', 'x'.repeat(81), null, 5]) {
      expectError(await start({ coupon_code }), 400, 'validation_failed');
    }
  });

  it('with max_redemptions 1, two concurrent starts give one 201 and one 400', async () => {
    const key = await newKey();
    const { start } = await subscriber(key);
    const coupon = await createCoupon(key, { code: 'LASTONE', percent_off: 50, max_redemptions: 1 });
    const replies = await Promise.all([start({ coupon_code: 'LASTONE' }), start({ coupon_code: 'lastone' })]);
    expect(replies.map((reply) => reply.statusCode).sort()).toEqual([201, 400]);
    const refused = replies.find((reply) => reply.statusCode === 400)!;
    expect(expectError(refused, 400, 'coupon_not_redeemable').details[0]).toMatchObject({ code: 'exhausted' });
    expect(await getCoupon(key, coupon.id)).toMatchObject({ redeemed_count: 1, redeemable: false });
  });

  it('with max_redemptions 3, ten concurrent starts create exactly three subscriptions', async () => {
    const key = await newKey();
    const { start, contact } = await subscriber(key);
    const coupon = await createCoupon(key, { code: 'THREE', percent_off: 50, max_redemptions: 3 });
    const replies = await Promise.all(Array.from({ length: 10 }, () => start({ coupon_code: 'THREE' })));
    expect(replies.filter((reply) => reply.statusCode === 201)).toHaveLength(3);
    expect(replies.filter((reply) => reply.statusCode === 400)).toHaveLength(7);
    expect((await getCoupon(key, coupon.id)).redeemed_count).toBe(3);
    expect((await call(platform.app, 'GET', `${BASE}/subscriptions?contact_id=${contact.id}`, { key })).json().meta.total).toBe(3);
  });
});

describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.catalog.manage',
  url: () => `${BASE}/coupons`,
  body: () => ({ code: `C${Date.now()}${Math.random().toString(36).slice(2, 8)}`, percent_off: 10 }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.catalog.view', url: () => `${BASE}/coupons`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.catalog.view',
  setup: (key) => createCoupon(key, { code: 'SEC', percent_off: 10 }),
  url: (coupon: CouponData) => `${BASE}/coupons/${coupon.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.catalog.manage',
  setup: (key) => createCoupon(key, { code: 'SEC', percent_off: 10 }),
  url: (coupon: CouponData) => `${BASE}/coupons/${coupon.id}`,
  body: () => ({ description: 'edited' }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.catalog.manage',
  setup: (key) => createCoupon(key, { code: 'SEC', percent_off: 10 }),
  url: (coupon: CouponData) => `${BASE}/coupons/${coupon.id}/retire`,
  addressesOneRow: true,
});
