import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { fixtures } from '../catalog/test-helpers.js';
import { BASE as PAYMENTS, createSession, paySession } from '../payments/test-helpers.js';
import { recordedEvents } from '../../../test/recorded-events.js';
import { affiliatesClient, BASE } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const DAY = 24 * 3600 * 1000;
const catalog = fixtures(() => platform);

async function conversionsOf(key: string, affiliateId: string) {
  const response = await call(platform.app, 'GET', `${BASE}/conversions?affiliate_id=${affiliateId}&limit=200`, { key });
  return (response.json().data as Array<{ period: number | null; commission_cents: number; source: string; status: string; amount_cents: number }>).reverse();
}

describe('sales of the platform', () => {
  it('credits a paid checkout session that carries affiliate_referral_id in its metadata, once', async () => {
    const key = await (await platform.newTenant()).key();
    const api = affiliatesClient(platform, key);
    const programme = await api.programme({ commission_percent: 10 });
    const partner = await api.partner({ programme_id: programme.id, code: 'SHOP' });
    const referralId = new URL((await platform.app.inject({ method: 'GET', url: '/r/SHOP' })).headers.location as string).searchParams.get('affiliate_referral_id')!;
    const session = await createSession(platform, key, {
      line_items: [{ name: 'Course', unit_amount_cents: 5300, quantity: 1 }],
      currency: 'usd',
      success_url: 'https://shop.example.com/thanks',
      metadata: { affiliate_referral_id: referralId },
    });
    const unrelated = await createSession(platform, key);
    await paySession(platform, session.id);
    await paySession(platform, unrelated.id);
    await platform.runtime.jobs.runDue();
    await platform.runtime.jobs.runDue();
    const conversions = await conversionsOf(key, partner.id);
    expect(conversions).toHaveLength(1);
    expect(conversions[0]).toMatchObject({ source: 'payments', amount_cents: 5300, commission_cents: 530, status: 'pending', external_id: `checkout_session:${session.id}` });
    expect(await api.get(`/affiliates/${partner.id}`)).toMatchObject({ lifetime_revenue_cents: 5300, lifetime_commission_cents: 530, conversion_count: 1, click_count: 1 });
  });

  it('credits each billing period of a referred contact’s subscription as the billing clock renews it, within recurring_months', async () => {
    const key = await catalog.newKey();
    const api = affiliatesClient(platform, key);
    const programme = await api.programme({ commission_type: 'amount', commission_percent: null, commission_amount_cents: 500, recurring_months: -1 });
    const cases: Array<[number | null, string]> = [
      [2, 'TWO'],
      [0, 'FIRST'],
      [-1, 'LIFE'],
      [null, 'PROG'],
    ];
    const { product } = await catalog.productWithPrice(key, {}, { unit_price_cents: 2000, currency: 'usd', billing_interval: 'month' });
    const partners: Array<{ id: string; recurring: number | null }> = [];
    for (const [recurring, code] of cases) {
      const partner = await api.partner({ programme_id: programme.id, code, recurring_months: recurring });
      const contact = await catalog.createContact(key, `Buyer ${code}`);
      await api.post('/referrals', { code, contact_id: contact.id });
      const started = await catalog.startSubscription(key, { product_id: product.id, contact_id: contact.id });
      expect(started.statusCode, started.body).toBe(201);
      partners.push({ id: partner.id, recurring });
    }
    for (let month = 0; month < 5; month++) {
      platform.clock.advance(31 * DAY);
      await platform.runtime.jobs.runDue();
    }
    await platform.runtime.jobs.runDue();
    for (const { id, recurring } of partners) {
      const conversions = await conversionsOf(key, id);
      expect(conversions.length, `recurring_months ${recurring}`).toBeGreaterThanOrEqual(5);
      expect(conversions.map((conversion) => conversion.period)).toEqual(conversions.map((_, index) => index + 1));
      const limit = recurring === null ? Infinity : recurring < 0 ? Infinity : Math.max(1, recurring);
      expect(
        conversions.map((conversion) => conversion.commission_cents),
        `recurring_months ${recurring}`,
      ).toEqual(conversions.map((_, index) => (index + 1 <= limit ? 500 : 0)));
      expect(conversions.every((conversion) => conversion.source === 'catalog' && conversion.amount_cents === 2000)).toBe(true);
    }
  });

  it('credits a trialing subscription from the end of its trial: the first paid period is period 1, then renewals within recurring_months', async () => {
    const key = await catalog.newKey();
    const api = affiliatesClient(platform, key);
    const programme = await api.programme({ commission_percent: 10, recurring_months: -1 });
    const { product } = await catalog.productWithPrice(key, { free_trial_days: 7 }, { unit_price_cents: 3000, currency: 'usd', billing_interval: 'month' });
    const cases: Array<[number, string, number]> = [
      [0, 'TRIALONE', 1],
      [2, 'TRIALTWO', 2],
      [-1, 'TRIALLIFE', Infinity],
    ];
    const partners: Array<{ id: string; limit: number; subscriptionId: string }> = [];
    for (const [recurring, code, limit] of cases) {
      const partner = await api.partner({ programme_id: programme.id, code, recurring_months: recurring });
      const contact = await catalog.createContact(key, `Trial ${code}`);
      await api.post('/referrals', { code, contact_id: contact.id });
      const started = await catalog.startSubscription(key, { product_id: product.id, contact_id: contact.id });
      expect(started.statusCode, started.body).toBe(201);
      expect(started.json().data.status).toBe('trialing');
      partners.push({ id: partner.id, limit, subscriptionId: started.json().data.id });
    }
    // The trial itself earns nothing.
    await platform.runtime.jobs.runDue();
    for (const { id } of partners) expect(await conversionsOf(key, id)).toEqual([]);

    // The trial ends: the first paid period is credited as period 1, for every recurring_months (0 included).
    platform.clock.advance(7 * DAY + 1000);
    await platform.runtime.jobs.runDue();
    await platform.runtime.jobs.runDue();
    for (const { id, subscriptionId } of partners) {
      const conversions = await conversionsOf(key, id);
      expect(conversions).toHaveLength(1);
      expect(conversions[0]).toMatchObject({ period: 1, source: 'catalog', amount_cents: 3000, commission_cents: 300, status: 'pending', subscription_id: subscriptionId });
    }

    // Three renewals: periods 2-4, earning while period <= recurring_months.
    for (let month = 0; month < 3; month++) {
      platform.clock.advance(31 * DAY);
      await platform.runtime.jobs.runDue();
    }
    await platform.runtime.jobs.runDue();
    for (const { id, limit } of partners) {
      const conversions = await conversionsOf(key, id);
      expect(conversions.map((conversion) => conversion.period)).toEqual([1, 2, 3, 4]);
      expect(
        conversions.map((conversion) => conversion.commission_cents),
        `limit ${limit}`,
      ).toEqual([1, 2, 3, 4].map((period) => (period <= limit ? 300 : 0)));
      const earning = [1, 2, 3, 4].filter((period) => period <= limit).length;
      expect(await api.get(`/affiliates/${id}`)).toMatchObject({ lifetime_revenue_cents: 3000 * earning, lifetime_commission_cents: 300 * earning, conversion_count: earning });
    }
  });

  describe('refunds of a paid checkout session', () => {
    /** A partner of a 10% programme and a paid 5300 session its click referred; the reader has credited it. */
    async function referredSale(code: string) {
      const tenant = await platform.newTenant();
      const key = await tenant.key();
      const api = affiliatesClient(platform, key);
      const programme = await api.programme({ commission_percent: 10 });
      const partner = await api.partner({ programme_id: programme.id, code });
      const referralId = new URL((await platform.app.inject({ method: 'GET', url: `/r/${code}` })).headers.location as string).searchParams.get('affiliate_referral_id')!;
      const session = await createSession(platform, key, {
        amount_cents: 5300,
        description: 'Course',
        currency: 'usd',
        success_url: 'https://shop.example.com/thanks',
        metadata: { affiliate_referral_id: referralId },
      });
      await paySession(platform, session.id);
      await platform.runtime.jobs.runDue();
      const [conversion] = await conversionsOf(key, partner.id);
      expect(conversion).toMatchObject({ status: 'pending', commission_cents: 530 });
      return { tenantId: tenant.id, key, api, partner, session, conversion: conversion as unknown as { id: string } };
    }

    async function refund(key: string, body: Record<string, unknown>) {
      const response = await call(platform.app, 'POST', `${PAYMENTS}/refunds`, { key, body });
      expect(response.statusCode, response.body).toBe(201);
      await platform.runtime.jobs.runDue();
      await platform.runtime.jobs.runDue();
    }

    it('voids a pending commission when the session is refunded in full, and moves the totals back', async () => {
      const { tenantId, key, api, partner, session, conversion } = await referredSale('REFUNDFULL');
      await refund(key, { checkout_session_id: session.id });
      expect(await api.get(`/conversions/${conversion.id}`)).toMatchObject({ status: 'voided', void_reason: 'refunded', commission_cents: 530, voided_at: expect.any(String) });
      expect(await api.get(`/affiliates/${partner.id}`)).toMatchObject({
        lifetime_revenue_cents: 0,
        lifetime_commission_cents: 0,
        conversion_count: 1,
        earned: { pending: 0, approved: 0, paid: 0 },
      });
      const voided = await recordedEvents(platform, tenantId, 'affiliates.conversion.voided');
      expect(voided.map((event) => event.data.object.id)).toEqual([conversion.id]);
      // Read again (the look-back), the refund voids nothing twice.
      await platform.runtime.jobs.runDue();
      expect(await recordedEvents(platform, tenantId, 'affiliates.conversion.voided')).toHaveLength(1);
    });

    it('leaves the commission of a partial refund, and voids an approved one when the last part is refunded', async () => {
      const { tenantId, key, api, partner, session, conversion } = await referredSale('REFUNDPART');
      await refund(key, { checkout_session_id: session.id, amount_cents: 5000 });
      expect(await api.get(`/conversions/${conversion.id}`)).toMatchObject({ status: 'pending', commission_cents: 530 });
      expect(await api.get(`/affiliates/${partner.id}`)).toMatchObject({ lifetime_revenue_cents: 5300, lifetime_commission_cents: 530 });
      await api.post(`/conversions/${conversion.id}/approve`, undefined, 200);

      await refund(key, { checkout_session_id: session.id });
      expect(await api.get(`/conversions/${conversion.id}`)).toMatchObject({ status: 'voided', void_reason: 'refunded' });
      expect(await api.get(`/affiliates/${partner.id}`)).toMatchObject({ lifetime_revenue_cents: 0, lifetime_commission_cents: 0, earned: { pending: 0, approved: 0, paid: 0 } });
      expect(await recordedEvents(platform, tenantId, 'affiliates.conversion.voided')).toHaveLength(1);
    });

    it('leaves a paid commission as it is (clawback is manual)', async () => {
      const { tenantId, key, api, partner, session, conversion } = await referredSale('REFUNDPAID');
      await api.post(`/conversions/${conversion.id}/approve`, undefined, 200);
      await api.post(`/conversions/${conversion.id}/mark-paid`, undefined, 200);
      await refund(key, { checkout_session_id: session.id });
      expect(await api.get(`/conversions/${conversion.id}`)).toMatchObject({ status: 'paid', void_reason: null });
      expect(await api.get(`/affiliates/${partner.id}`)).toMatchObject({
        lifetime_revenue_cents: 5300,
        lifetime_commission_cents: 530,
        earned: { pending: 0, approved: 0, paid: 530 },
      });
      expect(await recordedEvents(platform, tenantId, 'affiliates.conversion.voided')).toEqual([]);
    });

    it('is harmless for a session no partner referred', async () => {
      const tenant = await platform.newTenant();
      const key = await tenant.key();
      const api = affiliatesClient(platform, key);
      const programme = await api.programme({ commission_percent: 10 });
      const partner = await api.partner({ programme_id: programme.id, code: 'REFUNDNONE' });
      const other = await api.conversion({ affiliate_id: partner.id, amount_cents: 1000, external_id: 'outside-1' });
      const session = await createSession(platform, key, { amount_cents: 800, description: 'Mug', currency: 'usd', success_url: 'https://shop.example.com/thanks' });
      await paySession(platform, session.id);
      await platform.runtime.jobs.runDue();
      await refund(key, { checkout_session_id: session.id });
      expect(await api.get(`/conversions/${other.id}`)).toMatchObject({ status: 'pending' });
      expect(await api.get(`/affiliates/${partner.id}`)).toMatchObject({ lifetime_revenue_cents: 1000, conversion_count: 1 });
      expect(await recordedEvents(platform, tenant.id, 'affiliates.conversion.voided')).toEqual([]);
    });
  });
});
