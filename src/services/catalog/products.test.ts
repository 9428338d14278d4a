import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { BASE, fixtures, type ProductData } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { newKey, createProduct, addPrice, ok } = fixtures(() => platform);

describe('products', () => {
  it('creates a product with defaults, and reads it back the same', async () => {
    const key = await newKey();
    const product = await createProduct(key, { name: '  Pro plan ', description: '  Everything. ' });
    expect(product).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Pro plan',
      description: 'Everything.',
      free_trial_days: 0,
      active: true,
      default_price_id: null,
      prices: [],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: product.created_at,
    });
    expect(await ok('GET', `${BASE}/products/${product.id}`, key)).toEqual(product);
  });

  it('makes the first price the default, and moves the default only when asked', async () => {
    const key = await newKey();
    const product = await createProduct(key, { name: 'Team', free_trial_days: 14 });
    const monthly = await addPrice(key, product.id, { unit_price_cents: 2900, currency: 'eur', billing_interval: 'month', default: false });
    expect(monthly).toEqual({
      id: expect.any(String),
      product_id: product.id,
      unit_price_cents: 2900,
      currency: 'EUR',
      billing_interval: 'month',
      interval_count: 1,
      default: true,
      created_at: expect.any(String),
    });
    const yearly = await addPrice(key, product.id, { unit_price_cents: 29000, currency: 'EUR', billing_interval: 'year' });
    expect(yearly.default).toBe(false);
    let read = await ok<ProductData>('GET', `${BASE}/products/${product.id}`, key);
    expect(read.default_price_id).toBe(monthly.id);
    expect(read.prices.map((price) => [price.id, price.default])).toEqual([
      [monthly.id, true],
      [yearly.id, false],
    ]);
    expect(Date.parse(read.updated_at)).toBeGreaterThan(Date.parse(product.updated_at));

    const quarterly = await addPrice(key, product.id, { unit_price_cents: 7900, currency: 'eur', billing_interval: 'month', interval_count: 3, default: true });
    expect(quarterly).toMatchObject({ default: true, interval_count: 3 });
    read = await ok<ProductData>('GET', `${BASE}/products/${product.id}`, key);
    expect(read.default_price_id).toBe(quarterly.id);
    expect(read.prices.filter((price) => price.default).map((price) => price.id)).toEqual([quarterly.id]);
  });

  it('updates fields, the default price among its own prices only, guarded by expected_updated_at', async () => {
    const key = await newKey();
    const product = await createProduct(key);
    const first = await addPrice(key, product.id);
    const second = await addPrice(key, product.id, { unit_price_cents: 100, currency: 'usd', billing_interval: 'week' });
    const current = await ok<ProductData>('GET', `${BASE}/products/${product.id}`, key);
    const updated = await ok<ProductData>('PATCH', `${BASE}/products/${product.id}`, key, {
      name: 'Pro+',
      description: '   ',
      free_trial_days: 30,
      active: false,
      default_price_id: second.id.toUpperCase(),
      expected_updated_at: current.updated_at,
    });
    expect(updated).toMatchObject({ name: 'Pro+', description: null, free_trial_days: 30, active: false, default_price_id: second.id });
    expect(updated.prices.find((price) => price.id === first.id)?.default).toBe(false);

    const stale = await call(platform.app, 'PATCH', `${BASE}/products/${product.id}`, { key, body: { name: 'Late', expected_updated_at: current.updated_at } });
    expect(expectError(stale, 409, 'stale_update').details[0]).toMatchObject({ current_updated_at: updated.updated_at });

    const other = await createProduct(key, { name: 'Other' });
    const otherPrice = await addPrice(key, other.id);
    for (const priceId of [otherPrice.id, 'nope', '00000000-0000-4000-8000-000000000000']) {
      const error = expectError(await call(platform.app, 'PATCH', `${BASE}/products/${product.id}`, { key, body: { default_price_id: priceId } }), 400, 'validation_failed');
      expect(error.details[0]).toMatchObject({ path: 'default_price_id', code: 'not_found' });
    }
  });

  it('lists products newest first with their prices, filtered by active', async () => {
    const key = await newKey();
    const a = await createProduct(key, { name: 'A' });
    await addPrice(key, a.id);
    const b = await createProduct(key, { name: 'B', active: false });
    const page = await call(platform.app, 'GET', `${BASE}/products?limit=1`, { key });
    expect(page.json()).toMatchObject({ data: [{ id: b.id }], meta: { limit: 1, offset: 0, total: 2, has_more: true } });
    const all = (await call(platform.app, 'GET', `${BASE}/products`, { key })).json().data as ProductData[];
    expect(all.map((product) => [product.name, product.prices.length])).toEqual([
      ['B', 0],
      ['A', 1],
    ]);
    expect((await call(platform.app, 'GET', `${BASE}/products?active=true`, { key })).json().data.map((p: ProductData) => p.id)).toEqual([a.id]);
    expect((await call(platform.app, 'GET', `${BASE}/products?active=false`, { key })).json().data.map((p: ProductData) => p.id)).toEqual([b.id]);
    for (const query of ['active=yes', 'limit=0', 'limit=201', 'offset=-1', 'status=active', 'limit=Infinity']) {
      expectError(await call(platform.app, 'GET', `${BASE}/products?${query}`, { key }), 400, 'validation_failed');
    }
  });

  it('refuses bad product input with 400 validation_failed', async () => {
    const key = await newKey();
    const product = await createProduct(key);
    for (const body of [
      {},
      { name: '' },
      { name: '   ' },
      { name: null },
      { name: 'x'.repeat(201) },
      { name: 'Pro', free_trial_days: -1 },
      { name: 'Pro', free_trial_days: 731 },
      { name: 'Pro', free_trial_days: 1.5 },
      { name: 'Pro', free_trial_days: '14' },
      { name: 'Pro', active: 'true' },
      { name: 'Pro', description: 'x'.repeat(5001) },
      { name: 'Pro', default_price_id: product.id },
      { name: 'Pro', extra: 1 },
    ]) {
      expectError(await call(platform.app, 'POST', `${BASE}/products`, { key, body }), 400, 'validation_failed');
    }
    for (const body of [{ name: null }, { free_trial_days: null }, { active: null }, { default_price_id: null }, { prices: [] }, { expected_updated_at: 'yesterday' }]) {
      expectError(await call(platform.app, 'PATCH', `${BASE}/products/${product.id}`, { key, body }), 400, 'validation_failed');
    }
    expectError(await call(platform.app, 'POST', `${BASE}/products`, { key, body: '[1,2' }), 400, 'invalid_json');
  });

  it('refuses bad prices: amounts, currencies, intervals beyond three years', async () => {
    const key = await newKey();
    const product = await createProduct(key);
    const valid = { unit_price_cents: 100, currency: 'usd', billing_interval: 'month' };
    for (const body of [
      {},
      { ...valid, unit_price_cents: -1 },
      { ...valid, unit_price_cents: 10.5 },
      { ...valid, unit_price_cents: '100' },
      { ...valid, unit_price_cents: 10_000_000_001 },
      { ...valid, unit_price_cents: null },
      { ...valid, currency: 'XXY' },
      { ...valid, currency: 'us' },
      { ...valid, billing_interval: 'quarter' },
      { ...valid, interval_count: 0 },
      { ...valid, default: 'yes' },
      { ...valid, product_id: product.id },
    ]) {
      expectError(await call(platform.app, 'POST', `${BASE}/products/${product.id}/prices`, { key, body }), 400, 'validation_failed');
    }
    for (const [billing_interval, interval_count] of [
      ['day', 1096],
      ['week', 157],
      ['month', 37],
      ['year', 4],
    ] as const) {
      const error = expectError(
        await call(platform.app, 'POST', `${BASE}/products/${product.id}/prices`, { key, body: { ...valid, billing_interval, interval_count } }),
        400,
        'validation_failed',
      );
      expect(error.details[0]).toMatchObject({ path: 'interval_count', code: 'out_of_range' });
    }
    expect((await addPrice(key, product.id, { ...valid, billing_interval: 'year', interval_count: 3, unit_price_cents: 0 })).unit_price_cents).toBe(0);
    expect((await addPrice(key, product.id, { ...valid, unit_price_cents: 10_000_000_000 })).unit_price_cents).toBe(10_000_000_000);
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000']) {
      expectError(await call(platform.app, 'POST', `${BASE}/products/${id}/prices`, { key, body: valid }), 404, 'not_found');
    }
  });

  it('caps a product at 100 prices with 409 conflict', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const product = await createProduct(key);
    await addPrice(key, product.id);
    const now = platform.clock.now();
    await platform.database.db
      .insertInto('catalog_prices' as never)
      .values(
        Array.from({ length: 99 }, () => ({
          id: randomUUID(),
          tenant_id: tenant.id,
          mode: 'test',
          product_id: product.id,
          unit_price_cents: 100,
          currency: 'USD',
          billing_interval: 'month',
          interval_count: 1,
          created_at: now,
        })),
      )
      .execute();
    const error = expectError(
      await call(platform.app, 'POST', `${BASE}/products/${product.id}/prices`, { key, body: { unit_price_cents: 1, currency: 'usd', billing_interval: 'day' } }),
      409,
      'conflict',
    );
    expect(error.details[0]).toMatchObject({ path: 'prices', code: 'limit_reached' });
    expect((await ok<ProductData>('GET', `${BASE}/products/${product.id}`, key)).prices).toHaveLength(100);
  });

  it('answers unknown, malformed and foreign product ids with 404', async () => {
    const key = await newKey();
    const product = await createProduct(key);
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000', `${product.id}x`, 'x'.repeat(400)]) {
      expectError(await call(platform.app, 'GET', `${BASE}/products/${id}`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'PATCH', `${BASE}/products/${id}`, { key, body: { name: 'X' } }), 404, 'not_found');
    }
    expectError(await call(platform.app, 'GET', `${BASE}/products/${product.id}`, { key: await newKey() }), 404, 'not_found');
  });
});

describeRouteSecurity(() => platform, { method: 'POST', scope: 'service.catalog.manage', url: () => `${BASE}/products`, body: () => ({ name: 'Pro' }), addressesOneRow: false });
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.catalog.view', url: () => `${BASE}/products`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.catalog.view',
  setup: (key) => createProduct(key),
  url: (product: ProductData) => `${BASE}/products/${product.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.catalog.manage',
  setup: (key) => createProduct(key),
  url: (product: ProductData) => `${BASE}/products/${product.id}`,
  body: () => ({ name: 'Renamed' }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.catalog.manage',
  setup: (key) => createProduct(key),
  url: (product: ProductData) => `${BASE}/products/${product.id}/prices`,
  body: () => ({ unit_price_cents: 100, currency: 'usd', billing_interval: 'month' }),
  addressesOneRow: true,
});
