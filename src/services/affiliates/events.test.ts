import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { recordedEvents } from '../../../test/recorded-events.js';
import { affiliatesClient, BASE } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

async function client() {
  const tenant = await platform.newTenant();
  const key = await tenant.key();
  return { tenantId: tenant.id, key, api: affiliatesClient(platform, key) };
}

/** The objects of the events of `type`, oldest first. */
async function objects(tenantId: string, type: string) {
  return (await recordedEvents(platform, tenantId, type)).map((event) => event.data.object).reverse();
}

describe('affiliates events', () => {
  it('records one event per programme and tier change, carrying the object as GET returns it', async () => {
    const { tenantId, api } = await client();
    const programme = await api.programme();
    expect(await objects(tenantId, 'affiliates.programme.created')).toEqual([programme]);
    const updated = await api.patch(`/programmes/${programme.id}`, { name: 'Renamed' });
    expect(await objects(tenantId, 'affiliates.programme.updated')).toEqual([await api.get(`/programmes/${programme.id}`)]);
    expect(updated.name).toBe('Renamed');
    const tier = await api.post(`/programmes/${programme.id}/tiers`, { name: 'Gold', commission_type: 'percent', commission_percent: 30 });
    await api.patch(`/programmes/${programme.id}/tiers/${tier.id}`, { name: 'Platinum' });
    expect(await objects(tenantId, 'affiliates.tier.created')).toEqual([tier]);
    expect(await objects(tenantId, 'affiliates.tier.updated')).toEqual([await api.get(`/programmes/${programme.id}/tiers/${tier.id}`)]);
  });

  it('records partner changes as GET shows the partner (tier_name filled), pause and reactivate only when the status moves', async () => {
    const { tenantId, api, key } = await client();
    const programme = await api.programme();
    const tier = await api.post(`/programmes/${programme.id}/tiers`, { name: 'Gold', commission_type: 'percent', commission_percent: 30 });
    const partner = await api.partner({ programme_id: programme.id, tier_id: tier.id });
    expect(await objects(tenantId, 'affiliates.partner.created')).toEqual([await api.get(`/affiliates/${partner.id}`)]);
    await api.patch(`/affiliates/${partner.id}`, { notes: 'Top' });
    expect(await objects(tenantId, 'affiliates.partner.updated')).toEqual([await api.get(`/affiliates/${partner.id}`)]);
    await api.post(`/affiliates/${partner.id}/reactivate`, undefined, 200);
    expect(await objects(tenantId, 'affiliates.partner.reactivated')).toEqual([]);
    await api.post(`/affiliates/${partner.id}/pause`, undefined, 200);
    await api.post(`/affiliates/${partner.id}/pause`, undefined, 200);
    expect(await objects(tenantId, 'affiliates.partner.paused')).toEqual([await api.get(`/affiliates/${partner.id}`)]);
    await api.post(`/affiliates/${partner.id}/reactivate`, undefined, 200);
    expect(await objects(tenantId, 'affiliates.partner.reactivated')).toEqual([await api.get(`/affiliates/${partner.id}`)]);
    expectError(await call(platform.app, 'POST', `${BASE}/affiliates/${randomUUID()}/reactivate`, { key }), 404, 'affiliate_not_found');
    expectError(await call(platform.app, 'POST', `${BASE}/affiliates`, { key, body: { name: 'X', code: partner.code, programme_id: programme.id } }), 409, 'conflict');
    expect(await objects(tenantId, 'affiliates.partner.created')).toHaveLength(1);
    expect(await objects(tenantId, 'affiliates.partner.reactivated')).toHaveLength(1);
  });

  it('records referrals and commission moves once each, none for refused moves or replays', async () => {
    const { tenantId, api, key } = await client();
    const programme = await api.programme();
    const partner = await api.partner({ programme_id: programme.id, code: 'EVT' });
    const referral = await api.post('/referrals', { code: 'EVT', email: 'buyer@example.com' });
    expect(await objects(tenantId, 'affiliates.referral.created')).toEqual([referral]);
    const location = (await platform.app.inject({ method: 'GET', url: '/r/EVT' })).headers.location as string;
    const attributed = await api.post('/referrals', { referral_id: new URL(location).searchParams.get('affiliate_referral_id'), customer_ref: 'cus_9' });
    expect(await objects(tenantId, 'affiliates.referral.attributed')).toEqual([attributed]);

    const headers = { 'idempotency-key': 'conversion-once' };
    const conversion = await api.post('/conversions', { affiliate_id: partner.id, amount_cents: 1000 }, 201, headers);
    await api.post('/conversions', { affiliate_id: partner.id, amount_cents: 1000 }, 201, headers);
    expect(await objects(tenantId, 'affiliates.conversion.created')).toEqual([conversion]);
    expectError(await call(platform.app, 'POST', `${BASE}/conversions/${conversion.id}/mark-paid`, { key }), 409, 'invalid_status_transition');
    await api.post(`/conversions/${conversion.id}/approve`, undefined, 200);
    await api.post(`/conversions/${conversion.id}/approve`, undefined, 200);
    await api.post(`/conversions/${conversion.id}/mark-paid`, undefined, 200);
    const other = await api.conversion({ affiliate_id: partner.id, amount_cents: 10 });
    await api.post(`/conversions/${other.id}/void`, undefined, 200);
    expect(await objects(tenantId, 'affiliates.conversion.approved')).toHaveLength(1);
    expect(await objects(tenantId, 'affiliates.conversion.paid')).toEqual([await api.get(`/conversions/${conversion.id}`)]);
    expect(await objects(tenantId, 'affiliates.conversion.voided')).toEqual([await api.get(`/conversions/${other.id}`)]);
  });
});
