import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { BASE, fixtures } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { newKey, createProduct, addPrice, createCoupon, productWithPrice, createContact, startSubscription } = fixtures(() => platform);

describe('_cents fields in ISO 4217 minor units', () => {
  it('counts a JPY price and a JPY coupon in whole yen, through to the subscription', async () => {
    const key = await newKey();
    const { product, price } = await productWithPrice(key, {}, { unit_price_cents: 1500, currency: 'jpy' });
    expect(price).toMatchObject({ unit_price_cents: 1500, currency: 'JPY' });
    const coupon = await createCoupon(key, { code: 'YEN300', amount_off_cents: 300, currency: 'JPY' });
    expect(coupon).toMatchObject({ discount_type: 'amount', amount_off_cents: 300, currency: 'JPY' });
    const contact = await createContact(key);
    const started = await startSubscription(key, { product_id: product.id, contact_id: contact.id, coupon_code: 'YEN300' });
    expect(started.statusCode, started.body).toBe(201);
    expect(started.json().data).toMatchObject({ unit_price_cents: 1500, currency: 'JPY', discount: { amount_off_cents: 300, currency: 'JPY' } });
  });

  it('refuses a JPY price with decimals (a _cents field is a whole number of yen)', async () => {
    const key = await newKey();
    const product = await createProduct(key);
    const refused = await call(platform.app, 'POST', `${BASE}/products/${product.id}/prices`, {
      key,
      body: { unit_price_cents: 1500.5, currency: 'JPY', billing_interval: 'month' },
      invalid: true,
    });
    expect(expectError(refused, 400, 'validation_failed').details[0]).toMatchObject({ path: 'unit_price_cents' });
  });

  it('keeps USD prices unchanged', async () => {
    const key = await newKey();
    const product = await createProduct(key);
    expect(await addPrice(key, product.id, { unit_price_cents: 2999, currency: 'usd', billing_interval: 'month' })).toMatchObject({ unit_price_cents: 2999, currency: 'USD' });
  });

  it('counts KWD in fils but holds it to 2 decimals: 1235 fils (1.235) is refused, 1230 (1.23) is taken', async () => {
    const key = await newKey();
    const product = await createProduct(key);
    const refused = await call(platform.app, 'POST', `${BASE}/products/${product.id}/prices`, {
      key,
      body: { unit_price_cents: 1235, currency: 'KWD', billing_interval: 'month' },
    });
    const error = expectError(refused, 400, 'validation_failed');
    expect(error.details).toEqual([
      {
        path: 'unit_price_cents',
        code: 'invalid_value',
        message: 'unit_price_cents is in minor units of KWD (3 decimals) and must be a multiple of 10: amounts have at most 2 decimal places.',
      },
    ]);
    expect(await addPrice(key, product.id, { unit_price_cents: 1230, currency: 'kwd', billing_interval: 'month' })).toMatchObject({ unit_price_cents: 1230, currency: 'KWD' });

    const coupon = await call(platform.app, 'POST', `${BASE}/coupons`, { key, body: { code: 'FILS', amount_off_cents: 5, currency: 'BHD' } });
    expect(expectError(coupon, 400, 'validation_failed').details).toMatchObject([{ path: 'amount_off_cents', code: 'invalid_value' }]);
  });

  it('refuses codes that are not active ISO 4217 currencies', async () => {
    const key = await newKey();
    const product = await createProduct(key);
    for (const currency of ['HRK', 'XAU', 'ABC']) {
      const refused = await call(platform.app, 'POST', `${BASE}/products/${product.id}/prices`, {
        key,
        body: { unit_price_cents: 100, currency, billing_interval: 'month' },
        invalid: true,
      });
      expect(expectError(refused, 400, 'validation_failed').details[0]).toMatchObject({ path: 'currency' });
    }
  });
});
