import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/appointments';

/** Booking days a month ahead of the clock the test runs under, so they never fall into the past. */
const bookingDay = (offset: number) => new Date(Date.now() + (30 + offset) * 24 * 3600 * 1000).toISOString().slice(0, 10);
const [BOOKING_DAY_1, BOOKING_DAY_2, BOOKING_DAY_3] = [bookingDay(0), bookingDay(1), bookingDay(2)];
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function post(key: string, path: string, body: unknown, status = 201) {
  const response = await call(platform.app, 'POST', `${BASE}${path}`, { key, body });
  expect(response.statusCode, response.body).toBe(status);
  return response.json().data;
}

const createResource = (key: string, body: Record<string, unknown> = {}) => post(key, '/resources', { name: 'Dr Ada', ...body });
const createAsset = (key: string, body: Record<string, unknown> = {}) => post(key, '/assets', { name: 'Main building', kind: 'property', ...body });

async function createCustomer(key: string): Promise<{ id: number }> {
  const response = await call(platform.app, 'POST', '/api/v1/services/invoicing/customers', { key, body: { display_name: 'Acme Ltd' } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

async function eventsOf(tenantId: string, type: string) {
  const { rows } = await platform.runtime.events.list({ tenantId, mode: 'test' }, { type }, { limit: 50, offset: 0 });
  return rows;
}

describe('resources', () => {
  it('creates a resource with defaults, lower-cased colour and string id, and records the event', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const resource = await createResource(key, { name: '  Dr Ada ', color: '#3B82F6', timezone: 'Asia/Calcutta', phone: '+44 20 7946 0958', skills: ['gas', 'gas', 'water'] });
    expect(resource).toEqual({
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      kind: 'staff',
      name: 'Dr Ada',
      email: null,
      phone: '+44 20 7946 0958',
      timezone: 'Asia/Calcutta',
      color: '#3b82f6',
      skills: ['gas', 'water'],
      capacity: 1,
      is_active: true,
      custom_fields: {},
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: resource.created_at,
    });
    expect((await call(platform.app, 'GET', `${BASE}/resources/${resource.id}`, { key })).json().data).toEqual(resource);
    expect(await eventsOf(tenant.id, 'appointments.resource.created')).toHaveLength(1);
  });

  it('accepts any IANA zone, canonical or link, and refuses unknown ones', async () => {
    const key = await (await platform.newTenant()).key();
    for (const timezone of ['UTC', 'Asia/Kolkata', 'Asia/Calcutta', 'Australia/Lord_Howe', 'Europe/London']) {
      expect((await createResource(key, { timezone })).timezone).toBe(timezone);
    }
    for (const timezone of ['Mars/Olympus', 'Europe/Londres', '+05:00x']) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/resources`, { key, body: { name: 'X', timezone } }), 400, 'validation_failed');
      expect(error.details[0]).toMatchObject({ path: 'timezone' });
    }
  });

  it('validates kind, phone, colour and capacity', async () => {
    const key = await (await platform.newTenant()).key();
    expect((await createResource(key, { kind: 'mobile_unit_2' })).kind).toBe('mobile_unit_2');
    const bad = [
      { kind: 'Staff' },
      { kind: 'field-tech' },
      { kind: '' },
      { phone: '020 7946 0958' },
      { phone: '+44' },
      { phone: '+1 234' },
      { color: 'blue' },
      { color: '#fff' },
      { capacity: 0 },
    ];
    for (const body of bad) {
      expectError(await call(platform.app, 'POST', `${BASE}/resources`, { key, body: { name: 'X', ...body } }), 400, 'validation_failed');
    }
  });

  it('PATCH requires name, honours expected_updated_at and records the update', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const resource = await createResource(key);
    await post(key, '/custom-fields', { applies_to: 'resource', key: 'floor', label: 'Floor', type: 'number' });
    expectError(await call(platform.app, 'PATCH', `${BASE}/resources/${resource.id}`, { key, body: { capacity: 2 } }), 400, 'validation_failed');
    const updated = (
      await call(platform.app, 'PATCH', `${BASE}/resources/${resource.id}`, {
        key,
        body: { name: 'Room 1', kind: 'room', capacity: 3, color: '#ABCDEF', custom_fields: { floor: 2 }, expected_updated_at: resource.updated_at },
      })
    ).json().data;
    expect(updated).toMatchObject({ id: resource.id, name: 'Room 1', kind: 'room', capacity: 3, color: '#abcdef', custom_fields: { floor: 2 } });
    expect(updated.updated_at).not.toBe(resource.updated_at);
    expectError(
      await call(platform.app, 'PATCH', `${BASE}/resources/${resource.id}`, { key, body: { name: 'Late', expected_updated_at: resource.updated_at } }),
      409,
      'stale_update',
    );
    expect(await eventsOf(tenant.id, 'appointments.resource.updated')).toHaveLength(1);
  });

  it('filters the list by kind, skill, is_active and search', async () => {
    const key = await (await platform.newTenant()).key();
    await createResource(key, { name: 'Ada Plumber', skills: ['plumbing'] });
    await createResource(key, { name: 'Room A', kind: 'room', is_active: false });
    const names = async (query: string) => (await call(platform.app, 'GET', `${BASE}/resources?${query}`, { key })).json().data.map((row: { name: string }) => row.name);
    expect(await names('kind=room')).toEqual(['Room A']);
    expect(await names('skill=plumbing')).toEqual(['Ada Plumber']);
    expect(await names('is_active=false')).toEqual(['Room A']);
    expect(await names('search=PLUMB')).toEqual(['Ada Plumber']);
    const page = (await call(platform.app, 'GET', `${BASE}/resources?limit=1`, { key })).json();
    expect(page.meta).toEqual({ limit: 1, offset: 0, has_more: true, total: 2 });
  });

  it('answers 404 for another tenant and deletes a resource without bookings', async () => {
    const key = await (await platform.newTenant()).key();
    const resource = await createResource(key);
    const stranger = await (await platform.newTenant()).key();
    expectError(await call(platform.app, 'GET', `${BASE}/resources/${resource.id}`, { key: stranger }), 404, 'not_found');
    expect((await call(platform.app, 'DELETE', `${BASE}/resources/${resource.id}`, { key })).json().data).toEqual({ id: resource.id, deleted: true });
    expectError(await call(platform.app, 'GET', `${BASE}/resources/${resource.id}`, { key }), 404, 'not_found');
  });
});

describe('custom fields', () => {
  it('checks values against the workspace definitions', async () => {
    const key = await (await platform.newTenant()).key();
    const field = await post(key, '/custom-fields', { applies_to: 'resource', key: 'tier', label: ' Tier ', type: 'select', options: ['gold', 'silver'] });
    expect(field).toMatchObject({ applies_to: 'resource', key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver'] });
    await post(key, '/custom-fields', { applies_to: 'asset', key: 'floors', label: 'Floors', type: 'number' });
    expectError(await call(platform.app, 'POST', `${BASE}/custom-fields`, { key, body: { applies_to: 'resource', key: 'tier', label: 'Again', type: 'text' } }), 409, 'conflict');
    expectError(
      await call(platform.app, 'POST', `${BASE}/custom-fields`, { key, body: { applies_to: 'resource', key: 'pick', label: 'Pick', type: 'select' } }),
      400,
      'validation_failed',
    );
    expect((await createResource(key, { custom_fields: { tier: 'gold' } })).custom_fields).toEqual({ tier: 'gold' });
    for (const custom_fields of [{ tier: 'bronze' }, { tier: 1 }, { floors: 2 }, { unknown: 'x' }]) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/resources`, { key, body: { name: 'X', custom_fields } }), 400, 'validation_failed');
      expect(error.details[0]?.path).toBe(`custom_fields/${Object.keys(custom_fields)[0]}`);
    }
    expect((await createAsset(key, { custom_fields: { floors: 3 } })).custom_fields).toEqual({ floors: 3 });
    expect((await call(platform.app, 'GET', `${BASE}/custom-fields?applies_to=asset`, { key })).json().data.map((row: { key: string }) => row.key)).toEqual(['floors']);
    expect((await call(platform.app, 'DELETE', `${BASE}/custom-fields/${field.id}`, { key })).json().data).toEqual({ id: field.id, deleted: true });
    expectError(await call(platform.app, 'POST', `${BASE}/resources`, { key, body: { name: 'X', custom_fields: { tier: 'gold' } } }), 400, 'validation_failed');
  });
});

describe('assets', () => {
  it('creates an asset for an invoicing customer of the same tenant and refuses others', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const customer = await createCustomer(key);
    const asset = await createAsset(key, { customer_id: customer.id, identifier: ' AB12 CDE ', address: { line1: '1 Main St', city: 'London', country: 'gb', latitude: 51.5 } });
    expect(asset).toEqual({
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      customer_id: String(customer.id),
      parent_asset_id: null,
      kind: 'property',
      name: 'Main building',
      identifier: 'AB12 CDE',
      address: { line1: '1 Main St', line2: null, city: 'London', region: null, postal_code: null, country: 'GB', latitude: 51.5, longitude: null },
      custom_fields: {},
      is_active: true,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: asset.created_at,
    });
    expect(await eventsOf(tenant.id, 'appointments.asset.created')).toHaveLength(1);

    const strangerCustomer = await createCustomer(await (await platform.newTenant()).key());
    const error = expectError(
      await call(platform.app, 'POST', `${BASE}/assets`, { key, body: { name: 'X', kind: 'vehicle', customer_id: strangerCustomer.id } }),
      400,
      'validation_failed',
    );
    expect(error.details[0]).toMatchObject({ path: 'customer_id', code: 'not_found' });
    const liveKey = await tenant.key({ mode: 'live' });
    expectError(await call(platform.app, 'POST', `${BASE}/assets`, { key: liveKey, body: { name: 'X', kind: 'vehicle', customer_id: customer.id } }), 400, 'validation_failed');
  });

  it('PATCH requires name and kind, takes integer ids and returns strings', async () => {
    const key = await (await platform.newTenant()).key();
    const customer = await createCustomer(key);
    const building = await createAsset(key);
    const room = await createAsset(key, { name: 'Room 1', kind: 'room' });
    expectError(await call(platform.app, 'PATCH', `${BASE}/assets/${room.id}`, { key, body: { name: 'Room 1' } }), 400, 'validation_failed');
    expectError(await call(platform.app, 'PATCH', `${BASE}/assets/${room.id}`, { key, body: { kind: 'room' } }), 400, 'validation_failed');
    const response = await call(platform.app, 'PATCH', `${BASE}/assets/${room.id}`, {
      key,
      body: { name: 'Room 1A', kind: 'room', parent_asset_id: Number(building.id), customer_id: customer.id, expected_updated_at: room.updated_at },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().data).toMatchObject({ name: 'Room 1A', parent_asset_id: building.id, customer_id: String(customer.id) });
    expectError(
      await call(platform.app, 'PATCH', `${BASE}/assets/${room.id}`, { key, body: { name: 'R', kind: 'room', expected_updated_at: room.updated_at } }),
      409,
      'stale_update',
    );
    const children = (await call(platform.app, 'GET', `${BASE}/assets?parent_asset_id=${building.id}`, { key })).json().data;
    expect(children.map((row: { id: string }) => row.id)).toEqual([room.id]);
    expect((await call(platform.app, 'GET', `${BASE}/assets?kind=property`, { key })).json().data.map((row: { id: string }) => row.id)).toEqual([building.id]);
    expect((await call(platform.app, 'GET', `${BASE}/assets?customer_id=${customer.id}`, { key })).json().data.map((row: { id: string }) => row.id)).toEqual([room.id]);
    expectError(await call(platform.app, 'DELETE', `${BASE}/assets/${building.id}`, { key }), 409, 'asset_in_use');
  });

  it('refuses cycles and parents of another tenant', async () => {
    const key = await (await platform.newTenant()).key();
    const a = await createAsset(key, { name: 'A' });
    const b = await createAsset(key, { name: 'B', parent_asset_id: a.id });
    const c = await createAsset(key, { name: 'C', parent_asset_id: b.id });
    for (const parent of [a.id, c.id]) {
      const error = expectError(
        await call(platform.app, 'PATCH', `${BASE}/assets/${a.id}`, { key, body: { name: 'A', kind: 'property', parent_asset_id: parent } }),
        400,
        'validation_failed',
      );
      expect(error.details[0]).toMatchObject({ path: 'parent_asset_id', code: 'cycle' });
    }
    const foreign = await createAsset(await (await platform.newTenant()).key());
    const error = expectError(
      await call(platform.app, 'POST', `${BASE}/assets`, { key, body: { name: 'X', kind: 'room', parent_asset_id: foreign.id } }),
      400,
      'validation_failed',
    );
    expect(error.details[0]).toMatchObject({ path: 'parent_asset_id', code: 'not_found' });
    expectError(await call(platform.app, 'PATCH', `${BASE}/assets/${c.id}`, { key, body: { name: 'C', kind: 'room', parent_asset_id: foreign.id } }), 400, 'validation_failed');
  });
});

describe('bookings', () => {
  const slot = { starts_at: `${BOOKING_DAY_1}T09:00:00Z`, ends_at: `${BOOKING_DAY_1}T09:30:00Z` };

  it('books, reschedules and cancels, recording each event', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const resource = await createResource(key);
    const booking = await post(key, '/bookings', { resource_id: Number(resource.id), ...slot, notes: 'Ring twice' });
    expect(booking).toMatchObject({
      resource_id: resource.id,
      status: 'confirmed',
      starts_at: `${BOOKING_DAY_1}T09:00:00.000Z`,
      ends_at: `${BOOKING_DAY_1}T09:30:00.000Z`,
      notes: 'Ring twice',
    });
    const moved = (
      await call(platform.app, 'PATCH', `${BASE}/bookings/${booking.id}`, { key, body: { starts_at: `${BOOKING_DAY_1}T10:00:00Z`, ends_at: `${BOOKING_DAY_1}T10:30:00Z` } })
    ).json().data;
    expect(moved.starts_at).toBe(`${BOOKING_DAY_1}T10:00:00.000Z`);
    // The old slot is free again.
    await post(key, '/bookings', { resource_id: resource.id, ...slot });
    const cancelled = (await call(platform.app, 'PATCH', `${BASE}/bookings/${booking.id}`, { key, body: { status: 'cancelled' } })).json().data;
    expect(cancelled.status).toBe('cancelled');
    expectError(await call(platform.app, 'PATCH', `${BASE}/bookings/${booking.id}`, { key, body: { status: 'confirmed' } }), 409, 'invalid_status_transition');
    // The cancelled booking's slot is free.
    await post(key, '/bookings', { resource_id: resource.id, starts_at: `${BOOKING_DAY_1}T10:00:00Z`, ends_at: `${BOOKING_DAY_1}T10:30:00Z` });
    expect(await eventsOf(tenant.id, 'appointments.booking.created')).toHaveLength(3);
    expect(await eventsOf(tenant.id, 'appointments.booking.rescheduled')).toHaveLength(1);
    expect(await eventsOf(tenant.id, 'appointments.booking.cancelled')).toHaveLength(1);
    expect((await call(platform.app, 'GET', `${BASE}/bookings?status=cancelled`, { key })).json().data.map((row: { id: string }) => row.id)).toEqual([booking.id]);
    expectError(await call(platform.app, 'GET', `${BASE}/bookings/${booking.id}`, { key: await (await platform.newTenant()).key() }), 404, 'not_found');
    expectError(await call(platform.app, 'DELETE', `${BASE}/resources/${resource.id}`, { key }), 409, 'resource_in_use');
  });

  it('refuses overlapping bookings on a capacity-1 resource, allows touching ones', async () => {
    const key = await (await platform.newTenant()).key();
    const resource = await createResource(key);
    await post(key, '/bookings', { resource_id: resource.id, ...slot });
    expectError(
      await call(platform.app, 'POST', `${BASE}/bookings`, {
        key,
        body: { resource_id: resource.id, starts_at: `${BOOKING_DAY_1}T09:15:00Z`, ends_at: `${BOOKING_DAY_1}T09:45:00Z` },
      }),
      409,
      'slot_unavailable',
    );
    await post(key, '/bookings', { resource_id: resource.id, starts_at: `${BOOKING_DAY_1}T09:30:00Z`, ends_at: `${BOOKING_DAY_1}T10:00:00Z` });
    expectError(
      await call(platform.app, 'POST', `${BASE}/bookings`, {
        key,
        body: { resource_id: resource.id, starts_at: `${BOOKING_DAY_1}T10:00:00Z`, ends_at: `${BOOKING_DAY_1}T09:00:00Z` },
      }),
      400,
      'validation_failed',
    );
  });

  it('gives exactly one success out of 20 concurrent bookings of one slot at capacity 1', async () => {
    const key = await (await platform.newTenant()).key();
    const resource = await createResource(key);
    const responses = await Promise.all(Array.from({ length: 20 }, () => call(platform.app, 'POST', `${BASE}/bookings`, { key, body: { resource_id: resource.id, ...slot } })));
    expect(responses.filter((response) => response.statusCode === 201)).toHaveLength(1);
    expect(responses.filter((response) => response.statusCode === 409).every((response) => response.json().error.code === 'slot_unavailable')).toBe(true);
    expect(responses.filter((response) => response.statusCode === 409)).toHaveLength(19);
  });

  it('gives exactly N successes out of 20 concurrent bookings at capacity N', async () => {
    const key = await (await platform.newTenant()).key();
    const resource = await createResource(key, { capacity: 4 });
    const responses = await Promise.all(Array.from({ length: 20 }, () => call(platform.app, 'POST', `${BASE}/bookings`, { key, body: { resource_id: resource.id, ...slot } })));
    expect(responses.filter((response) => response.statusCode === 201)).toHaveLength(4);
    expect((await call(platform.app, 'GET', `${BASE}/bookings?resource_id=${resource.id}`, { key })).json().meta.total).toBe(4);
  });

  it('books several resources at once: each keeps its capacity, the main one first, lists and availability see every one', async () => {
    const key = await (await platform.newTenant()).key();
    const technician = await createResource(key, { name: 'Ada' });
    const van = await createResource(key, { name: 'Van 1', kind: 'vehicle' });
    const both = await post(key, '/bookings', { resource_ids: [Number(technician.id), van.id], ...slot });
    expect(both).toMatchObject({ resource_id: technician.id, resource_ids: [technician.id, van.id] });
    expect((await call(platform.app, 'GET', `${BASE}/bookings/${both.id}`, { key })).json().data).toEqual(both);
    // The van is taken by the joint booking, though it is not its main resource.
    const vanAlone = expectError(await call(platform.app, 'POST', `${BASE}/bookings`, { key, body: { resource_id: van.id, ...slot } }), 409, 'slot_unavailable');
    expect(vanAlone.message).toMatch(/fully booked/);
    // resource_id alone still books; resource_id beside resource_ids comes first.
    const other = await createResource(key, { name: 'Grace' });
    const main = await post(key, '/bookings', {
      resource_id: other.id,
      resource_ids: [van.id, other.id],
      starts_at: `${BOOKING_DAY_2}T09:00:00Z`,
      ends_at: `${BOOKING_DAY_2}T10:00:00Z`,
    });
    expect(main.resource_ids).toEqual([other.id, van.id]);
    const list = (await call(platform.app, 'GET', `${BASE}/bookings?resource_id=${van.id}`, { key })).json();
    expect(list.data.map((row: { id: string }) => row.id).sort()).toEqual([both.id, main.id].sort());
    const everyDay = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((day) => ({ day, start: '08:00', end: '18:00' }));
    const schedule = await call(platform.app, 'PUT', `${BASE}/resources/${van.id}/schedule`, { key, body: { weekly_hours: everyDay, date_overrides: [] } });
    expect(schedule.statusCode, schedule.body).toBe(200);
    const availability = await call(
      platform.app,
      'GET',
      `${BASE}/availability?resource_id=${van.id}&from=${BOOKING_DAY_1}T08:00:00Z&to=${BOOKING_DAY_1}T11:00:00Z&duration_minutes=30`,
      { key },
    );
    expect(availability.statusCode, availability.body).toBe(200);
    const freeStarts = availability.json().data.slots.map((free: { starts_at: string }) => free.starts_at);
    expect(freeStarts).toContain(`${BOOKING_DAY_1}T08:30:00.000Z`);
    expect(freeStarts).not.toContain(`${BOOKING_DAY_1}T09:00:00.000Z`);
    // Rescheduling moves every resource: the technician's old slot frees, the van's new one is checked.
    await post(key, '/bookings', { resource_id: van.id, starts_at: `${BOOKING_DAY_1}T12:00:00Z`, ends_at: `${BOOKING_DAY_1}T12:30:00Z` });
    expectError(
      await call(platform.app, 'PATCH', `${BASE}/bookings/${both.id}`, { key, body: { starts_at: `${BOOKING_DAY_1}T12:00:00Z`, ends_at: `${BOOKING_DAY_1}T12:30:00Z` } }),
      409,
      'slot_unavailable',
    );
    expect(
      (await call(platform.app, 'PATCH', `${BASE}/bookings/${both.id}`, { key, body: { starts_at: `${BOOKING_DAY_1}T14:00:00Z`, ends_at: `${BOOKING_DAY_1}T14:30:00Z` } }))
        .statusCode,
    ).toBe(200);
    await post(key, '/bookings', { resource_id: technician.id, ...slot });
    expectError(await call(platform.app, 'DELETE', `${BASE}/resources/${van.id}`, { key }), 409, 'resource_in_use');
  });

  it('refuses a multi-resource booking that names no resource, repeats one, misses resource_id or names an unknown one', async () => {
    const key = await (await platform.newTenant()).key();
    const a = await createResource(key);
    const b = await createResource(key);
    const refused = async (body: Record<string, unknown>, path: string) => {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/bookings`, { key, body: { ...slot, ...body } }), 400, 'validation_failed');
      expect(error.details[0]).toMatchObject({ path });
    };
    await refused({}, 'resource_id');
    await refused({ resource_ids: [a.id, b.id, a.id] }, 'resource_ids[2]');
    await refused({ resource_id: a.id, resource_ids: [b.id] }, 'resource_ids');
    await refused({ resource_ids: [a.id, '999999999'] }, 'resource_ids[1]');
    await refused({ resource_ids: [] }, 'resource_ids');
    await refused({ resource_ids: Array.from({ length: 11 }, () => a.id) }, 'resource_ids');
  });

  it('gives exactly one success when concurrent joint bookings share one capacity-1 resource, in either order', async () => {
    const key = await (await platform.newTenant()).key();
    const shared = await createResource(key);
    const left = await createResource(key);
    const right = await createResource(key);
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        call(platform.app, 'POST', `${BASE}/bookings`, { key, body: { resource_ids: index % 2 ? [shared.id, left.id] : [right.id, shared.id], ...slot } }),
      ),
    );
    expect(responses.filter((response) => response.statusCode === 201)).toHaveLength(1);
    expect(responses.filter((response) => response.statusCode === 409)).toHaveLength(11);
  });

  it('refuses inactive resources, unknown assets and assets of other tenants', async () => {
    const key = await (await platform.newTenant()).key();
    const inactive = await createResource(key, { is_active: false });
    expectError(await call(platform.app, 'POST', `${BASE}/bookings`, { key, body: { resource_id: inactive.id, ...slot } }), 400, 'validation_failed');
    const resource = await createResource(key);
    const foreign = await createAsset(await (await platform.newTenant()).key());
    expectError(await call(platform.app, 'POST', `${BASE}/bookings`, { key, body: { resource_id: resource.id, asset_id: foreign.id, ...slot } }), 400, 'validation_failed');
    const asset = await createAsset(key);
    expect((await post(key, '/bookings', { resource_id: resource.id, asset_id: asset.id, ...slot })).asset_id).toBe(asset.id);
  });
});

const listRoutes = [
  { method: 'POST', scope: 'service.appointments.manage', url: () => `${BASE}/resources`, body: () => ({ name: 'Ada' }), addressesOneRow: false },
  { method: 'GET', scope: 'service.appointments.view', url: () => `${BASE}/resources`, addressesOneRow: false },
  { method: 'POST', scope: 'service.appointments.manage', url: () => `${BASE}/assets`, body: () => ({ name: 'Van', kind: 'vehicle' }), addressesOneRow: false },
  { method: 'GET', scope: 'service.appointments.view', url: () => `${BASE}/assets`, addressesOneRow: false },
  { method: 'GET', scope: 'service.appointments.view', url: () => `${BASE}/bookings`, addressesOneRow: false },
  { method: 'GET', scope: 'service.appointments.view', url: () => `${BASE}/custom-fields`, addressesOneRow: false },
  {
    method: 'POST',
    scope: 'service.appointments.manage',
    url: () => `${BASE}/custom-fields`,
    body: () => ({ applies_to: 'asset', key: 'colour', label: 'Colour', type: 'text' }),
    addressesOneRow: false,
  },
] as const;
for (const route of listRoutes) describeRouteSecurity(() => platform, route);

const resourceRoutes = [
  { method: 'GET', scope: 'service.appointments.view' },
  { method: 'PATCH', scope: 'service.appointments.manage', body: () => ({ name: 'Renamed' }) },
  { method: 'DELETE', scope: 'service.appointments.manage' },
] as const;
for (const route of resourceRoutes) {
  describeRouteSecurity(() => platform, {
    ...route,
    setup: (key) => createResource(key),
    url: (resource: { id: string }) => `${BASE}/resources/${resource.id}`,
    addressesOneRow: true,
  });
}

const assetRoutes = [
  { method: 'GET', scope: 'service.appointments.view' },
  { method: 'PATCH', scope: 'service.appointments.manage', body: () => ({ name: 'Renamed', kind: 'room' }) },
  { method: 'DELETE', scope: 'service.appointments.manage' },
] as const;
for (const route of assetRoutes) {
  describeRouteSecurity(() => platform, { ...route, setup: (key) => createAsset(key), url: (asset: { id: string }) => `${BASE}/assets/${asset.id}`, addressesOneRow: true });
}

describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.appointments.manage',
  setup: (key) => createResource(key),
  url: () => `${BASE}/bookings`,
  body: (resource: { id: string }) => ({ resource_id: resource.id, starts_at: `${BOOKING_DAY_2}T09:00:00Z`, ends_at: `${BOOKING_DAY_2}T09:30:00Z` }),
  addressesOneRow: false,
});

describeRouteSecurity(() => platform, {
  method: 'DELETE',
  scope: 'service.appointments.manage',
  setup: (key) => post(key, '/custom-fields', { applies_to: 'resource', key: 'tier', label: 'Tier', type: 'text' }),
  url: (field: { id: string }) => `${BASE}/custom-fields/${field.id}`,
  addressesOneRow: true,
});

async function createBooking(key: string) {
  const resource = await createResource(key);
  return post(key, '/bookings', { resource_id: resource.id, starts_at: `${BOOKING_DAY_3}T09:00:00Z`, ends_at: `${BOOKING_DAY_3}T09:30:00Z` });
}
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.appointments.view',
  setup: createBooking,
  url: (booking: { id: string }) => `${BASE}/bookings/${booking.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.appointments.manage',
  setup: createBooking,
  url: (booking: { id: string }) => `${BASE}/bookings/${booking.id}`,
  body: () => ({ notes: 'Changed' }),
  addressesOneRow: true,
});
