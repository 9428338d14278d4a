import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { localIso, zonedInstant } from '../../lib/zones.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/appointments';
/** Dates in the coming year, so availability (which answers from now on) always has them ahead. */
const YEAR = new Date().getUTCFullYear() + 1;

/** `YYYY-MM-DD` of the last Sunday of a month (0-based): the day Europe changes its clocks in March and October. */
function lastSunday(year: number, month: number): string {
  const day = new Date(Date.UTC(year, month + 1, 0));
  day.setUTCDate(day.getUTCDate() - day.getUTCDay());
  return day.toISOString().slice(0, 10);
}

function plusDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 24 * 3600 * 1000).toISOString().slice(0, 10);
}

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
    const resource = await resourceWithHours(key, { timezone: 'Europe/London' }, { start: '09:00', end: '17:00' }, [{ date: `${YEAR}-12-25`, hours: [] }]);
    const schedule = (await call(platform.app, 'GET', `${BASE}/resources/${resource.id}/schedule`, { key })).json().data;
    expect(schedule).toMatchObject({ resource_id: resource.id, timezone: 'Europe/London', date_overrides: [{ date: `${YEAR}-12-25`, hours: [] }] });
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
  it('keeps local working hours across the spring DST change (Europe/London, last Sunday of March)', async () => {
    const sunday = lastSunday(YEAR, 2);
    const [saturday, monday] = [plusDays(sunday, -1), plusDays(sunday, 1)];
    const key = await (await platform.newTenant()).key();
    await resourceWithHours(key, { timezone: 'Europe/London' }, { start: '09:00', end: '10:00' });
    const found = await slots(key, `from=${saturday}T00:00:00Z&to=${plusDays(sunday, 2)}T00:00:00Z&duration_minutes=60`);
    expect(found.map((slot) => [slot.starts_at, slot.local_starts_at])).toEqual([
      [`${saturday}T09:00:00.000Z`, `${saturday}T09:00:00+00:00`],
      [`${sunday}T08:00:00.000Z`, `${sunday}T09:00:00+01:00`],
      [`${monday}T08:00:00.000Z`, `${monday}T09:00:00+01:00`],
    ]);
  });

  it('keeps local working hours across the autumn DST change, months ahead (last Sunday of October)', async () => {
    const sunday = lastSunday(YEAR, 9);
    const saturday = plusDays(sunday, -1);
    const key = await (await platform.newTenant()).key();
    await resourceWithHours(key, { timezone: 'Europe/London' }, { start: '09:00', end: '10:00' });
    const found = await slots(key, `from=${saturday}T00:00:00Z&to=${plusDays(sunday, 1)}T00:00:00Z&duration_minutes=30`);
    expect(found.map((slot) => slot.starts_at)).toEqual([`${saturday}T08:00:00.000Z`, `${saturday}T08:30:00.000Z`, `${sunday}T09:00:00.000Z`, `${sunday}T09:30:00.000Z`]);
  });

  it('honours bookings, capacity, overrides and matching', async () => {
    const [first, second, third] = [`${YEAR}-01-11`, `${YEAR}-01-12`, `${YEAR}-01-13`];
    const key = await (await platform.newTenant()).key();
    const solo = await resourceWithHours(key, { timezone: 'UTC', skills: ['gas'] }, { start: '09:00', end: '11:00' }, [{ date: second, hours: [] }]);
    const group = await resourceWithHours(key, { kind: 'room', capacity: 2 }, { start: '09:00', end: '10:00' });
    const book = async (resourceId: string) =>
      expect(
        (await call(platform.app, 'POST', `${BASE}/bookings`, { key, body: { resource_id: resourceId, starts_at: `${first}T09:00:00Z`, ends_at: `${first}T10:00:00Z` } }))
          .statusCode,
      ).toBe(201);
    await book(solo.id);
    await book(group.id);
    const window = `from=${first}T00:00:00Z&to=${third}T00:00:00Z&duration_minutes=60`;
    expect((await slots(key, `${window}&skills=gas`)).map((slot) => slot.starts_at)).toEqual([`${first}T10:00:00.000Z`]);
    const rooms = await slots(key, `${window}&kind=room`);
    expect(rooms.map((slot) => [slot.starts_at, slot.remaining_capacity])).toEqual([
      [`${first}T09:00:00.000Z`, 1],
      [`${second}T09:00:00.000Z`, 2],
    ]);
    expect(await slots(key, `${window}&skills=gas,water`)).toEqual([]);
  });

  it('answers 12 months ahead and refuses windows over 31 days', async () => {
    const key = await (await platform.newTenant()).key();
    await resourceWithHours(key, { timezone: 'Asia/Kolkata' }, { start: '09:00', end: '09:30' });
    const ahead = new Date(Date.now() + 366 * 24 * 3600 * 1000).toISOString().slice(0, 10);
    const found = await slots(key, `from=${ahead}T00:00:00Z&to=${ahead}T23:59:00Z&duration_minutes=30`);
    expect(found.map((slot) => slot.local_starts_at)).toEqual([`${ahead}T09:00:00+05:30`]);
    expectError(
      await call(platform.app, 'GET', `${BASE}/availability?from=${YEAR}-01-01T00:00:00Z&to=${YEAR}-02-02T00:00:00Z&duration_minutes=30`, { key }),
      400,
      'validation_failed',
    );
  });
});

describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.appointments.view',
  url: () => `${BASE}/availability?from=${YEAR}-01-01T00:00:00Z&to=${YEAR}-01-02T00:00:00Z&duration_minutes=30`,
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
