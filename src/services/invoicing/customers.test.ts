import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { BASE, fixtures, MALFORMED_IDS, type CustomerData } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { createCustomer } = fixtures(() => platform);
const newKey = async () => (await platform.newTenant()).key();
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('creating a customer', () => {
  it('trims the name, lower-cases the email, applies the defaults and leaves notes out of the reply', async () => {
    const key = await newKey();
    const response = await call(platform.app, 'POST', `${BASE}/customers`, {
      key,
      body: { display_name: '  Acme Ltd  ', email: 'Billing@ACME.example', notes: 'Pays late in December.' },
    });
    expect(response.statusCode).toBe(201);
    const customer = response.json().data;
    expect(customer).toEqual({
      id: expect.any(Number),
      display_name: 'Acme Ltd',
      email: 'billing@acme.example',
      phone: null,
      billing_address_line1: null,
      billing_city: null,
      billing_postal_code: null,
      billing_country: null,
      tax_id: null,
      default_payment_terms_days: 30,
      default_currency: 'USD',
      is_active: true,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: customer.created_at,
    });
    expect(Number.isInteger(customer.id) && customer.id > 0).toBe(true);
    expect(Object.keys(customer)).not.toContain('notes');
    expect(response.body).not.toContain('notes');

    const read = (await call(platform.app, 'GET', `${BASE}/customers/${customer.id}`, { key })).json().data;
    expect(read).toEqual({ ...customer, notes: 'Pays late in December.' });
  });

  it('stores every spec field, with the country and currency upper-cased', async () => {
    const key = await newKey();
    const customer = await createCustomer(key, {
      display_name: 'Müller GmbH',
      email: null,
      phone: ' +49 30 1234567 ',
      billing_address_line1: 'Hauptstraße 1',
      billing_city: 'Berlin',
      billing_postal_code: '10115',
      billing_country: 'de',
      tax_id: 'DE123456789',
      default_payment_terms_days: 0,
      default_currency: 'eur',
      notes: null,
    });
    expect(customer).toMatchObject({
      display_name: 'Müller GmbH',
      email: null,
      phone: '+49 30 1234567',
      billing_address_line1: 'Hauptstraße 1',
      billing_city: 'Berlin',
      billing_postal_code: '10115',
      billing_country: 'DE',
      tax_id: 'DE123456789',
      default_payment_terms_days: 0,
      default_currency: 'EUR',
    });
    const read = (await call(platform.app, 'GET', `${BASE}/customers/${customer.id}`, { key })).json().data;
    expect(read.notes).toBeNull();
  });

  it('gives integer ids that grow', async () => {
    const key = await newKey();
    const first = await createCustomer(key);
    const second = await createCustomer(key);
    expect(second.id).toBeGreaterThan(first.id);
  });

  it('honours Idempotency-Key: a retry replays the reply and creates nothing more', async () => {
    const key = await newKey();
    const headers = { 'idempotency-key': 'customer-create-1' };
    const body = { display_name: 'Acme', notes: 'secret' };
    const first = await call(platform.app, 'POST', `${BASE}/customers`, { key, body, headers });
    const again = await call(platform.app, 'POST', `${BASE}/customers`, { key, body, headers });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(again.body).not.toContain('notes');
    expect((await call(platform.app, 'GET', `${BASE}/customers`, { key })).json().meta.total).toBe(1);
    expectError(await call(platform.app, 'POST', `${BASE}/customers`, { key, body: { display_name: 'Other' }, headers }), 409, 'idempotency_key_conflict');
  });

  it('validates billing_country against ISO 3166-1 alpha-2', async () => {
    const key = await newKey();
    expect((await createCustomer(key, { display_name: 'A', billing_country: 'gB' })).billing_country).toBe('GB');
    for (const country of ['UK', 'EU', 'XX', 'ZZ']) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/customers`, { key, body: { display_name: 'A', billing_country: country } }), 400, 'validation_failed');
      expect(error.details[0]).toMatchObject({ path: 'billing_country', code: 'invalid_value' });
    }
    for (const country of ['G', 'GBR', '12', 7]) {
      expectError(await call(platform.app, 'POST', `${BASE}/customers`, { key, body: { display_name: 'A', billing_country: country } }), 400, 'validation_failed');
    }
  });

  it.each([
    ['no display_name', {}],
    ['a blank display_name', { display_name: '   ' }],
    ['a null display_name', { display_name: null }],
    ['a numeric display_name', { display_name: 12 }],
    ['an over-long display_name', { display_name: 'x'.repeat(201) }],
    ['a control character in display_name', { display_name: 'Acme\u0000' }],
    ['a bad email', { display_name: 'A', email: 'not-an-email' }],
    ['terms above 365', { display_name: 'A', default_payment_terms_days: 366 }],
    ['negative terms', { display_name: 'A', default_payment_terms_days: -1 }],
    ['fractional terms', { display_name: 'A', default_payment_terms_days: 1.5 }],
    ['terms as text', { display_name: 'A', default_payment_terms_days: '30' }],
    ['null terms', { display_name: 'A', default_payment_terms_days: null }],
    ['an unknown currency', { display_name: 'A', default_currency: 'ABC' }],
    ['a null currency', { display_name: 'A', default_currency: null }],
    ['over-long notes', { display_name: 'A', notes: 'n'.repeat(5001) }],
    ['an unknown field', { display_name: 'A', is_active: false }],
    ['an id', { display_name: 'A', id: 5 }],
  ])('refuses %s with 400 validation_failed', async (_label, body) => {
    const key = await newKey();
    expectError(await call(platform.app, 'POST', `${BASE}/customers`, { key, body }), 400, 'validation_failed');
  });

  it('refuses bodies that are not a JSON object', async () => {
    const key = await newKey();
    expectError(await call(platform.app, 'POST', `${BASE}/customers`, { key, body: [] }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', `${BASE}/customers`, { key, body: '"Acme"' }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', `${BASE}/customers`, { key, body: '{"display_name":' }), 400, 'invalid_json');
  });
});

describe('reading and listing customers', () => {
  it('answers 404 for ids of the wrong shape and unknown ids', async () => {
    const key = await newKey();
    for (const id of [...MALFORMED_IDS, '123456789']) {
      expectError(await call(platform.app, 'GET', `${BASE}/customers/${id}`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'PATCH', `${BASE}/customers/${id}`, { key, body: { display_name: 'X' } }), 404, 'not_found');
      expectError(await call(platform.app, 'POST', `${BASE}/customers/${id}/archive`, { key }), 404, 'not_found');
    }
  });

  it('lists newest first, filtered by search on name or email and by is_active', async () => {
    const key = await newKey();
    const acme = await createCustomer(key, { display_name: 'Acme Ltd', email: 'ap@acme.example' });
    const globex = await createCustomer(key, { display_name: 'Globex', email: 'billing@globex.example' });
    const initech = await createCustomer(key, { display_name: 'Initech 100%' });
    await call(platform.app, 'POST', `${BASE}/customers/${globex.id}/archive`, { key });
    const names = async (query: string) => (await call(platform.app, 'GET', `${BASE}/customers?${query}`, { key })).json().data.map((row: CustomerData) => row.display_name);
    expect(await names('')).toEqual(['Initech 100%', 'Globex', 'Acme Ltd']);
    expect(await names('search=ACME')).toEqual(['Acme Ltd']);
    expect(await names('search=globex.example')).toEqual(['Globex']);
    expect(await names('search=%25')).toEqual(['Initech 100%']);
    expect(await names('is_active=true')).toEqual(['Initech 100%', 'Acme Ltd']);
    expect(await names('is_active=false')).toEqual(['Globex']);
    const page = (await call(platform.app, 'GET', `${BASE}/customers?limit=1&offset=1`, { key })).json();
    expect(page.meta).toEqual({ limit: 1, offset: 1, total: 3, has_more: true });
    expect(page.data[0].notes).toBeNull();
    expect([acme.id, initech.id]).toContain((await call(platform.app, 'GET', `${BASE}/customers?is_active=true&limit=1`, { key })).json().data[0].id);
  });

  it.each(['is_active=yes', 'is_active=1', 'is_active=', 'limit=0', 'limit=201', 'offset=-1', 'limit=abc', 'search=', 'colour=red'])(
    'refuses the query %s with 400',
    async (query) => {
      const key = await newKey();
      expectError(await call(platform.app, 'GET', `${BASE}/customers?${query}`, { key }), 400, 'validation_failed');
    },
  );
});

describe('updating customers', () => {
  it('changes only the fields sent; null clears; the reply includes notes', async () => {
    const key = await newKey();
    const customer = await createCustomer(key, { display_name: 'Acme', email: 'a@acme.example', phone: '123', notes: 'n1' });
    platform.clock.advance(5);
    const response = await call(platform.app, 'PATCH', `${BASE}/customers/${customer.id}`, {
      key,
      body: { email: null, billing_country: 'fr', default_currency: 'gbp', default_payment_terms_days: 14, display_name: ' Acme SA ' },
    });
    expect(response.statusCode, response.body).toBe(200);
    const updated = response.json().data;
    expect(updated).toMatchObject({
      display_name: 'Acme SA',
      email: null,
      phone: '123',
      billing_country: 'FR',
      default_currency: 'GBP',
      default_payment_terms_days: 14,
      notes: 'n1',
    });
    expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(customer.updated_at));
  });

  it('refuses a stale expected_updated_at with 409 stale_update', async () => {
    const key = await newKey();
    const customer = await createCustomer(key);
    const first = await call(platform.app, 'PATCH', `${BASE}/customers/${customer.id}`, { key, body: { display_name: 'One', expected_updated_at: customer.updated_at } });
    expect(first.statusCode).toBe(200);
    const stale = await call(platform.app, 'PATCH', `${BASE}/customers/${customer.id}`, { key, body: { display_name: 'Two', expected_updated_at: customer.updated_at } });
    const error = expectError(stale, 409, 'stale_update');
    expect(error.details[0]).toMatchObject({ path: 'expected_updated_at', current_updated_at: first.json().data.updated_at });
    expect((await call(platform.app, 'GET', `${BASE}/customers/${customer.id}`, { key })).json().data.display_name).toBe('One');
  });

  it.each([
    { display_name: null },
    { display_name: '' },
    { default_currency: null },
    { default_payment_terms_days: null },
    { billing_country: 'XX' },
    { is_active: false },
    { expected_updated_at: 'yesterday' },
  ])('refuses %j with 400', async (body) => {
    const key = await newKey();
    const customer = await createCustomer(key);
    expectError(await call(platform.app, 'PATCH', `${BASE}/customers/${customer.id}`, { key, body }), 400, 'validation_failed');
  });
});

describe('archiving customers', () => {
  it('archives and unarchives; repeating either returns the customer unchanged', async () => {
    const key = await newKey();
    const customer = await createCustomer(key);
    const archived = await call(platform.app, 'POST', `${BASE}/customers/${customer.id}/archive`, { key });
    expect(archived.statusCode).toBe(200);
    expect(archived.json().data).toMatchObject({ id: customer.id, is_active: false, notes: null });
    const again = (await call(platform.app, 'POST', `${BASE}/customers/${customer.id}/archive`, { key, body: {} })).json().data;
    expect(again).toEqual(archived.json().data);
    const restored = (await call(platform.app, 'POST', `${BASE}/customers/${customer.id}/unarchive`, { key })).json().data;
    expect(restored.is_active).toBe(true);
    expectError(await call(platform.app, 'POST', `${BASE}/customers/${customer.id}/archive`, { key, body: { force: true } }), 400, 'validation_failed');
  });
});

const withCustomer = (key: string) => createCustomer(key);
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.invoicing.manage',
  url: () => `${BASE}/customers`,
  body: () => ({ display_name: 'Acme' }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.invoicing.view', url: () => `${BASE}/customers`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.invoicing.view',
  setup: withCustomer,
  url: (customer: CustomerData) => `${BASE}/customers/${customer.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.invoicing.manage',
  setup: withCustomer,
  url: (customer: CustomerData) => `${BASE}/customers/${customer.id}`,
  body: () => ({ display_name: 'Renamed' }),
  addressesOneRow: true,
});
for (const action of ['archive', 'unarchive']) {
  describeRouteSecurity(() => platform, {
    method: 'POST',
    scope: 'service.invoicing.manage',
    setup: withCustomer,
    url: (customer: CustomerData) => `${BASE}/customers/${customer.id}/${action}`,
    addressesOneRow: true,
  });
}
