import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { affiliatesClient, BASE, TIMESTAMP, UUID } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const DAY = 24 * 3600 * 1000;

async function client() {
  const tenant = await platform.newTenant();
  const key = await tenant.key();
  return { tenant, key, api: affiliatesClient(platform, key) };
}

async function createContact(key: string): Promise<{ id: string }> {
  const response = await call(platform.app, 'POST', '/api/v1/services/crm/contacts', { key, body: { name: 'Grace Hopper', email: `g${randomUUID().slice(0, 6)}@example.com` } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

describe('programmes and tiers', () => {
  it('creates a programme with defaults and updates it', async () => {
    const { api } = await client();
    const programme = await api.post('/programmes', { name: ' Partners ', commission_type: 'amount', commission_amount_cents: 1500 });
    expect(programme).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Partners',
      commission_type: 'amount',
      commission_percent: null,
      commission_amount_cents: 1500,
      currency: 'USD',
      cookie_days: 30,
      recurring_months: -1,
      landing_url: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: programme.created_at,
    });
    expect(await api.get(`/programmes/${programme.id}`)).toEqual(programme);
    const updated = await api.patch(`/programmes/${programme.id}`, { commission_type: 'percent', commission_percent: 12.5, currency: 'eur', cookie_days: 0, recurring_months: -7 });
    expect(updated).toMatchObject({ commission_type: 'percent', commission_percent: 12.5, commission_amount_cents: null, currency: 'EUR', cookie_days: 0, recurring_months: -7 });
    const list = await call(platform.app, 'GET', `${BASE}/programmes`, { key: (await platform.newTenant()).id && undefined });
    expect(list.statusCode).toBe(401);
  });

  it('refuses a rate without its value, a value of the other type, and too many decimals', async () => {
    const { key } = await client();
    for (const [body, path] of [
      [{ name: 'P', commission_type: 'percent' }, 'commission_percent'],
      [{ name: 'P', commission_type: 'amount', commission_percent: 10 }, 'commission_amount_cents'],
      [{ name: 'P', commission_type: 'percent', commission_percent: 10.123 }, 'commission_percent'],
      [{ name: 'P', commission_type: 'percent', commission_percent: 101 }, 'commission_percent'],
      [{ name: 'P', commission_type: 'fixed', commission_amount_cents: 10 }, 'commission_type'],
      [{ name: 'P', commission_type: 'percent', commission_percent: 10, cookie_days: -1 }, 'cookie_days'],
    ] as const) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/programmes`, { key, body }), 400, 'validation_failed');
      expect(error.details.map((detail: { path: string }) => detail.path)).toContain(path);
    }
    expectError(await call(platform.app, 'GET', `${BASE}/programmes/${randomUUID()}`, { key }), 404, 'not_found');
  });

  it('adds tiers with their own rates, unique names per programme', async () => {
    const { api, key } = await client();
    const programme = await api.programme();
    const gold = await api.post(`/programmes/${programme.id}/tiers`, { name: 'Gold', commission_type: 'percent', commission_percent: 30 });
    expect(gold).toMatchObject({ programme_id: programme.id, name: 'Gold', commission_type: 'percent', commission_percent: 30, commission_amount_cents: null });
    expectError(
      await call(platform.app, 'POST', `${BASE}/programmes/${programme.id}/tiers`, { key, body: { name: 'gold', commission_type: 'amount', commission_amount_cents: 5 } }),
      409,
      'conflict',
    );
    const updated = await api.patch(`/programmes/${programme.id}/tiers/${gold.id}`, { commission_percent: 35 });
    expect(updated.commission_percent).toBe(35);
    expect(await api.get(`/programmes/${programme.id}/tiers/${gold.id}`)).toEqual(updated);
    const page = await call(platform.app, 'GET', `${BASE}/programmes/${programme.id}/tiers`, { key });
    expect(page.json()).toEqual({ data: [updated], meta: { limit: 50, offset: 0, total: 1, has_more: false } });
  });
});

describe('partners', () => {
  it('creates a partner with every field of the table: code upper-cased, email lower-cased, tier_name null in the reply and filled on reads', async () => {
    const { api, key } = await client();
    const contact = await createContact(key);
    const programme = await api.programme({ commission_percent: 20, currency: 'EUR' });
    const tier = await api.post(`/programmes/${programme.id}/tiers`, { name: 'Gold', commission_type: 'percent', commission_percent: 30 });
    const created = await api.partner({
      name: ' Ada Lovelace ',
      email: 'Ada@Example.COM',
      code: 'ada20',
      contact_id: contact.id,
      programme_id: programme.id,
      tier_id: tier.id,
      cookie_days: 0,
      recurring_months: 3,
      portal_enabled: true,
      notes: 'Met at the conference.',
    });
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      contact_id: contact.id,
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      code: 'ADA20',
      commission_type: 'percent',
      commission_percent: 30,
      commission_amount_cents: null,
      currency: 'EUR',
      status: 'active',
      programme_id: programme.id,
      tier_id: tier.id,
      tier_name: null,
      cookie_days: 0,
      recurring_months: 3,
      uses_programme_rate: false,
      rate_source: 'tier',
      portal_enabled: true,
      notes: 'Met at the conference.',
      referral_url: expect.stringMatching(/\/r\/ADA20$/),
      lifetime_revenue_cents: 0,
      lifetime_commission_cents: 0,
      click_count: 0,
      conversion_count: 0,
      earned: { pending: 0, approved: 0, paid: 0 },
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: created.created_at,
    });
    expect(await api.get(`/affiliates/${created.id}`)).toEqual({ ...created, tier_name: 'Gold' });
    const updated = await api.patch(`/affiliates/${created.id}`, { tier_id: null, cookie_days: null, recurring_months: null });
    expect(updated).toMatchObject({
      tier_id: null,
      tier_name: null,
      cookie_days: null,
      recurring_months: null,
      commission_percent: 20,
      uses_programme_rate: true,
      rate_source: 'programme',
    });
  });

  it('stores cookie_days 0 as 0 and null as null, and each recurring_months case as sent', async () => {
    const { api } = await client();
    const programme = await api.programme();
    const zero = await api.partner({ programme_id: programme.id, cookie_days: 0, recurring_months: 0 });
    expect([zero.cookie_days, zero.recurring_months]).toEqual([0, 0]);
    const inherit = await api.partner({ programme_id: programme.id });
    expect([inherit.cookie_days, inherit.recurring_months]).toEqual([null, null]);
    const life = await api.partner({ programme_id: programme.id, recurring_months: -1 });
    expect(life.recurring_months).toBe(-1);
    const negative = await api.partner({ programme_id: programme.id, recurring_months: -12 });
    expect(negative.recurring_months).toBe(-12);
    const twelve = await api.partner({ programme_id: programme.id, recurring_months: 12 });
    expect(twelve.recurring_months).toBe(12);
    expect((await api.get(`/affiliates/${zero.id}`)).cookie_days).toBe(0);
  });

  it('generates a unique upper-case code when none is sent, and refuses a taken code in the same workspace and mode only', async () => {
    const { api, key, tenant } = await client();
    const generated = await api.partner({ name: 'Grace Hopper', commission_type: 'amount', commission_amount_cents: 500 });
    expect(generated.code).toMatch(/^GRACEH[A-Z0-9]{4}$/);
    expect(generated).toMatchObject({ programme_id: null, uses_programme_rate: false, rate_source: 'partner', currency: 'USD' });
    const bare = await api.partner({ name: 'Bare', email: 'bare@example.com' });
    expect(bare).toMatchObject({ commission_type: 'percent', commission_percent: 0, commission_amount_cents: null, rate_source: 'partner', status: 'active' });
    await api.partner({ code: 'SAME', commission_type: 'amount', commission_amount_cents: 500 });
    const error = expectError(
      await call(platform.app, 'POST', `${BASE}/affiliates`, { key, body: { name: 'X', code: 'same', commission_type: 'amount', commission_amount_cents: 1 } }),
      409,
      'conflict',
    );
    expect(error.details[0]).toMatchObject({ path: 'code' });
    const live = affiliatesClient(platform, await tenant.key({ mode: 'live' }));
    expect((await live.partner({ code: 'same', commission_type: 'amount', commission_amount_cents: 1 })).code).toBe('SAME');
    const other = affiliatesClient(platform, await (await platform.newTenant()).key());
    expect((await other.partner({ code: 'same', commission_type: 'amount', commission_amount_cents: 1 })).code).toBe('SAME');
    expectError(await call(platform.app, 'PATCH', `${BASE}/affiliates/${generated.id}`, { key, body: { code: 'Same' } }), 409, 'conflict');
  });

  it('refuses bad input with validation_failed and its path', async () => {
    const { api, key } = await client();
    const programme = await api.programme();
    const otherProgramme = await api.programme();
    const tier = await api.post(`/programmes/${otherProgramme.id}/tiers`, { name: 'Gold', commission_type: 'percent', commission_percent: 30 });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'X', programme_id: randomUUID() }, 'programme_id'],
      [{ name: 'X', programme_id: programme.id, tier_id: tier.id }, 'tier_id'],
      [{ name: 'X', programme_id: programme.id, contact_id: randomUUID() }, 'contact_id'],
      [{ name: 'X', programme_id: programme.id, email: 'not-an-email' }, 'email'],
      [{ name: 'X', programme_id: programme.id, code: 'no spaces' }, 'code'],
      [{ name: 'X', programme_id: programme.id, cookie_days: -1 }, 'cookie_days'],
      [{ name: 'X', programme_id: programme.id, recurring_months: 1.5 }, 'recurring_months'],
      [{ name: '', programme_id: programme.id }, 'name'],
      [{ name: 'X', programme_id: programme.id, status: 'deleted' }, 'status'],
      [{ name: 'X', programme_id: programme.id, commission_percent: 10 }, 'commission_type'],
      [{ name: 'X', programme_id: programme.id, currency: 'ABC' }, 'currency'],
    ];
    for (const [body, path] of cases) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/affiliates`, { key, body }), 400, 'validation_failed');
      expect(
        error.details.map((detail: { path: string }) => detail.path),
        JSON.stringify(body),
      ).toContain(path);
    }
  });

  it('follows the tier, then the programme rate; uses_programme_rate is true exactly when the partner earns the programme rate', async () => {
    const { api } = await client();
    const programme = await api.programme({ commission_percent: 20 });
    const own = await api.partner({ programme_id: programme.id, commission_type: 'percent', commission_percent: 20 });
    expect(own).toMatchObject({ uses_programme_rate: true, rate_source: 'partner' });
    const higher = await api.partner({ programme_id: programme.id, commission_type: 'amount', commission_amount_cents: 20 });
    expect(higher).toMatchObject({ uses_programme_rate: false, commission_type: 'amount', commission_amount_cents: 20, commission_percent: null });
    const follower = await api.partner({ programme_id: programme.id });
    await api.patch(`/programmes/${programme.id}`, { commission_percent: 25 });
    expect(await api.get(`/affiliates/${follower.id}`)).toMatchObject({ commission_percent: 25, uses_programme_rate: true });
    expect(await api.get(`/affiliates/${own.id}`)).toMatchObject({ commission_percent: 20, uses_programme_rate: false });
    const back = await api.patch(`/affiliates/${higher.id}`, { commission_type: null });
    expect(back).toMatchObject({ commission_type: 'percent', commission_percent: 25, uses_programme_rate: true, rate_source: 'programme' });
  });

  it('reactivates as the state table says: paused -> active, active stays active, unknown id 404 affiliate_not_found', async () => {
    const { api, key, tenant } = await client();
    const programme = await api.programme();
    const tier = await api.post(`/programmes/${programme.id}/tiers`, { name: 'Gold', commission_type: 'percent', commission_percent: 20 });
    const partner = await api.partner({ programme_id: programme.id, tier_id: tier.id });
    const same = await api.post(`/affiliates/${partner.id}/reactivate`, undefined, 200);
    expect(same).toEqual(partner);
    expect(same).toMatchObject({ status: 'active', tier_name: null, uses_programme_rate: true });
    const paused = await api.post(`/affiliates/${partner.id}/pause`, undefined, 200);
    expect(paused.status).toBe('paused');
    expect((await api.post(`/affiliates/${partner.id}/pause`, undefined, 200)).updated_at).toBe(paused.updated_at);
    const active = await api.post(`/affiliates/${partner.id}/reactivate`, undefined, 200);
    expect(active).toMatchObject({ status: 'active', uses_programme_rate: true, tier_name: null });
    expect(await api.get(`/affiliates/${partner.id}`)).toEqual({ ...active, tier_name: 'Gold' });
    for (const id of [randomUUID(), 'does-not-exist', '12345']) {
      expectError(await call(platform.app, 'POST', `${BASE}/affiliates/${id}/reactivate`, { key }), 404, 'affiliate_not_found');
      expectError(await call(platform.app, 'GET', `${BASE}/affiliates/${id}`, { key }), 404, 'affiliate_not_found');
    }
    expectError(await call(platform.app, 'POST', `${BASE}/affiliates/${partner.id}/reactivate`, { key: await tenant.key({ mode: 'live' }) }), 404, 'affiliate_not_found');
  });

  it('lists partners with earned by status and filters status, programme_id and search', async () => {
    const { api, key } = await client();
    const programme = await api.programme();
    const other = await api.programme();
    const ada = await api.partner({ name: 'Ada Lovelace', email: 'ada@example.com', programme_id: programme.id });
    const grace = await api.partner({ name: 'Grace Hopper', code: 'GRACE', programme_id: other.id });
    await api.post(`/affiliates/${grace.id}/pause`, undefined, 200);
    const page = async (query: string) => (await call(platform.app, 'GET', `${BASE}/affiliates${query}`, { key })).json();
    const all = await page('');
    expect(all.meta).toEqual({ limit: 50, offset: 0, total: 2, has_more: false });
    expect(all.data.map((row: { id: string }) => row.id)).toEqual([grace.id, ada.id]);
    expect(all.data[1].earned).toEqual({ pending: 0, approved: 0, paid: 0 });
    expect((await page('?status=paused')).data.map((row: { id: string }) => row.id)).toEqual([grace.id]);
    expect((await page(`?programme_id=${programme.id}`)).data.map((row: { id: string }) => row.id)).toEqual([ada.id]);
    expect((await page('?search=ADA@')).data.map((row: { id: string }) => row.id)).toEqual([ada.id]);
    expect((await page('?search=grac')).data.map((row: { id: string }) => row.id)).toEqual([grace.id]);
    expect((await page('?limit=1&offset=1')).meta).toEqual({ limit: 1, offset: 1, total: 2, has_more: false });
    expectError(await call(platform.app, 'GET', `${BASE}/affiliates?limit=201`, { key }), 400, 'validation_failed');
    expectError(await call(platform.app, 'GET', `${BASE}/affiliates?status=gone`, { key }), 400, 'validation_failed');
  });

  it('replays a create sent again with the same Idempotency-Key', async () => {
    const { api, key } = await client();
    const headers = { 'idempotency-key': 'partner-once' };
    const first = await api.post('/affiliates', { name: 'Once', commission_type: 'amount', commission_amount_cents: 100 }, 201, headers);
    const again = await api.post('/affiliates', { name: 'Once', commission_type: 'amount', commission_amount_cents: 100 }, 201, headers);
    expect(again).toEqual(first);
    expect((await call(platform.app, 'GET', `${BASE}/affiliates`, { key })).json().meta.total).toBe(1);
    expectError(
      await call(platform.app, 'POST', `${BASE}/affiliates`, { key, headers, body: { name: 'Twice', commission_type: 'amount', commission_amount_cents: 100 } }),
      409,
      'idempotency_key_conflict',
    );
  });
});

describe('tracking', () => {
  it('records a click on /r/{code} without a key and redirects to the landing URL with the referral id', async () => {
    const { api } = await client();
    const programme = await api.programme({ landing_url: 'https://shop.example.com/welcome?x=1' });
    const partner = await api.partner({ programme_id: programme.id, code: 'CLICKME' });
    const response = await platform.app.inject({ method: 'GET', url: '/r/clickme' });
    expect(response.statusCode).toBe(302);
    const location = new URL(response.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe('https://shop.example.com/welcome');
    expect(location.searchParams.get('x')).toBe('1');
    const referralId = location.searchParams.get('affiliate_referral_id')!;
    expect(referralId).toMatch(UUID);
    const referral = await api.get(`/referrals/${referralId}`);
    expect(referral).toMatchObject({ affiliate_id: partner.id, source: 'link', attributed_at: null, clicked_at: expect.stringMatching(TIMESTAMP) });
    expect(new Date(referral.expires_at).getTime() - new Date(referral.clicked_at).getTime()).toBe(30 * DAY);
    expect((await api.get(`/affiliates/${partner.id}`)).click_count).toBe(1);
    expect((await platform.app.inject({ method: 'GET', url: '/r/NOSUCHCODE' })).statusCode).toBe(404);
    expect((await platform.app.inject({ method: 'GET', url: '/r/bad%20code' })).statusCode).toBe(404);
  });

  it('attributes a click to a customer within cookie_days, not after, and never with cookie_days 0', async () => {
    const { api, key } = await client();
    const contact = await createContact(key);
    const programme = await api.programme({ cookie_days: 7 });
    await api.partner({ programme_id: programme.id, code: 'SEVEN' });
    await api.partner({ programme_id: programme.id, code: 'ZERO', cookie_days: 0 });
    const click = async (code: string) =>
      new URL((await platform.app.inject({ method: 'GET', url: `/r/${code}` })).headers.location as string).searchParams.get('affiliate_referral_id')!;
    const early = await click('SEVEN');
    const late = await click('SEVEN');
    const never = await click('ZERO');
    platform.clock.advance(3 * DAY);
    const attributed = await api.post('/referrals', { referral_id: early, contact_id: contact.id, email: 'Buyer@Example.com' });
    expect(attributed).toMatchObject({ id: early, contact_id: contact.id, email: 'buyer@example.com', expires_at: null, attributed_at: expect.stringMatching(TIMESTAMP) });
    expectError(await call(platform.app, 'POST', `${BASE}/referrals`, { key, body: { referral_id: never, email: 'x@example.com' } }), 400, 'validation_failed');
    platform.clock.advance(5 * DAY);
    const error = expectError(await call(platform.app, 'POST', `${BASE}/referrals`, { key, body: { referral_id: late, email: 'x@example.com' } }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: 'referral_id', code: 'expired' });
    // The attributed customer keeps crediting the partner after the window.
    expect((await api.conversion({ contact_id: contact.id, amount_cents: 1000 })).commission_cents).toBe(200);
  });

  it('attributes a customer directly by code or partner id, and refuses unknown partners', async () => {
    const { api, key } = await client();
    const programme = await api.programme();
    const partner = await api.partner({ programme_id: programme.id, code: 'DIRECT' });
    const referral = await api.post('/referrals', { code: 'direct', customer_ref: 'cus_1' });
    expect(referral).toMatchObject({ affiliate_id: partner.id, source: 'api', customer_ref: 'cus_1', expires_at: null });
    expectError(await call(platform.app, 'POST', `${BASE}/referrals`, { key, body: { affiliate_id: randomUUID(), email: 'a@example.com' } }), 404, 'affiliate_not_found');
    expectError(await call(platform.app, 'POST', `${BASE}/referrals`, { key, body: { email: 'a@example.com' } }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', `${BASE}/referrals`, { key, body: { code: 'DIRECT', affiliate_id: partner.id } }), 400, 'validation_failed');
  });
});

describe('commissions', () => {
  it('earns the partner, tier or programme rate, rounded half up, and keeps the totals', async () => {
    const { api } = await client();
    const programme = await api.programme({ commission_percent: 10 });
    const tier = await api.post(`/programmes/${programme.id}/tiers`, { name: 'Flat', commission_type: 'amount', commission_amount_cents: 700 });
    const follower = await api.partner({ programme_id: programme.id });
    const tiered = await api.partner({ programme_id: programme.id, tier_id: tier.id });
    const own = await api.partner({ programme_id: programme.id, commission_type: 'percent', commission_percent: 12.5 });
    expect((await api.conversion({ affiliate_id: follower.id, amount_cents: 1005 })).commission_cents).toBe(101);
    expect((await api.conversion({ affiliate_id: tiered.id, amount_cents: 1005 })).commission_cents).toBe(700);
    const conversion = await api.conversion({ code: own.code.toLowerCase(), amount_cents: 999, currency: 'usd', external_id: 'order-1' });
    expect(conversion).toEqual({
      id: expect.stringMatching(UUID),
      affiliate_id: own.id,
      referral_id: null,
      source: 'api',
      external_id: 'order-1',
      subscription_id: null,
      period: null,
      amount_cents: 999,
      currency: 'USD',
      commission_cents: 125,
      status: 'pending',
      void_reason: null,
      approved_at: null,
      paid_at: null,
      voided_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: conversion.created_at,
    });
    expect(await api.get(`/conversions/${conversion.id}`)).toEqual(conversion);
    expect(await api.get(`/affiliates/${own.id}`)).toMatchObject({
      lifetime_revenue_cents: 999,
      lifetime_commission_cents: 125,
      conversion_count: 1,
      earned: { pending: 125, approved: 0, paid: 0 },
    });
  });

  it('moves a commission pending -> approved -> paid, voids a refunded one, and refuses other moves', async () => {
    const { api, key } = await client();
    const programme = await api.programme({ commission_percent: 50 });
    const partner = await api.partner({ programme_id: programme.id });
    const first = await api.conversion({ affiliate_id: partner.id, amount_cents: 1000 });
    const second = await api.conversion({ affiliate_id: partner.id, amount_cents: 400 });
    const third = await api.conversion({ affiliate_id: partner.id, amount_cents: 200 });
    expectError(await call(platform.app, 'POST', `${BASE}/conversions/${first.id}/mark-paid`, { key }), 409, 'invalid_status_transition');
    const approved = await api.post(`/conversions/${first.id}/approve`, undefined, 200);
    expect(approved).toMatchObject({ status: 'approved', approved_at: expect.stringMatching(TIMESTAMP) });
    expect(await api.post(`/conversions/${first.id}/approve`, undefined, 200)).toEqual(approved);
    const paid = await api.post(`/conversions/${first.id}/mark-paid`, undefined, 200);
    expect(paid).toMatchObject({ status: 'paid', paid_at: expect.stringMatching(TIMESTAMP) });
    expectError(await call(platform.app, 'POST', `${BASE}/conversions/${first.id}/void`, { key }), 409, 'invalid_status_transition');
    await api.post(`/conversions/${second.id}/approve`, undefined, 200);
    expect(await api.post(`/conversions/${third.id}/refund`, undefined, 200)).toMatchObject({ status: 'voided', void_reason: 'refunded' });
    expect(await api.post(`/conversions/${third.id}/void`, undefined, 200)).toMatchObject({ status: 'voided', void_reason: 'refunded' });
    expectError(await call(platform.app, 'POST', `${BASE}/conversions/${third.id}/approve`, { key }), 409, 'invalid_status_transition');
    expect(await api.get(`/affiliates/${partner.id}`)).toMatchObject({
      lifetime_revenue_cents: 1400,
      lifetime_commission_cents: 700,
      conversion_count: 3,
      earned: { pending: 0, approved: 200, paid: 500 },
    });
    const voided = (await call(platform.app, 'GET', `${BASE}/conversions?status=voided&affiliate_id=${partner.id}`, { key })).json();
    expect(voided.data.map((row: { id: string }) => row.id)).toEqual([third.id]);
    expectError(await call(platform.app, 'POST', `${BASE}/conversions/${randomUUID()}/approve`, { key }), 404, 'not_found');
  });

  it('gives a paused partner nothing, and earns again once reactivated', async () => {
    const { api } = await client();
    const programme = await api.programme({ commission_percent: 20 });
    const partner = await api.partner({ programme_id: programme.id });
    await api.post(`/affiliates/${partner.id}/pause`, undefined, 200);
    const nothing = await api.conversion({ affiliate_id: partner.id, amount_cents: 5000 });
    expect(nothing).toMatchObject({ commission_cents: 0, status: 'voided', void_reason: 'affiliate_paused' });
    expect(await api.get(`/affiliates/${partner.id}`)).toMatchObject({
      lifetime_revenue_cents: 0,
      lifetime_commission_cents: 0,
      conversion_count: 0,
      earned: { pending: 0, approved: 0, paid: 0 },
    });
    await api.post(`/affiliates/${partner.id}/reactivate`, undefined, 200);
    expect((await api.conversion({ affiliate_id: partner.id, amount_cents: 5000 })).commission_cents).toBe(1000);
  });

  it('counts subscription periods against recurring_months: null (programme), 0, N and -1', async () => {
    const { api } = await client();
    const programme = await api.programme({ commission_type: 'amount', commission_percent: null, commission_amount_cents: 100, recurring_months: 2 });
    const cases: Array<[number | null, number[]]> = [
      [null, [100, 100, 0, 0, 0]],
      [0, [100, 0, 0, 0, 0]],
      [3, [100, 100, 100, 0, 0]],
      [-1, [100, 100, 100, 100, 100]],
    ];
    for (const [recurring, expected] of cases) {
      const partner = await api.partner({ programme_id: programme.id, recurring_months: recurring });
      const subscription = `sub_${randomUUID()}`;
      const earned: number[] = [];
      for (let period = 1; period <= 5; period++) {
        const conversion = await api.conversion({ affiliate_id: partner.id, amount_cents: 1000, subscription_id: subscription });
        expect(conversion.period).toBe(period);
        earned.push(conversion.commission_cents);
        if (conversion.commission_cents === 0) expect(conversion.void_reason).toBe('recurring_limit');
      }
      expect(earned, `recurring_months ${recurring}`).toEqual(expected);
      const total = expected.reduce((sum, cents) => sum + cents, 0);
      expect(await api.get(`/affiliates/${partner.id}`)).toMatchObject({ lifetime_commission_cents: total, conversion_count: expected.filter((cents) => cents > 0).length });
    }
  });

  it('keeps exact totals under concurrent conversions and refuses a sale recorded twice', async () => {
    const { api, key } = await client();
    const programme = await api.programme({ commission_percent: 10 });
    const partner = await api.partner({ programme_id: programme.id });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        call(platform.app, 'POST', `${BASE}/conversions`, { key, body: { affiliate_id: partner.id, amount_cents: 1000 + index, external_id: `order-${index}` } }),
      ),
    );
    expect(replies.map((reply) => reply.statusCode)).toEqual(Array(20).fill(201));
    const revenue = Array.from({ length: 20 }, (_, index) => 1000 + index).reduce((a, b) => a + b, 0);
    const commission = Array.from({ length: 20 }, (_, index) => Math.floor(((1000 + index) * 1000 + 5000) / 10000)).reduce((a, b) => a + b, 0);
    expect(await api.get(`/affiliates/${partner.id}`)).toMatchObject({
      lifetime_revenue_cents: revenue,
      lifetime_commission_cents: commission,
      conversion_count: 20,
      earned: { pending: commission },
    });
    const twice = await Promise.all(
      Array.from({ length: 5 }, () => call(platform.app, 'POST', `${BASE}/conversions`, { key, body: { affiliate_id: partner.id, amount_cents: 5, external_id: 'dup' } })),
    );
    expect(twice.map((reply) => reply.statusCode).sort()).toEqual([201, 409, 409, 409, 409]);
    const clicks = await Promise.all(Array.from({ length: 10 }, () => platform.app.inject({ method: 'GET', url: `/r/${partner.code}` })));
    expect(clicks.every((reply) => reply.statusCode === 302)).toBe(true);
    expect((await api.get(`/affiliates/${partner.id}`)).click_count).toBe(10);
  });

  it('refuses conversions without exactly one partner reference, in another currency, or for an expired click', async () => {
    const { api, key } = await client();
    const programme = await api.programme({ cookie_days: 1 });
    const partner = await api.partner({ programme_id: programme.id, code: 'CURR' });
    const bad: Array<[Record<string, unknown>, number, string]> = [
      [{ amount_cents: 100 }, 400, 'validation_failed'],
      [{ affiliate_id: partner.id, code: 'CURR', amount_cents: 100 }, 400, 'validation_failed'],
      [{ affiliate_id: partner.id, amount_cents: 100, currency: 'EUR' }, 400, 'validation_failed'],
      [{ affiliate_id: partner.id, amount_cents: -1 }, 400, 'validation_failed'],
      [{ affiliate_id: partner.id, amount_cents: 1.5 }, 400, 'validation_failed'],
      [{ affiliate_id: randomUUID(), amount_cents: 100 }, 404, 'affiliate_not_found'],
      [{ referral_id: randomUUID(), amount_cents: 100 }, 400, 'validation_failed'],
    ];
    for (const [body, status, code] of bad) expectError(await call(platform.app, 'POST', `${BASE}/conversions`, { key, body }), status, code);
    const referralId = new URL((await platform.app.inject({ method: 'GET', url: '/r/CURR' })).headers.location as string).searchParams.get('affiliate_referral_id')!;
    expect((await api.conversion({ referral_id: referralId, amount_cents: 100 })).referral_id).toBe(referralId);
    platform.clock.advance(2 * DAY);
    expectError(await call(platform.app, 'POST', `${BASE}/conversions`, { key, body: { referral_id: referralId, amount_cents: 100 } }), 400, 'validation_failed');
  });
});

// Security of every route

async function fixture(key: string) {
  const api = affiliatesClient(platform, key);
  const programme = await api.programme();
  const tier = await api.post(`/programmes/${programme.id}/tiers`, { name: 'Gold', commission_type: 'percent', commission_percent: 30 });
  const partner = await api.partner({ programme_id: programme.id });
  const referral = await api.post('/referrals', { affiliate_id: partner.id, email: 'buyer@example.com' });
  const conversion = await api.conversion({ affiliate_id: partner.id, amount_cents: 1000 });
  return { programme, tier, partner, referral, conversion };
}
type Fixture = Awaited<ReturnType<typeof fixture>>;

const VIEW = 'service.affiliates.view';
const MANAGE = 'service.affiliates.manage';
const routes: Array<{
  method: 'GET' | 'POST' | 'PATCH';
  scope: string;
  url: (f: Fixture) => string;
  body?: (f: Fixture) => unknown;
  setup?: (key: string) => Promise<Fixture>;
  addressesOneRow: boolean;
}> = [
  { method: 'POST', scope: MANAGE, url: () => `${BASE}/programmes`, body: () => ({ name: 'P', commission_type: 'percent', commission_percent: 5 }), addressesOneRow: false },
  { method: 'GET', scope: VIEW, url: () => `${BASE}/programmes`, addressesOneRow: false },
  { method: 'GET', scope: VIEW, url: (f) => `${BASE}/programmes/${f.programme.id}`, addressesOneRow: true },
  { method: 'PATCH', scope: MANAGE, url: (f) => `${BASE}/programmes/${f.programme.id}`, body: () => ({ name: 'Renamed' }), addressesOneRow: true },
  {
    method: 'POST',
    scope: MANAGE,
    url: (f) => `${BASE}/programmes/${f.programme.id}/tiers`,
    body: () => ({ name: `T${randomUUID()}`, commission_type: 'amount', commission_amount_cents: 5 }),
    addressesOneRow: true,
  },
  { method: 'GET', scope: VIEW, url: (f) => `${BASE}/programmes/${f.programme.id}/tiers`, addressesOneRow: true },
  { method: 'GET', scope: VIEW, url: (f) => `${BASE}/programmes/${f.programme.id}/tiers/${f.tier.id}`, addressesOneRow: true },
  { method: 'PATCH', scope: MANAGE, url: (f) => `${BASE}/programmes/${f.programme.id}/tiers/${f.tier.id}`, body: () => ({ commission_percent: 31 }), addressesOneRow: true },
  { method: 'POST', scope: MANAGE, url: () => `${BASE}/affiliates`, body: () => ({ name: 'A', commission_type: 'amount', commission_amount_cents: 5 }), addressesOneRow: false },
  { method: 'GET', scope: VIEW, url: () => `${BASE}/affiliates`, addressesOneRow: false },
  { method: 'GET', scope: VIEW, url: (f) => `${BASE}/affiliates/${f.partner.id}`, addressesOneRow: true },
  { method: 'PATCH', scope: MANAGE, url: (f) => `${BASE}/affiliates/${f.partner.id}`, body: () => ({ notes: 'x' }), addressesOneRow: true },
  { method: 'POST', scope: MANAGE, url: (f) => `${BASE}/affiliates/${f.partner.id}/pause`, addressesOneRow: true },
  { method: 'POST', scope: MANAGE, url: (f) => `${BASE}/affiliates/${f.partner.id}/reactivate`, addressesOneRow: true },
  { method: 'POST', scope: MANAGE, url: () => `${BASE}/referrals`, body: (f) => ({ affiliate_id: f.partner.id, email: 'b@example.com' }), addressesOneRow: false },
  { method: 'GET', scope: VIEW, url: () => `${BASE}/referrals`, addressesOneRow: false },
  { method: 'GET', scope: VIEW, url: (f) => `${BASE}/referrals/${f.referral.id}`, addressesOneRow: true },
  { method: 'POST', scope: MANAGE, url: () => `${BASE}/conversions`, body: (f) => ({ affiliate_id: f.partner.id, amount_cents: 100 }), addressesOneRow: false },
  { method: 'GET', scope: VIEW, url: () => `${BASE}/conversions`, addressesOneRow: false },
  { method: 'GET', scope: VIEW, url: (f) => `${BASE}/conversions/${f.conversion.id}`, addressesOneRow: true },
  { method: 'POST', scope: MANAGE, url: (f) => `${BASE}/conversions/${f.conversion.id}/approve`, addressesOneRow: true },
  {
    method: 'POST',
    scope: MANAGE,
    url: (f) => `${BASE}/conversions/${f.conversion.id}/mark-paid`,
    setup: async (key: string) => {
      const f = await fixture(key);
      await affiliatesClient(platform, key).post(`/conversions/${f.conversion.id}/approve`, undefined, 200);
      return f;
    },
    addressesOneRow: true,
  },
  { method: 'POST', scope: MANAGE, url: (f) => `${BASE}/conversions/${f.conversion.id}/void`, addressesOneRow: true },
  { method: 'POST', scope: MANAGE, url: (f) => `${BASE}/conversions/${f.conversion.id}/refund`, addressesOneRow: true },
];
for (const route of routes) describeRouteSecurity(() => platform, { setup: fixture, ...route });
