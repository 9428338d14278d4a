import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { BASE, createLink, createSession, LINK_BODY, openPage, pathOf, SESSION_BODY } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const newKey = async () => (await platform.newTenant()).key();
const KWD_MESSAGE = (path: string) => `${path} is in minor units of KWD (3 decimals) and must be a multiple of 10: amounts have at most 2 decimal places.`;

describe('_cents of checkout sessions and payment links in ISO 4217 minor units', () => {
  it('counts JPY in whole yen: a 1500 yen link, its session and its page', async () => {
    const key = await newKey();
    const link = await createLink(platform, key, { name: 'Tea ceremony', amount_cents: 1500, currency: 'jpy' });
    expect(link).toMatchObject({ amount_cents: 1500, amount_total_cents: 1500, currency: 'JPY' });
    const visit = await platform.app.inject({ method: 'GET', url: pathOf(link.url) });
    expect(visit.statusCode).toBe(303);
    expect((await openPage(platform, visit.headers.location as string)).html).toContain('¥1,500');
  });

  it('refuses JPY amounts with decimals on sessions and links', async () => {
    const key = await newKey();
    const session = await call(platform.app, 'POST', `${BASE}/checkout-sessions`, {
      key,
      body: { ...SESSION_BODY, currency: 'JPY', line_items: [{ name: 'Tea', unit_amount_cents: 1500.5, quantity: 1 }] },
      invalid: true,
    });
    expect(expectError(session, 400, 'validation_failed').details[0]).toMatchObject({ path: 'line_items[0].unit_amount_cents' });
    const link = await call(platform.app, 'POST', `${BASE}/payment-links`, { key, body: { name: 'Tea', amount_cents: 1500.5, currency: 'JPY' }, invalid: true });
    expect(expectError(link, 400, 'validation_failed').details[0]).toMatchObject({ path: 'amount_cents' });
  });

  it('keeps USD sessions unchanged', async () => {
    const key = await newKey();
    expect(await createSession(platform, key)).toMatchObject({ amount_total_cents: 5300, currency: 'USD' });
  });

  it('holds KWD (fils) to 2 decimals on sessions, links and a link moved to KWD', async () => {
    const key = await newKey();
    const session = await call(platform.app, 'POST', `${BASE}/checkout-sessions`, {
      key,
      body: {
        ...SESSION_BODY,
        currency: 'kwd',
        line_items: [
          { name: 'A', unit_amount_cents: 1230, quantity: 1 },
          { name: 'B', unit_amount_cents: 1235, quantity: 2 },
        ],
      },
    });
    expect(expectError(session, 400, 'validation_failed').details).toEqual([
      { path: 'line_items[1].unit_amount_cents', code: 'invalid_value', message: KWD_MESSAGE('line_items[1].unit_amount_cents') },
    ]);
    expect(await createSession(platform, key, { amount_cents: 1230, description: 'Tea', currency: 'KWD', success_url: 'https://example.com/' })).toMatchObject({
      amount_total_cents: 1230,
      currency: 'KWD',
    });

    const link = await call(platform.app, 'POST', `${BASE}/payment-links`, { key, body: { name: 'Tea', amount_cents: 1235, currency: 'KWD' } });
    expect(expectError(link, 400, 'validation_failed').details).toEqual([{ path: 'amount_cents', code: 'invalid_value', message: KWD_MESSAGE('amount_cents') }]);

    const cents = await createLink(platform, key, { ...LINK_BODY, line_items: [{ name: 'Ticket', unit_amount_cents: 4905, quantity: 1 }] });
    const moved = await call(platform.app, 'PATCH', `${BASE}/payment-links/${cents.id}`, { key, body: { currency: 'KWD' } });
    expect(expectError(moved, 400, 'validation_failed').details[0]).toMatchObject({ path: 'currency', code: 'invalid_value' });
    const repriced = await call(platform.app, 'PATCH', `${BASE}/payment-links/${cents.id}`, { key, body: { currency: 'KWD', amount_cents: 4900 } });
    expect(repriced.statusCode, repriced.body).toBe(200);
    expect(repriced.json().data).toMatchObject({ currency: 'KWD', amount_total_cents: 4900 });
  });
});
