import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const CONTACTS = '/api/v1/services/crm/contacts';

describe('tenants and modes are separate worlds', () => {
  it('hides another tenant’s rows: 404 by id, absent from lists, PATCH refused as 404', async () => {
    const owner = await (await platform.newTenant()).key();
    const stranger = await (await platform.newTenant()).key();
    const { id } = (await call(platform.app, 'POST', CONTACTS, { key: owner, body: { name: 'Private' } })).json().data;

    expectError(await call(platform.app, 'GET', `${CONTACTS}/${id}`, { key: stranger }), 404, 'not_found');
    expectError(await call(platform.app, 'PATCH', `${CONTACTS}/${id}`, { key: stranger, body: { name: 'Mine now' } }), 404, 'not_found');
    expect((await call(platform.app, 'GET', CONTACTS, { key: stranger })).json().meta.total).toBe(0);
    expect((await call(platform.app, 'GET', `${CONTACTS}/${id}`, { key: owner })).json().data.name).toBe('Private');
  });

  it('keeps test and live data apart within one tenant', async () => {
    const tenant = await platform.newTenant();
    const testKey = await tenant.key({ mode: 'test' });
    const liveKey = await tenant.key({ mode: 'live' });
    expect(testKey).toMatch(/^sk_test_/);
    expect(liveKey).toMatch(/^sk_live_/);

    const testRow = (await call(platform.app, 'POST', CONTACTS, { key: testKey, body: { name: 'Sandbox' } })).json().data;
    const liveRow = (await call(platform.app, 'POST', CONTACTS, { key: liveKey, body: { name: 'Real' } })).json().data;

    expectError(await call(platform.app, 'GET', `${CONTACTS}/${testRow.id}`, { key: liveKey }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${CONTACTS}/${liveRow.id}`, { key: testKey }), 404, 'not_found');
    expectError(await call(platform.app, 'PATCH', `${CONTACTS}/${liveRow.id}`, { key: testKey, body: { name: 'x' } }), 404, 'not_found');
    const testList = (await call(platform.app, 'GET', CONTACTS, { key: testKey })).json();
    expect(testList.data.map((row: { id: string }) => row.id)).toEqual([testRow.id]);
  });

  it('answers ids of the wrong shape with 404, not 400 or 500', async () => {
    const key = await (await platform.newTenant()).key();
    for (const id of ['123', 'not-a-uuid', '00000000-0000-0000-0000-000000000000', "1' or '1'='1", '%00']) {
      expectError(await call(platform.app, 'GET', `${CONTACTS}/${encodeURIComponent(id)}`, { key }), 404, 'not_found');
    }
  });
});
