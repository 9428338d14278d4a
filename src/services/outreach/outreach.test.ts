import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { normalizePhone } from './phone.js';
import { keywordOf } from './service.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/outreach';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function send(key: string, method: string, path: string, body?: unknown, status = 200) {
  const response = await call(platform.app, method, `${BASE}${path}`, { key, ...(body === undefined ? {} : { body }) });
  expect(response.statusCode, response.body).toBe(status);
  return response.json();
}

const THREE_STEPS = [
  { body: 'Hi {{display_name}}!', delay: { amount: 0, unit: 'minutes' } },
  { body: 'Still interested, {{first_name}}?', delay: { amount: 2, unit: 'hours' } },
  { body: 'Last note.', delay: { amount: 1, unit: 'days' } },
];

async function createSequence(key: string, body: Record<string, unknown> = {}) {
  return (await send(key, 'POST', '/sequences', { name: 'Follow-up', steps: THREE_STEPS, ...body }, 201)).data;
}

async function enroll(key: string, sequenceId: string, body: Record<string, unknown>, status = 201) {
  return (await send(key, 'POST', `/sequences/${sequenceId}/enrollments`, body, status)).data;
}

async function newKey() {
  return (await platform.newTenant()).key();
}

describe('phone numbers and keywords', () => {
  it('normalises to E.164 and refuses what is not a number', () => {
    expect(normalizePhone('+1 (415) 555-0123')).toBe('+14155550123');
    expect(normalizePhone('415.555.0123')).toBe('+14155550123');
    expect(normalizePhone('1 415 555 0123')).toBe('+14155550123');
    expect(normalizePhone('0044 20 7946 0958')).toBe('+442079460958');
    expect(normalizePhone('+44 20 7946 0958')).toBe('+442079460958');
    for (const bad of ['', 'abc', '12345', '+0 123 456 789', '+1 123 555 0123', '+1234567890123456', '020 7946 0958', '+44 20 7946 0958 ext 2']) {
      expect(normalizePhone(bad), bad).toBeUndefined();
    }
  });

  it('reads the keyword of a message without case, spaces or punctuation', () => {
    expect(keywordOf('  stop. ')).toBe('STOP');
    expect(keywordOf('Unsubscribe!')).toBe('UNSUBSCRIBE');
    expect(keywordOf('please stop')).toBe('PLEASE STOP');
  });
});

describe('sequences', () => {
  it('creates a sequence with defaults, ordered steps and zero counts, and reads it back', async () => {
    const key = await newKey();
    const sequence = await createSequence(key);
    expect(sequence).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Follow-up',
      status: 'active',
      steps: THREE_STEPS.map((step, position) => ({ position, ...step })),
      send_window: null,
      timezone: 'UTC',
      counts: { active: 0, completed: 0, exited: 0, failed: 0 },
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: sequence.created_at,
    });
    expect((await send(key, 'GET', `/sequences/${sequence.id}`)).data).toEqual(sequence);
  });

  it('accepts a send window and any IANA zone, and refuses bad zones, windows, delays and placeholders', async () => {
    const key = await newKey();
    const window = { days: ['monday', 'friday'], start: '09:00', end: '17:30' };
    for (const timezone of ['Asia/Calcutta', 'America/New_York', 'UTC']) {
      expect(await createSequence(key, { timezone, send_window: window })).toMatchObject({ timezone, send_window: window });
    }
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ timezone: 'Mars/Olympus' }, 'timezone'],
      [{ send_window: { days: ['monday'], start: '17:00', end: '09:00' } }, 'send_window.end'],
      [{ send_window: { days: [], start: '09:00', end: '17:00' } }, 'send_window.days'],
      [{ send_window: { days: ['someday'], start: '09:00', end: '17:00' } }, 'send_window.days[0]'],
      [{ steps: [] }, 'steps'],
      [{ steps: [{ body: 'Hi {{nickname}}', delay: { amount: 0, unit: 'minutes' } }] }, 'steps[0].body'],
      [{ steps: [{ body: 'Hi', delay: { amount: -1, unit: 'minutes' } }] }, 'steps[0].delay.amount'],
      [{ steps: [{ body: 'Hi', delay: { amount: 1, unit: 'weeks' } }] }, 'steps[0].delay.unit'],
      [{ steps: [{ body: 'Hi', delay: { amount: 1.5, unit: 'days' } }] }, 'steps[0].delay.amount'],
      [{ status: 'running' }, 'status'],
      [{ name: '   ' }, 'name'],
    ];
    for (const [body, path] of bad) {
      const response = await call(platform.app, 'POST', `${BASE}/sequences`, { key, body: { name: 'X', steps: THREE_STEPS, ...body } });
      const error = expectError(response, 400, 'validation_failed');
      expect(error.details.map((detail) => detail.path)).toContain(path);
    }
  });

  it('reads a send window written with day numbers, abbreviations or hours, and returns it in one shape', async () => {
    const key = await newKey();
    const shapes: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [
        { days: [5, 1, 1], start: '9:00', end: '17:00:00' },
        { days: ['monday', 'friday'], start: '09:00', end: '17:00' },
      ],
      [
        { days: ['Sat', 'SU', 0], start_time: '08:30', end_time: '24:00' },
        { days: ['saturday', 'sunday'], start: '08:30', end: '24:00' },
      ],
      [
        { start_hour: 9, end_hour: 17 },
        { days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'], start: '09:00', end: '17:00' },
      ],
    ];
    for (const [input, stored] of shapes) expect((await createSequence(key, { send_window: input })).send_window).toEqual(stored);
    for (const [window, path] of [
      [{ days: ['monday'], end: '17:00' }, 'send_window.start'],
      [{ days: ['monday'], start: '24:00', end: '24:00' }, 'send_window.start'],
      [{ days: ['monday'], start: '09:00', end: '09:00' }, 'send_window.end'],
      [{ days: [8], start: '09:00', end: '17:00' }, 'send_window.days[0]'],
    ] as const) {
      const error = expectError(
        await call(platform.app, 'POST', `${BASE}/sequences`, { key, body: { name: 'X', steps: THREE_STEPS, send_window: window } }),
        400,
        'validation_failed',
      );
      expect(error.details.map((detail) => detail.path)).toContain(path);
    }
  });

  it('reads a step without delay as due at once', async () => {
    const key = await newKey();
    const sequence = await createSequence(key, { steps: [{ body: 'Hi' }] });
    expect(sequence.steps).toEqual([{ position: 0, body: 'Hi', delay: { amount: 0, unit: 'minutes' } }]);
  });

  it('updates fields, guards stale writes, lists newest first with a status filter', async () => {
    const key = await newKey();
    const first = await createSequence(key, { name: 'First' });
    const second = await createSequence(key, { name: 'Second', status: 'draft' });
    const updated = (await send(key, 'PATCH', `/sequences/${first.id}`, { name: 'Renamed', status: 'paused', expected_updated_at: first.updated_at })).data;
    expect(updated).toMatchObject({ name: 'Renamed', status: 'paused', steps: first.steps });
    expectError(await call(platform.app, 'PATCH', `${BASE}/sequences/${first.id}`, { key, body: { name: 'Again', expected_updated_at: first.updated_at } }), 409, 'stale_update');
    const list = await send(key, 'GET', '/sequences');
    expect(list.data.map((row: { id: string }) => row.id)).toEqual([second.id, first.id]);
    expect(list.meta).toEqual({ limit: 50, offset: 0, total: 2, has_more: false });
    expect((await send(key, 'GET', '/sequences?status=draft')).data.map((row: { id: string }) => row.id)).toEqual([second.id]);
  });

  it('deletes a sequence without enrollments and refuses one with enrollments (409 sequence_in_use)', async () => {
    const key = await newKey();
    const empty = await createSequence(key);
    expect((await send(key, 'DELETE', `/sequences/${empty.id}`)).data).toEqual({ id: empty.id, deleted: true });
    expectError(await call(platform.app, 'GET', `${BASE}/sequences/${empty.id}`, { key }), 404, 'not_found');
    const used = await createSequence(key);
    await enroll(key, used.id, { address: '+14155550123' });
    expectError(await call(platform.app, 'DELETE', `${BASE}/sequences/${used.id}`, { key }), 409, 'sequence_in_use');
  });
});

describe('enrollments', () => {
  it('enrols a person with the number normalised, step 0 due at once, source api', async () => {
    const key = await newKey();
    const sequence = await createSequence(key);
    const enrollment = await enroll(key, sequence.id, { address: '+1 (415) 555-0123', display_name: '  Ada Lovelace ' });
    expect(enrollment).toEqual({
      id: expect.stringMatching(UUID),
      sequence_id: sequence.id,
      address: '+14155550123',
      display_name: 'Ada Lovelace',
      status: 'active',
      next_position: 0,
      next_run_at: enrollment.enrolled_at,
      exit_reason: null,
      source: 'api',
      enrolled_at: expect.stringMatching(TIMESTAMP),
      last_sent_at: null,
    });
    expect((await send(key, 'GET', `/sequences/${sequence.id}/enrollments/${enrollment.id}`)).data).toEqual(enrollment);
    expect((await send(key, 'GET', `/sequences/${sequence.id}`)).data.counts).toEqual({ active: 1, completed: 0, exited: 0, failed: 0 });
  });

  it('returns the existing active enrollment with 200 for a repeat, in any spelling of the number', async () => {
    const key = await newKey();
    const sequence = await createSequence(key);
    const first = await enroll(key, sequence.id, { address: '+14155550123' });
    const again = await enroll(key, sequence.id, { address: '415-555-0123', display_name: 'Other' }, 200);
    expect(again).toEqual(first);
    expect((await send(key, 'GET', `/sequences/${sequence.id}/enrollments`)).meta.total).toBe(1);
  });

  it('enrols a batch: created, existing and suppressed people reported apart', async () => {
    const key = await newKey();
    const sequence = await createSequence(key);
    const existing = await enroll(key, sequence.id, { address: '+14155550100' });
    await send(key, 'POST', '/suppressions', { address: '+14155550199' }, 201);
    const batch = await enroll(key, sequence.id, {
      enrollments: [{ address: '+14155550101', display_name: 'Ada' }, { address: '+1 415 555 0100' }, { address: '+14155550199' }],
    });
    expect(batch).toMatchObject({ created: 1, existing: 1, refused: [{ index: 2, address: '+14155550199', code: 'address_suppressed' }] });
    expect(batch.enrollments.map((row: { address: string }) => row.address)).toEqual(['+14155550101', '+14155550100']);
    expect(batch.enrollments[1]).toEqual(existing);
    const repeat = await enroll(key, sequence.id, { enrollments: [{ address: '+14155550101' }] }, 200);
    expect(repeat).toMatchObject({ created: 0, existing: 1 });
  });

  it('refuses bad numbers (400 with the path), a suppressed number (409 address_suppressed), an archived sequence and an unknown one', async () => {
    const key = await newKey();
    const sequence = await createSequence(key);
    for (const address of ['abc', '12345', '+0 12 345']) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/sequences/${sequence.id}/enrollments`, { key, body: { address } }), 400, 'validation_failed');
      expect(error.details[0]).toMatchObject({ path: 'address', code: 'invalid_phone' });
    }
    const batchError = expectError(
      await call(platform.app, 'POST', `${BASE}/sequences/${sequence.id}/enrollments`, { key, body: { enrollments: [{ address: '+14155550123' }, { address: 'nope' }] } }),
      400,
      'validation_failed',
    );
    expect(batchError.details[0]).toMatchObject({ path: 'enrollments[1].address' });
    expectError(await call(platform.app, 'POST', `${BASE}/sequences/${sequence.id}/enrollments`, { key, body: {} }), 400, 'validation_failed');
    await send(key, 'POST', '/suppressions', { address: '+14155550123' }, 201);
    const suppressed = expectError(
      await call(platform.app, 'POST', `${BASE}/sequences/${sequence.id}/enrollments`, { key, body: { address: '(415) 555-0123' } }),
      409,
      'address_suppressed',
    );
    expect(suppressed.details[0]).toMatchObject({ path: 'address', address: '+14155550123' });
    await send(key, 'PATCH', `/sequences/${sequence.id}`, { status: 'archived' });
    expectError(await call(platform.app, 'POST', `${BASE}/sequences/${sequence.id}/enrollments`, { key, body: { address: '+14155550124' } }), 409, 'sequence_archived');
    expectError(
      await call(platform.app, 'POST', `${BASE}/sequences/00000000-0000-4000-8000-000000000000/enrollments`, { key, body: { address: '+14155550124' } }),
      404,
      'not_found',
    );
    expect((await send(key, 'GET', `/sequences/${sequence.id}/enrollments`)).meta.total).toBe(0);
  });

  it('DELETE takes the person off: exited with removed, the same reply on repeat; they may enrol again', async () => {
    const key = await newKey();
    const sequence = await createSequence(key);
    const enrollment = await enroll(key, sequence.id, { address: '+14155550123' });
    const removed = (await send(key, 'DELETE', `/sequences/${sequence.id}/enrollments/${enrollment.id}`)).data;
    expect(removed).toEqual({ ...enrollment, status: 'exited', exit_reason: 'removed', next_position: null, next_run_at: null });
    expect((await send(key, 'DELETE', `/sequences/${sequence.id}/enrollments/${enrollment.id}`)).data).toEqual(removed);
    expect((await send(key, 'GET', `/sequences/${sequence.id}/enrollments/${enrollment.id}`)).data).toEqual(removed);
    const other = await createSequence(key);
    expectError(await call(platform.app, 'DELETE', `${BASE}/sequences/${other.id}/enrollments/${enrollment.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/sequences/${other.id}/enrollments/${enrollment.id}`, { key }), 404, 'not_found');
    const again = await enroll(key, sequence.id, { address: '+14155550123' });
    expect(again.id).not.toBe(enrollment.id);
    expect((await send(key, 'GET', `/sequences/${sequence.id}`)).data.counts).toEqual({ active: 1, completed: 0, exited: 1, failed: 0 });
  });

  it('lists newest first with the status filter, limit 1-200, offset and meta', async () => {
    const key = await newKey();
    const sequence = await createSequence(key);
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      platform.clock.advance(1000);
      ids.push((await enroll(key, sequence.id, { address: `+1415555010${i}` })).id);
    }
    await send(key, 'DELETE', `/sequences/${sequence.id}/enrollments/${ids[1]}`);
    const all = await send(key, 'GET', `/sequences/${sequence.id}/enrollments`);
    expect(all.data.map((row: { id: string }) => row.id)).toEqual([...ids].reverse());
    expect(all.meta).toEqual({ limit: 50, offset: 0, total: 5, has_more: false });
    const page = await send(key, 'GET', `/sequences/${sequence.id}/enrollments?limit=2&offset=1`);
    expect(page.data.map((row: { id: string }) => row.id)).toEqual([ids[3], ids[2]]);
    expect(page.meta).toEqual({ limit: 2, offset: 1, total: 5, has_more: true });
    const exited = await send(key, 'GET', `/sequences/${sequence.id}/enrollments?status=exited`);
    expect(exited.data.map((row: { id: string }) => row.id)).toEqual([ids[1]]);
    expect(exited.meta).toEqual({ limit: 50, offset: 0, total: 1, has_more: false });
    expect((await send(key, 'GET', `/sequences/${sequence.id}/enrollments?status=completed`)).meta.total).toBe(0);
    expect((await send(key, 'GET', `/sequences/${sequence.id}/enrollments?limit=200`)).meta.limit).toBe(200);
    for (const query of ['limit=0', 'limit=201', 'offset=-1', 'status=paused', 'limit=abc']) {
      const error = expectError(await call(platform.app, 'GET', `${BASE}/sequences/${sequence.id}/enrollments?${query}`, { key }), 400, 'validation_failed');
      expect(error.details[0]!.path).toBe(query.split('=')[0]);
    }
    expectError(await call(platform.app, 'GET', `${BASE}/sequences/00000000-0000-4000-8000-000000000000/enrollments`, { key }), 404, 'not_found');
  });

  it('keeps every tenant and mode apart', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const sequence = await createSequence(key);
    const enrollment = await enroll(key, sequence.id, { address: '+14155550123' });
    const otherKey = await newKey();
    expectError(await call(platform.app, 'GET', `${BASE}/sequences/${sequence.id}/enrollments/${enrollment.id}`, { key: otherKey }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/sequences/${sequence.id}/enrollments/${enrollment.id}`, { key: await tenant.key({ mode: 'live' }) }), 404, 'not_found');
  });

  it('honours Idempotency-Key on enrolment: one enrollment, the same reply', async () => {
    const key = await newKey();
    const sequence = await createSequence(key);
    const headers = { 'idempotency-key': '6f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c' };
    const first = await call(platform.app, 'POST', `${BASE}/sequences/${sequence.id}/enrollments`, { key, body: { address: '+14155550123' }, headers });
    const second = await call(platform.app, 'POST', `${BASE}/sequences/${sequence.id}/enrollments`, { key, body: { address: '+14155550123' }, headers });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.json()).toEqual(first.json());
    expectError(
      await call(platform.app, 'POST', `${BASE}/sequences/${sequence.id}/enrollments`, { key, body: { address: '+14155550124' }, headers }),
      409,
      'idempotency_key_conflict',
    );
  });
});

describe('inbound messages and the suppression list', () => {
  it('a reply exits every active enrollment of the number with replied', async () => {
    const key = await newKey();
    const [one, two] = [await createSequence(key), await createSequence(key)];
    const a = await enroll(key, one.id, { address: '+14155550123' });
    const b = await enroll(key, two.id, { address: '+14155550123' });
    const other = await enroll(key, one.id, { address: '+14155550124' });
    const result = (await send(key, 'POST', '/inbound', { from: '+1 415 555 0123', to: '+15005550006', body: 'Thanks, call me tomorrow' })).data;
    expect(result).toMatchObject({ action: 'replied', exited: 2, suppressed: false, message: { direction: 'inbound', from: '+14155550123', status: 'received' } });
    for (const [sequence, enrollment] of [
      [one, a],
      [two, b],
    ]) {
      expect((await send(key, 'GET', `/sequences/${sequence.id}/enrollments/${enrollment.id}`)).data).toMatchObject({
        status: 'exited',
        exit_reason: 'replied',
        next_run_at: null,
      });
    }
    expect((await send(key, 'GET', `/sequences/${one.id}/enrollments/${other.id}`)).data.status).toBe('active');
    const inbound = await send(key, 'GET', '/messages?direction=inbound&address=%2B14155550123');
    expect(inbound.data).toEqual([result.message]);
    expect((await send(key, 'GET', '/messages?from=%2B14155550123')).data).toEqual([result.message]);
    expect((await send(key, 'GET', '/messages?to=%2B14155550123')).data).toEqual([]);
    expect((await send(key, 'GET', '/messages?to=not-a-number')).data).toEqual([]);
  });

  it('STOP-family keywords suppress the number and exit with opted_out; START and UNSTOP remove it', async () => {
    const key = await newKey();
    const sequence = await createSequence(key);
    for (const [index, word] of ['STOP', 'stopall', 'Unsubscribe', 'CANCEL', 'end', 'QUIT.'].entries()) {
      const address = `+1415555020${index}`;
      const enrollment = await enroll(key, sequence.id, { address });
      const result = (await send(key, 'POST', '/inbound', { from: address, to: '+15005550006', body: word })).data;
      expect(result).toMatchObject({ action: 'opted_out', exited: 1, suppressed: true });
      expect((await send(key, 'GET', `/sequences/${sequence.id}/enrollments/${enrollment.id}`)).data).toMatchObject({ status: 'exited', exit_reason: 'opted_out' });
      expectError(await call(platform.app, 'POST', `${BASE}/sequences/${sequence.id}/enrollments`, { key, body: { address } }), 409, 'address_suppressed');
    }
    const list = await send(key, 'GET', '/suppressions');
    expect(list.meta.total).toBe(6);
    expect(list.data[0]).toEqual({ id: expect.stringMatching(UUID), address: '+14155550205', reason: 'opted_out', note: null, created_at: expect.stringMatching(TIMESTAMP) });
    expect((await send(key, 'POST', '/inbound', { from: '+14155550200', to: '+15005550006', body: 'START' })).data).toMatchObject({
      action: 'opted_in',
      exited: 0,
      suppressed: false,
    });
    expect((await send(key, 'POST', '/inbound', { from: '+14155550201', to: '+15005550006', body: 'unstop' })).data).toMatchObject({ action: 'opted_in', suppressed: false });
    expect((await send(key, 'GET', '/suppressions')).meta.total).toBe(4);
    expect((await enroll(key, sequence.id, { address: '+14155550200' })).status).toBe('active');
  });

  it('edits the list by hand: add (201, then 200 for a repeat), filter, fetch, delete', async () => {
    const key = await newKey();
    const sequence = await createSequence(key);
    const enrollment = await enroll(key, sequence.id, { address: '+14155550123' });
    const added = (await send(key, 'POST', '/suppressions', { address: '415 555 0123', note: 'Asked by phone' }, 201)).data;
    expect(added).toEqual({ id: expect.stringMatching(UUID), address: '+14155550123', reason: 'manual', note: 'Asked by phone', created_at: expect.stringMatching(TIMESTAMP) });
    expect((await send(key, 'POST', '/suppressions', { address: '+14155550123' }, 200)).data).toEqual(added);
    expect((await send(key, 'GET', `/sequences/${sequence.id}/enrollments/${enrollment.id}`)).data).toMatchObject({ status: 'exited', exit_reason: 'opted_out' });
    expect((await send(key, 'GET', '/suppressions?address=%2B1%20415%20555%200123')).data).toEqual([added]);
    expect((await send(key, 'GET', '/suppressions?reason=opted_out')).data).toEqual([]);
    expect((await send(key, 'GET', `/suppressions/${added.id}`)).data).toEqual(added);
    expect((await send(key, 'GET', `/suppressions/${encodeURIComponent('+14155550123')}`)).data).toEqual(added);
    expectError(await call(platform.app, 'GET', `${BASE}/suppressions/${encodeURIComponent('+14155550000')}`, { key }), 404, 'not_found');
    expect((await send(key, 'DELETE', `/suppressions/${encodeURIComponent('+1 415 555 0123')}`)).data).toEqual({ id: added.id, address: '+14155550123', deleted: true });
    expectError(await call(platform.app, 'DELETE', `${BASE}/suppressions/${encodeURIComponent('+14155550123')}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'DELETE', `${BASE}/suppressions/${added.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'POST', `${BASE}/suppressions`, { key, body: { address: 'x' } }), 400, 'validation_failed');
  });

  it('acts once on an inbound message sent twice with the same provider_message_id', async () => {
    const key = await newKey();
    const sequence = await createSequence(key);
    await enroll(key, sequence.id, { address: '+14155550123' });
    const body = { from: '+14155550123', to: '+15005550006', body: 'STOP', provider_message_id: 'SMabc123' };
    const first = (await send(key, 'POST', '/inbound', body)).data;
    expect(first).toMatchObject({ action: 'opted_out', exited: 1, suppressed: true, message: { provider_message_id: 'SMabc123' } });
    const again = (await send(key, 'POST', '/inbound', body)).data;
    expect(again).toEqual({ ...first, exited: 0 });
    expect((await send(key, 'GET', '/messages?direction=inbound')).meta.total).toBe(1);
    const other = await newKey();
    expect((await send(other, 'POST', '/inbound', body)).data.message.id).not.toBe(first.message.id);
  });

  it('refuses an inbound message from something that is not a number', async () => {
    const key = await newKey();
    const error = expectError(await call(platform.app, 'POST', `${BASE}/inbound`, { key, body: { from: 'hello', to: '+15005550006', body: 'hi' } }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: 'from' });
    expectError(await call(platform.app, 'POST', `${BASE}/inbound`, { key, body: { from: '+14155550123', body: 'hi' } }), 400, 'validation_failed');
  });
});

// Route security: every route, with a fixture of the caller's own tenant where one is addressed.

async function world(key: string) {
  const sequence = await createSequence(key);
  const enrollment = await enroll(key, sequence.id, { address: '+14155550123' });
  const suppression = (await send(key, 'POST', '/suppressions', { address: '+14155550999' }, 201)).data;
  const message = (await send(key, 'POST', '/inbound', { from: '+14155550777', to: '+15005550006', body: 'hello' })).data.message;
  await platform.runtime.jobs.runDue(); // step 0 is due at once: an outbound message
  const [sent] = (await send(key, 'GET', `/messages?direction=outbound&enrollment_id=${enrollment.id}`)).data;
  return { sequence, enrollment, suppression, message, sent };
}
type World = Awaited<ReturnType<typeof world>>;

const VIEW = 'service.outreach.view';
const MANAGE = 'service.outreach.manage';

const listRoutes: Array<{ url: (w: World) => string }> = [
  { url: () => `${BASE}/sequences` },
  { url: (w) => `${BASE}/sequences/${w.sequence.id}/enrollments` },
  { url: () => `${BASE}/messages` },
  { url: () => `${BASE}/suppressions` },
];
for (const route of listRoutes) describeRouteSecurity(() => platform, { method: 'GET', scope: VIEW, setup: world, url: route.url, addressesOneRow: false });

const oneRowRoutes: Array<{ method: 'GET' | 'PATCH' | 'DELETE' | 'POST'; scope: string; url: (w: World) => string; body?: (w: World) => unknown }> = [
  { method: 'GET', scope: VIEW, url: (w) => `${BASE}/sequences/${w.sequence.id}` },
  { method: 'PATCH', scope: MANAGE, url: (w) => `${BASE}/sequences/${w.sequence.id}`, body: () => ({ name: 'Renamed' }) },
  { method: 'POST', scope: MANAGE, url: (w) => `${BASE}/sequences/${w.sequence.id}/enrollments`, body: () => ({ address: '+14155550555' }) },
  { method: 'GET', scope: VIEW, url: (w) => `${BASE}/sequences/${w.sequence.id}/enrollments/${w.enrollment.id}` },
  { method: 'DELETE', scope: MANAGE, url: (w) => `${BASE}/sequences/${w.sequence.id}/enrollments/${w.enrollment.id}` },
  { method: 'GET', scope: VIEW, url: (w) => `${BASE}/messages/${w.message.id}` },
  { method: 'POST', scope: MANAGE, url: (w) => `${BASE}/messages/${w.sent.id}/status`, body: () => ({ status: 'delivered' }) },
  { method: 'GET', scope: VIEW, url: (w) => `${BASE}/suppressions/${w.suppression.id}` },
  { method: 'DELETE', scope: MANAGE, url: (w) => `${BASE}/suppressions/${w.suppression.id}` },
];
for (const route of oneRowRoutes) describeRouteSecurity(() => platform, { ...route, setup: world, addressesOneRow: true });

describeRouteSecurity(() => platform, {
  method: 'DELETE',
  scope: MANAGE,
  setup: (key) => createSequence(key),
  url: (sequence: { id: string }) => `${BASE}/sequences/${sequence.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: MANAGE,
  url: () => `${BASE}/sequences`,
  body: () => ({ name: 'S', steps: THREE_STEPS }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: MANAGE,
  url: () => `${BASE}/suppressions`,
  body: () => ({ address: '+14155550888' }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: MANAGE,
  url: () => `${BASE}/inbound`,
  body: () => ({ from: '+14155550888', to: '+15005550006', body: 'hi' }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: MANAGE,
  setup: world,
  url: () => `${BASE}/status-callbacks`,
  body: (w: World) => ({ message_id: w.sent.id, status: 'delivered' }),
  addressesOneRow: true,
});
