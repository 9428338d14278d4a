import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { localIso, zonedInstant } from './zones.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/appointments';
const EVERY_DAY = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

async function resourceWithHours(key: string, body: Record<string, unknown>, hours: { start: string; end: string }, overrides: unknown[] = []) {
  const created = await call(platform.app, 'POST', `${BASE}/resources`, { key, body: { name: 'Ada', ...body } });
  expect(created.statusCode, created.body).toBe(201);
  const resource = created.json().data;
  const put = await call(platform.app, 'PUT', `${BASE}/resources/${resource.id}/schedule`, {
    key,
    body: { weekly_hours: EVERY_DAY.map((day) => ({ day, ...hours })), date_overrides: overrides },
  });
  expect(put.statusCode, put.body).toBe(200);
  return resource;
}

async function slots(key: string, query: string) {
  const response = await call(platform.app, 'GET', `${BASE}/availability?${query}`, { key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.slots as { resource_id: string; starts_at: string; local_starts_at: string; remaining_capacity: number }[];
}

describe('zone arithmetic', () => {
  it('maps local times to instants across DST changes', () => {
    expect(new Date(zonedInstant('2027-03-27', 9 * 60, 'Europe/London')).toISOString()).toBe('2027-03-27T09:00:00.000Z');
    expect(new Date(zonedInstant('2027-03-28', 9 * 60, 'Europe/London')).toISOString()).toBe('2027-03-28T08:00:00.000Z');
    expect(new Date(zonedInstant('2027-10-31', 9 * 60, 'Europe/London')).toISOString()).toBe('2027-10-31T09:00:00.000Z');
    expect(new Date(zonedInstant('2027-01-10', 9 * 60, 'Asia/Kolkata')).toISOString()).toBe('2027-01-10T03:30:00.000Z');
    expect(new Date(zonedInstant('2027-01-10', 9 * 60, 'Australia/Lord_Howe')).toISOString()).toBe('2027-01-09T22:00:00.000Z');
    // 01:30 happens twice on 31 October in London: the first one (BST).
    expect(new Date(zonedInstant('2027-10-31', 90, 'Europe/London')).toISOString()).toBe('2027-10-31T00:30:00.000Z');
    expect(localIso(Date.parse('2027-03-28T08:00:00Z'), 'Europe/London')).toBe('2027-03-28T09:00:00+01:00');
  });
});

describe('schedule', () => {
  it('reads back what was put, refuses end before start, and 404s for other tenants', async () => {
    const key = await (await platform.newTenant()).key();
    const resource = await resourceWithHours(key, { timezone: 'Europe/London' }, { start: '09:00', end: '17:00' }, [{ date: '2027-12-25', hours: [] }]);
    const schedule = (await call(platform.app, 'GET', `${BASE}/resources/${resource.id}/schedule`, { key })).json().data;
    expect(schedule).toMatchObject({ resource_id: resource.id, timezone: 'Europe/London', date_overrides: [{ date: '2027-12-25', hours: [] }] });
    expect(schedule.weekly_hours).toHaveLength(7);
    expectError(
      await call(platform.app, 'PUT', `${BASE}/resources/${resource.id}/schedule`, { key, body: { weekly_hours: [{ day: 'monday', start: '17:00', end: '09:00' }] } }),
      400,
      'validation_failed',
    );
    expectError(await call(platform.app, 'GET', `${BASE}/resources/${resource.id}/schedule`, { key: await (await platform.newTenant()).key() }), 404, 'not_found');
  });
});

describe('availability', () => {
  it('keeps local working hours across the spring DST change (Europe/London, 28 March 2027)', async () => {
    const key = await (await platform.newTenant()).key();
    await resourceWithHours(key, { timezone: 'Europe/London' }, { start: '09:00', end: '10:00' });
    const found = await slots(key, 'from=2027-03-27T00:00:00Z&to=2027-03-30T00:00:00Z&duration_minutes=60');
    expect(found.map((slot) => [slot.starts_at, slot.local_starts_at])).toEqual([
      ['2027-03-27T09:00:00.000Z', '2027-03-27T09:00:00+00:00'],
      ['2027-03-28T08:00:00.000Z', '2027-03-28T09:00:00+01:00'],
      ['2027-03-29T08:00:00.000Z', '2027-03-29T09:00:00+01:00'],
    ]);
  });

  it('keeps local working hours across the autumn DST change, 11 months ahead (31 October 2027)', async () => {
    const key = await (await platform.newTenant()).key();
    await resourceWithHours(key, { timezone: 'Europe/London' }, { start: '09:00', end: '10:00' });
    const found = await slots(key, 'from=2027-10-30T00:00:00Z&to=2027-11-01T00:00:00Z&duration_minutes=30');
    expect(found.map((slot) => slot.starts_at)).toEqual(['2027-10-30T08:00:00.000Z', '2027-10-30T08:30:00.000Z', '2027-10-31T09:00:00.000Z', '2027-10-31T09:30:00.000Z']);
  });

  it('honours bookings, capacity, overrides and matching', async () => {
    const key = await (await platform.newTenant()).key();
    const solo = await resourceWithHours(key, { timezone: 'UTC', skills: ['gas'] }, { start: '09:00', end: '11:00' }, [{ date: '2027-01-12', hours: [] }]);
    const group = await resourceWithHours(key, { kind: 'room', capacity: 2 }, { start: '09:00', end: '10:00' });
    const book = async (resourceId: string) =>
      expect(
        (await call(platform.app, 'POST', `${BASE}/bookings`, { key, body: { resource_id: resourceId, starts_at: '2027-01-11T09:00:00Z', ends_at: '2027-01-11T10:00:00Z' } }))
          .statusCode,
      ).toBe(201);
    await book(solo.id);
    await book(group.id);
    const window = 'from=2027-01-11T00:00:00Z&to=2027-01-13T00:00:00Z&duration_minutes=60';
    expect((await slots(key, `${window}&skills=gas`)).map((slot) => slot.starts_at)).toEqual(['2027-01-11T10:00:00.000Z']);
    const rooms = await slots(key, `${window}&kind=room`);
    expect(rooms.map((slot) => [slot.starts_at, slot.remaining_capacity])).toEqual([
      ['2027-01-11T09:00:00.000Z', 1],
      ['2027-01-12T09:00:00.000Z', 2],
    ]);
    expect(await slots(key, `${window}&skills=gas,water`)).toEqual([]);
  });

  it('answers 12 months ahead and refuses windows over 31 days', async () => {
    const key = await (await platform.newTenant()).key();
    await resourceWithHours(key, { timezone: 'Asia/Kolkata' }, { start: '09:00', end: '09:30' });
    const ahead = new Date(Date.now() + 366 * 24 * 3600 * 1000).toISOString().slice(0, 10);
    const found = await slots(key, `from=${ahead}T00:00:00Z&to=${ahead}T23:59:00Z&duration_minutes=30`);
    expect(found.map((slot) => slot.local_starts_at)).toEqual([`${ahead}T09:00:00+05:30`]);
    expectError(await call(platform.app, 'GET', `${BASE}/availability?from=2027-01-01T00:00:00Z&to=2027-02-02T00:00:00Z&duration_minutes=30`, { key }), 400, 'validation_failed');
  });
});

describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.appointments.view',
  url: () => `${BASE}/availability?from=2027-01-01T00:00:00Z&to=2027-01-02T00:00:00Z&duration_minutes=30`,
  addressesOneRow: false,
});
async function createResource(key: string) {
  return (await call(platform.app, 'POST', `${BASE}/resources`, { key, body: { name: 'Ada' } })).json().data;
}
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.appointments.view',
  setup: createResource,
  url: (resource: { id: string }) => `${BASE}/resources/${resource.id}/schedule`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PUT',
  scope: 'service.appointments.manage',
  setup: createResource,
  url: (resource: { id: string }) => `${BASE}/resources/${resource.id}/schedule`,
  body: () => ({ weekly_hours: [{ day: 'monday', start: '09:00', end: '17:00' }] }),
  addressesOneRow: true,
});
