import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presentEvent } from '../../platform/events/event-log.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/crm';

async function eventsOf(tenantId: string, type: string) {
  const { rows } = await platform.runtime.events.list({ tenantId, mode: 'test' }, { type }, { limit: 50, offset: 0 });
  return rows.map(presentEvent);
}

function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

describe('crm.contact.created', () => {
  it('records the contact as GET returns it', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const company = (await call(platform.app, 'POST', `${BASE}/companies`, { key, body: { name: 'Analytical Engines' } })).json().data;
    const created = await call(platform.app, 'POST', `${BASE}/contacts`, { key, body: { name: ' Ada ', email: 'Ada@Example.com', company_id: company.id } });
    expect(created.statusCode, created.body).toBe(201);
    const contact = (await call(platform.app, 'GET', `${BASE}/contacts/${created.json().data.id}`, { key })).json().data;

    const events = await eventsOf(tenant.id, 'crm.contact.created');
    expect(events).toHaveLength(1);
    expect(events[0]!.livemode).toBe(false);
    expect(asJson(events[0]!.data.object)).toEqual(contact);
  });

  it('records nothing for a refused contact', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const strangerCompany = (await call(platform.app, 'POST', `${BASE}/companies`, { key: await (await platform.newTenant()).key(), body: { name: 'Elsewhere' } })).json().data;
    expectError(await call(platform.app, 'POST', `${BASE}/contacts`, { key, body: { name: 'Ada', company_id: strangerCompany.id } }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', `${BASE}/contacts`, { key, body: { name: '   ' } }), 400, 'validation_failed');
    expect(await eventsOf(tenant.id, 'crm.contact.created')).toEqual([]);
  });

  it('records one event when a create is replayed with the same Idempotency-Key', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const headers = { 'idempotency-key': 'create-ada' };
    const first = await call(platform.app, 'POST', `${BASE}/contacts`, { key, headers, body: { name: 'Ada' } });
    const again = await call(platform.app, 'POST', `${BASE}/contacts`, { key, headers, body: { name: 'Ada' } });
    expect(again.json().data).toEqual(first.json().data);

    const events = await eventsOf(tenant.id, 'crm.contact.created');
    expect(events).toHaveLength(1);
    expect(asJson(events[0]!.data.object)).toEqual(first.json().data);
  });
});
