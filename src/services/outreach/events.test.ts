import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { asJson, recordedEvents } from '../../../test/recorded-events.js';
import { JobRunner } from '../../platform/jobs/runner.js';
import { createLogger } from '../../runtime.js';
import { SandboxProvider } from './provider.js';
import { registerOutreachJobs } from './scheduler.js';

let platform: TestPlatform;
/** Runs outreach jobs only, as scheduler.test.ts explains. */
let runner: JobRunner;
beforeAll(async () => {
  platform = await startTestPlatform();
  runner = new JobRunner({ db: platform.database.db, clock: platform.clock, log: createLogger('silent') });
  const sandbox = new SandboxProvider();
  registerOutreachJobs({ db: platform.database.db, jobs: runner, events: platform.runtime.events, providers: { test: sandbox, live: sandbox } });
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/outreach';
const STEPS = [
  { body: 'Hi {{display_name}}!', delay: { amount: 0, unit: 'minutes' } },
  { body: 'Bye.', delay: { amount: 1, unit: 'hours' } },
];

async function send(key: string, method: string, path: string, body?: unknown, status = 200, headers: Record<string, string> = {}) {
  const response = await call(platform.app, method, `${BASE}${path}`, { key, headers, ...(body === undefined ? {} : { body }) });
  expect(response.statusCode, response.body).toBe(status);
  return response.json().data;
}

async function newTenant() {
  const tenant = await platform.newTenant();
  return { tenantId: tenant.id, key: await tenant.key() };
}

/** Exactly `count` events of `type`, the newest deep-equal to `current` (what GET shows now). */
async function expectEvents(tenantId: string, type: string, current: unknown, count = 1) {
  const recorded = await recordedEvents(platform, tenantId, type);
  expect(recorded, type).toHaveLength(count);
  if (count > 0) expect(asJson(recorded[0]!.data.object)).toEqual(asJson(current));
}

describe('outreach events', () => {
  it('records sequence created, updated and deleted once each, as GET shows the sequence', async () => {
    const { tenantId, key } = await newTenant();
    const created = await send(key, 'POST', '/sequences', { name: 'S', steps: STEPS }, 201, { 'idempotency-key': '7a1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c' });
    await send(key, 'POST', '/sequences', { name: 'S', steps: STEPS }, 201, { 'idempotency-key': '7a1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c' });
    await expectEvents(tenantId, 'outreach.sequence.created', await send(key, 'GET', `/sequences/${created.id}`));
    const updated = await send(key, 'PATCH', `/sequences/${created.id}`, { name: 'Renamed' });
    await expectEvents(tenantId, 'outreach.sequence.updated', updated);
    expectError(await call(platform.app, 'PATCH', `${BASE}/sequences/${created.id}`, { key, body: { name: 'X', expected_updated_at: created.updated_at } }), 409, 'stale_update');
    await expectEvents(tenantId, 'outreach.sequence.updated', updated);
    await send(key, 'DELETE', `/sequences/${created.id}`);
    await expectEvents(tenantId, 'outreach.sequence.deleted', updated);
  });

  it('records an enrollment once: not for a repeat, a replay or a refused number; exited once for DELETE', async () => {
    const { tenantId, key } = await newTenant();
    const sequence = await send(key, 'POST', '/sequences', { name: 'S', steps: STEPS }, 201);
    const headers = { 'idempotency-key': '8a1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c' };
    const enrollment = await send(key, 'POST', `/sequences/${sequence.id}/enrollments`, { address: '+14155550123' }, 201, headers);
    await send(key, 'POST', `/sequences/${sequence.id}/enrollments`, { address: '+14155550123' }, 201, headers);
    await send(key, 'POST', `/sequences/${sequence.id}/enrollments`, { address: '+14155550123' }, 200);
    await send(key, 'POST', '/suppressions', { address: '+14155550999' }, 201);
    expectError(await call(platform.app, 'POST', `${BASE}/sequences/${sequence.id}/enrollments`, { key, body: { address: '+14155550999' } }), 409, 'address_suppressed');
    await expectEvents(tenantId, 'outreach.enrollment.created', enrollment);
    const removed = await send(key, 'DELETE', `/sequences/${sequence.id}/enrollments/${enrollment.id}`);
    await send(key, 'DELETE', `/sequences/${sequence.id}/enrollments/${enrollment.id}`);
    await expectEvents(tenantId, 'outreach.enrollment.exited', removed);
    await expectEvents(tenantId, 'outreach.suppression.created', await send(key, 'GET', `/suppressions?address=%2B14155550999`).then((rows) => rows[0]));
  });

  it('records each message sent and the completion once, also when the scheduler runs again', async () => {
    const { tenantId, key } = await newTenant();
    const sequence = await send(key, 'POST', '/sequences', { name: 'S', steps: STEPS }, 201);
    const enrollment = await send(key, 'POST', `/sequences/${sequence.id}/enrollments`, { address: '+14155550123', display_name: 'Ada' }, 201);
    await runner.runDue();
    await runner.runDue();
    const [first] = await send(key, 'GET', `/messages?enrollment_id=${enrollment.id}`);
    await expectEvents(tenantId, 'outreach.message.sent', first);
    platform.clock.advance(3600 * 1000);
    await runner.runDue();
    await runner.runDue();
    const messages = await send(key, 'GET', `/messages?enrollment_id=${enrollment.id}`);
    await expectEvents(tenantId, 'outreach.message.sent', messages[0], 2);
    await expectEvents(tenantId, 'outreach.enrollment.completed', await send(key, 'GET', `/sequences/${sequence.id}/enrollments/${enrollment.id}`));
    const delivered = await send(key, 'POST', '/status-callbacks', { message_id: first.id, status: 'delivered' });
    await send(key, 'POST', '/status-callbacks', { message_id: first.id, status: 'delivered' });
    await expectEvents(tenantId, 'outreach.message.status_changed', delivered);
  });

  it('records an inbound STOP: received, suppression created, enrollment exited; START deletes the suppression', async () => {
    const { tenantId, key } = await newTenant();
    const sequence = await send(key, 'POST', '/sequences', { name: 'S', steps: STEPS }, 201);
    const enrollment = await send(key, 'POST', `/sequences/${sequence.id}/enrollments`, { address: '+14155550123' }, 201);
    const result = await send(key, 'POST', '/inbound', { from: '+14155550123', to: '+15005550006', body: 'STOP' });
    await expectEvents(tenantId, 'outreach.message.received', result.message);
    const [suppression] = await send(key, 'GET', '/suppressions');
    await expectEvents(tenantId, 'outreach.suppression.created', suppression);
    await expectEvents(tenantId, 'outreach.enrollment.exited', await send(key, 'GET', `/sequences/${sequence.id}/enrollments/${enrollment.id}`));
    await send(key, 'POST', '/inbound', { from: '+14155550123', to: '+15005550006', body: 'STOP' });
    await expectEvents(tenantId, 'outreach.suppression.created', suppression);
    await expectEvents(tenantId, 'outreach.enrollment.exited', await send(key, 'GET', `/sequences/${sequence.id}/enrollments/${enrollment.id}`));
    await send(key, 'POST', '/inbound', { from: '+14155550123', to: '+15005550006', body: 'START' });
    await expectEvents(tenantId, 'outreach.suppression.deleted', suppression);
  });
});
