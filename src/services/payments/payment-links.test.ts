import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { BASE, createLink, getLink, LINK_BODY } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const LINKS = `${BASE}/payment-links`;

describe('payment links', () => {
  it('creates a link with defaults and reads it back', async () => {
    const key = await (await platform.newTenant()).key();
    const link = await createLink(platform, key, { ...LINK_BODY, name: '  Workshop ticket  ' });
    expect(link).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Workshop ticket',
      line_items: [{ name: 'Workshop ticket', unit_amount_cents: 4900, quantity: 1, amount_total_cents: 4900 }],
      amount_cents: null,
      description: null,
      amount_total_cents: 4900,
      currency: 'EUR',
      active: true,
      available: true,
      url: `${platform.config.publicBaseUrl}/pay/${link.id}`,
      allow_quantity: false,
      max_uses: null,
      use_count: 0,
      after_completion_url: null,
      created_at: expect.any(String),
      updated_at: link.created_at,
    });
    expect(await getLink(platform, key, link.id)).toEqual(link);
  });

  it('creates a link from amount_cents + description with every option', async () => {
    const key = await (await platform.newTenant()).key();
    const link = await createLink(platform, key, {
      name: 'Donation',
      amount_cents: 1000,
      description: 'Donation',
      currency: 'gbp',
      active: false,
      allow_quantity: true,
      max_uses: 3,
      after_completion_url: 'https://example.org/thanks?s={CHECKOUT_SESSION_ID}',
    });
    expect(link).toMatchObject({
      amount_cents: 1000,
      description: 'Donation',
      line_items: [{ name: 'Donation', unit_amount_cents: 1000, quantity: 1 }],
      currency: 'GBP',
      active: false,
      available: false,
      allow_quantity: true,
      max_uses: 3,
      use_count: 0,
      after_completion_url: 'https://example.org/thanks?s={CHECKOUT_SESSION_ID}',
    });
  });

  it('takes name, amount_cents and currency alone: the description defaults to the name', async () => {
    const key = await (await platform.newTenant()).key();
    const link = await createLink(platform, key, { name: '  Entry fee ', amount_cents: 1500, currency: 'usd' });
    expect(link).toMatchObject({
      name: 'Entry fee',
      amount_cents: 1500,
      description: 'Entry fee',
      amount_total_cents: 1500,
      line_items: [{ name: 'Entry fee', unit_amount_cents: 1500, quantity: 1, amount_total_cents: 1500 }],
    });

    const repriced = (await call(platform.app, 'PATCH', `${LINKS}/${link.id}`, { key, body: { amount_cents: 2000 } })).json().data;
    expect(repriced).toMatchObject({ amount_cents: 2000, description: 'Entry fee', line_items: [{ name: 'Entry fee', unit_amount_cents: 2000, quantity: 1 }] });
    const renamed = (await call(platform.app, 'PATCH', `${LINKS}/${link.id}`, { key, body: { name: 'Late entry', amount_cents: 2500 } })).json().data;
    expect(renamed).toMatchObject({ name: 'Late entry', description: 'Late entry', amount_cents: 2500 });

    // A checkout session has no name to fall back on: there description stays required with amount_cents.
    const session = await call(platform.app, 'POST', `${BASE}/checkout-sessions`, { key, body: { amount_cents: 100, currency: 'usd', success_url: 'https://example.com/ok' } });
    expect(expectError(session, 400, 'validation_failed').details[0]).toMatchObject({ path: 'description', code: 'required' });
  });

  it('lists newest first, filtered by active', async () => {
    const key = await (await platform.newTenant()).key();
    const one = await createLink(platform, key);
    platform.clock.advance(5);
    const two = await createLink(platform, key, { ...LINK_BODY, active: false });
    const ids = async (query = '') => (await call(platform.app, 'GET', `${LINKS}${query}`, { key })).json().data.map((row: { id: string }) => row.id);
    expect(await ids()).toEqual([two.id, one.id]);
    expect(await ids('?active=true')).toEqual([one.id]);
    expect(await ids('?active=false')).toEqual([two.id]);
    for (const query of ['active=yes', 'active=', 'limit=abc', 'search=x']) {
      expectError(await call(platform.app, 'GET', `${LINKS}?${query}`, { key }), 400, 'validation_failed');
    }
  });

  it('updates the fields sent, replaces the pricing as a whole, and moves updated_at', async () => {
    const key = await (await platform.newTenant()).key();
    const link = await createLink(platform, key);
    platform.clock.advance(10);
    const renamed = (await call(platform.app, 'PATCH', `${LINKS}/${link.id}`, { key, body: { name: 'Renamed', max_uses: 5, active: false } })).json().data;
    expect(renamed).toMatchObject({ name: 'Renamed', max_uses: 5, active: false, available: false, line_items: link.line_items, currency: 'EUR' });
    expect(Date.parse(renamed.updated_at)).toBeGreaterThan(Date.parse(link.updated_at));

    const repriced = await call(platform.app, 'PATCH', `${LINKS}/${link.id}`, { key, body: { amount_cents: 2500, description: 'Entry', currency: 'usd', max_uses: null } });
    expect(repriced.json().data).toMatchObject({
      amount_cents: 2500,
      description: 'Entry',
      amount_total_cents: 2500,
      currency: 'USD',
      max_uses: null,
      line_items: [{ name: 'Entry', unit_amount_cents: 2500, quantity: 1, amount_total_cents: 2500 }],
    });
    const itemised = await call(platform.app, 'PATCH', `${LINKS}/${link.id}`, {
      key,
      body: {
        line_items: [
          { name: 'A', unit_amount_cents: 100, quantity: 2 },
          { name: 'B', unit_amount_cents: 50, quantity: 1 },
        ],
      },
    });
    expect(itemised.json().data).toMatchObject({ amount_cents: null, description: null, amount_total_cents: 250 });
  });

  it('refuses a stale expected_updated_at with 409 stale_update', async () => {
    const key = await (await platform.newTenant()).key();
    const link = await createLink(platform, key);
    const first = await call(platform.app, 'PATCH', `${LINKS}/${link.id}`, { key, body: { name: 'One', expected_updated_at: link.updated_at } });
    expect(first.statusCode).toBe(200);
    const stale = await call(platform.app, 'PATCH', `${LINKS}/${link.id}`, { key, body: { name: 'Two', expected_updated_at: link.updated_at } });
    expect(expectError(stale, 409, 'stale_update').details[0]).toMatchObject({ path: 'expected_updated_at', current_updated_at: first.json().data.updated_at });
    expect((await getLink(platform, key, link.id)).name).toBe('One');
  });

  it('lets the buyer choose the quantity only on a single-line link', async () => {
    const key = await (await platform.newTenant()).key();
    const twoLines = { ...LINK_BODY, line_items: [...LINK_BODY.line_items, { name: 'Lunch', unit_amount_cents: 1500, quantity: 1 }] };
    const refused = await call(platform.app, 'POST', LINKS, { key, body: { ...twoLines, allow_quantity: true } });
    expect(expectError(refused, 400, 'validation_failed').details[0]).toMatchObject({ path: 'allow_quantity', code: 'invalid' });
    const link = await createLink(platform, key, { ...LINK_BODY, allow_quantity: true });
    expectError(await call(platform.app, 'PATCH', `${LINKS}/${link.id}`, { key, body: { line_items: twoLines.line_items } }), 400, 'validation_failed');
    const plain = await createLink(platform, key, twoLines);
    expectError(await call(platform.app, 'PATCH', `${LINKS}/${plain.id}`, { key, body: { allow_quantity: true } }), 400, 'validation_failed');
  });

  it('refuses bad input with 400 and unknown or malformed ids with 404', async () => {
    const key = await (await platform.newTenant()).key();
    const link = await createLink(platform, key);
    const creates: Array<Record<string, unknown>> = [
      { ...LINK_BODY, name: undefined },
      { ...LINK_BODY, name: '' },
      { ...LINK_BODY, name: null },
      { ...LINK_BODY, name: 'x'.repeat(201) },
      { ...LINK_BODY, currency: undefined },
      { ...LINK_BODY, line_items: undefined },
      { ...LINK_BODY, amount_cents: 100, description: 'both' },
      { ...LINK_BODY, max_uses: 0 },
      { ...LINK_BODY, max_uses: 1.5 },
      { ...LINK_BODY, max_uses: '3' },
      { ...LINK_BODY, active: 'true' },
      { ...LINK_BODY, allow_quantity: null },
      { ...LINK_BODY, after_completion_url: 'mailto:a@example.com' },
      { ...LINK_BODY, use_count: 3 },
      { ...LINK_BODY, url: 'https://example.com' },
    ];
    for (const body of creates) {
      const response = await call(platform.app, 'POST', LINKS, { key, body, invalid: true });
      expect(response.statusCode, `${JSON.stringify(body)} -> ${response.body.slice(0, 200)}`).toBe(400);
    }
    const patches: Array<Record<string, unknown>> = [
      { name: null },
      { active: null },
      { currency: 'XYZ' },
      { description: 'only' },
      { line_items: [] },
      { use_count: 0 },
      { expected_updated_at: 'yesterday' },
      { after_completion_url: 'https://' },
    ];
    for (const body of patches) {
      const response = await call(platform.app, 'PATCH', `${LINKS}/${link.id}`, { key, body, invalid: true });
      expect(response.statusCode, `${JSON.stringify(body)} -> ${response.body.slice(0, 200)}`).toBe(400);
    }
    for (const id of ['3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c', 'nope', '0']) {
      expectError(await call(platform.app, 'GET', `${LINKS}/${id}`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'PATCH', `${LINKS}/${id}`, { key, body: { name: 'x' } }), 404, 'not_found');
    }
  });
});

describeRouteSecurity(() => platform, { method: 'POST', scope: 'service.payments.links.write', url: () => LINKS, body: () => LINK_BODY, addressesOneRow: false });
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.payments.links.read', url: () => LINKS, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.payments.links.read',
  setup: (key) => createLink(platform, key),
  url: (link: { id: string }) => `${LINKS}/${link.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.payments.links.write',
  setup: (key) => createLink(platform, key),
  url: (link: { id: string }) => `${LINKS}/${link.id}`,
  body: () => ({ name: 'Renamed' }),
  addressesOneRow: true,
});
