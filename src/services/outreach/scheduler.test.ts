import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../lib/clock.js';
import { JobRunner } from '../../platform/jobs/runner.js';
import { createLogger } from '../../runtime.js';
import { ProviderError, SandboxProvider, type MessagingProvider } from './provider.js';
import { registerOutreachJobs, STEP_JOB } from './scheduler.js';

let platform: TestPlatform;
/**
 * Runs outreach jobs only: on PostgreSQL every test file of a run shares the jobs table while
 * each has its own clock, and this file moves its clock years ahead (see catalog's tests).
 */
let runner: JobRunner;
beforeAll(async () => {
  platform = await startTestPlatform();
  runner = outreachRunner(new SandboxProvider());
});
afterAll(() => platform.close());

function outreachRunner(provider: MessagingProvider): JobRunner {
  const jobs = new JobRunner({ db: platform.database.db, clock: platform.clock, log: createLogger('silent') });
  registerOutreachJobs({ db: platform.database.db, jobs, events: platform.runtime.events, providers: { test: provider, live: provider } });
  return jobs;
}

const BASE = '/api/v1/services/outreach';

async function send(key: string, method: string, path: string, body?: unknown, status = 200) {
  const response = await call(platform.app, method, `${BASE}${path}`, { key, ...(body === undefined ? {} : { body }) });
  expect(response.statusCode, response.body).toBe(status);
  return response.json();
}

interface EnrollmentData {
  id: string;
  status: string;
  next_position: number | null;
  next_run_at: string | null;
  last_sent_at: string | null;
  exit_reason: string | null;
}

interface MessageData {
  id: string;
  position: number;
  body: string;
  status: string;
  sent_at: string | null;
  provider_message_id: string | null;
  attempts: number;
  error: string | null;
}

const WEEKDAYS = { days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], start: '09:00', end: '17:00' };

/**
 * Freezes the clock on a Saturday in January (no daylight saving in New York, UTC-5) of a year
 * at least two years ahead of the clock, later than anything earlier tests left queued, and
 * returns a helper giving the instant of a local New York time `days` after that Saturday.
 */
function freshSaturday(): (days: number, hour: number, minute?: number) => Date {
  const year = platform.clock.now().getUTCFullYear() + 2;
  let day = 1;
  while (new Date(Date.UTC(year, 0, day)).getUTCDay() !== 6) day += 1;
  const local = (days: number, hour: number, minute = 0) => new Date(Date.UTC(year, 0, day + days, hour + 5, minute));
  platform.clock.freeze(local(0, 12));
  return local;
}

async function setup(steps: Array<{ body: string; delay: { amount: number; unit: string } }>, sequence: Record<string, unknown> = {}) {
  const tenant = await platform.newTenant();
  const key = await tenant.key();
  const created = (await send(key, 'POST', '/sequences', { name: 'Follow-up', steps, ...sequence }, 201)).data;
  return { tenantId: tenant.id, key, sequence: created as { id: string } };
}

async function enroll(key: string, sequenceId: string, address: string, displayName?: string): Promise<EnrollmentData> {
  return (await send(key, 'POST', `/sequences/${sequenceId}/enrollments`, { address, ...(displayName ? { display_name: displayName } : {}) }, 201)).data;
}

async function enrollment(key: string, sequenceId: string, id: string): Promise<EnrollmentData> {
  return (await send(key, 'GET', `/sequences/${sequenceId}/enrollments/${id}`)).data;
}

async function messagesOf(key: string, enrollmentId: string): Promise<MessageData[]> {
  return (await send(key, 'GET', `/messages?enrollment_id=${enrollmentId}&limit=200`)).data;
}

const THREE_STEPS = [
  { body: 'Hi {{display_name}}!', delay: { amount: 0, unit: 'minutes' } },
  { body: 'Still keen, {{first_name}}?', delay: { amount: 2, unit: 'hours' } },
  { body: 'Last note to {{address}}.', delay: { amount: 1, unit: 'days' } },
];

describe('the scheduler', () => {
  it('runs a three-step sequence to completed at the right times, inside the send window only', async () => {
    const at = freshSaturday();
    const { key, sequence } = await setup(THREE_STEPS, { send_window: WEEKDAYS, timezone: 'America/New_York' });
    const enrolled = await enroll(key, sequence.id, '+14155550123', 'Ada Lovelace');
    // Enrolled on a Saturday: step 0 (no delay) waits for Monday 09:00 New York time.
    expect(enrolled).toMatchObject({ status: 'active', next_position: 0, next_run_at: at(2, 9).toISOString(), last_sent_at: null });
    await runner.runDue();
    platform.clock.freeze(at(2, 8, 59));
    await runner.runDue();
    expect(await messagesOf(key, enrolled.id)).toEqual([]);

    platform.clock.freeze(at(2, 9));
    await runner.runDue();
    expect(await enrollment(key, sequence.id, enrolled.id)).toMatchObject({
      status: 'active',
      next_position: 1,
      next_run_at: at(2, 11).toISOString(),
      last_sent_at: at(2, 9).toISOString(),
    });

    platform.clock.freeze(at(2, 10, 59));
    await runner.runDue();
    expect(await messagesOf(key, enrolled.id)).toHaveLength(1);
    platform.clock.freeze(at(2, 11));
    await runner.runDue();
    // Step 2 waits a day after step 1: Tuesday 11:00.
    expect(await enrollment(key, sequence.id, enrolled.id)).toMatchObject({ next_position: 2, next_run_at: at(3, 11).toISOString(), last_sent_at: at(2, 11).toISOString() });

    platform.clock.freeze(at(3, 11));
    await runner.runDue();
    const done = await enrollment(key, sequence.id, enrolled.id);
    expect(done).toMatchObject({ status: 'completed', next_position: null, next_run_at: null, exit_reason: null, last_sent_at: at(3, 11).toISOString() });

    const messages = await messagesOf(key, enrolled.id);
    expect(messages.map((message) => [message.position, message.body, message.status, message.sent_at])).toEqual([
      [2, 'Last note to +14155550123.', 'sent', at(3, 11).toISOString()],
      [1, 'Still keen, Ada?', 'sent', at(2, 11).toISOString()],
      [0, 'Hi Ada Lovelace!', 'sent', at(2, 9).toISOString()],
    ]);
    expect(messages.every((message) => /^SM[0-9a-f]{32}$/.test(message.provider_message_id ?? ''))).toBe(true);
    platform.clock.freeze(at(10, 11));
    await runner.runDue();
    expect(await messagesOf(key, enrolled.id)).toHaveLength(3);
    expect((await send(key, 'GET', `/sequences/${sequence.id}`)).data.counts).toEqual({ active: 0, completed: 1, exited: 0, failed: 0 });
  });

  it('moves a step that falls outside the window to the next opening', async () => {
    const at = freshSaturday();
    const { key, sequence } = await setup(THREE_STEPS, { send_window: WEEKDAYS, timezone: 'America/New_York' });
    platform.clock.freeze(at(6, 16, 30)); // Friday 16:30
    const enrolled = await enroll(key, sequence.id, '+14155550123');
    expect(enrolled.next_run_at).toBe(at(6, 16, 30).toISOString());
    await runner.runDue();
    // Step 1 is due two hours later, 18:30 on a Friday: it goes out on Monday at 09:00.
    expect(await enrollment(key, sequence.id, enrolled.id)).toMatchObject({ next_position: 1, next_run_at: at(9, 9).toISOString() });
    platform.clock.freeze(at(7, 12));
    await runner.runDue();
    expect(await messagesOf(key, enrolled.id)).toHaveLength(1);
    platform.clock.freeze(at(9, 9));
    await runner.runDue();
    expect(await messagesOf(key, enrolled.id)).toHaveLength(2);
  });

  it('sends a step without delay on the next run, without the clock moving', async () => {
    freshSaturday();
    const { key, sequence } = await setup(THREE_STEPS);
    const enrolled = await enroll(key, sequence.id, '+14155550123');
    await runner.runDue();
    expect((await messagesOf(key, enrolled.id)).map((message) => message.position)).toEqual([0]);
  });

  it('sends each step once with two schedulers at once and duplicated jobs', async () => {
    const at = freshSaturday();
    const { tenantId, key, sequence } = await setup(THREE_STEPS);
    const enrolled: EnrollmentData[] = [];
    for (let i = 0; i < 6; i += 1) enrolled.push(await enroll(key, sequence.id, `+1415555010${i}`));
    const second = outreachRunner(new SandboxProvider());
    const duplicate = async () => {
      for (const row of enrolled) {
        await second.enqueue({ kind: STEP_JOB, runAt: platform.clock.now(), payload: { enrollment_id: row.id }, tenantId, mode: 'test' });
      }
    };
    for (const when of [at(0, 12), at(0, 14), at(1, 14)]) {
      platform.clock.freeze(when);
      await duplicate();
      await Promise.all([runner.runDue(), second.runDue(), runner.runDue(), second.runDue()]);
    }
    const all = (await send(key, 'GET', `/messages?sequence_id=${sequence.id}&limit=200`)).data as MessageData[];
    expect(all).toHaveLength(18);
    for (const row of enrolled) {
      expect((await messagesOf(key, row.id)).map((message) => message.position).sort()).toEqual([0, 1, 2]);
      expect((await enrollment(key, sequence.id, row.id)).status).toBe('completed');
    }
  });

  it('retries a failing provider with backoff and marks the enrollment failed after the last attempt', async () => {
    freshSaturday();
    const { key, sequence } = await setup(THREE_STEPS);
    const enrolled = await enroll(key, sequence.id, '+15005550009'); // a sandbox number that cannot receive SMS
    const start = platform.clock.now();
    await runner.runDue();
    let [message] = await messagesOf(key, enrolled.id);
    expect(message).toMatchObject({ status: 'queued', attempts: 1, error: expect.stringContaining('cannot receive SMS') });
    expect(await enrollment(key, sequence.id, enrolled.id)).toMatchObject({ status: 'active', next_position: 0, next_run_at: new Date(start.getTime() + MINUTE_MS).toISOString() });
    platform.clock.advance(MINUTE_MS);
    await runner.runDue();
    expect((await enrollment(key, sequence.id, enrolled.id)).next_run_at).toBe(new Date(start.getTime() + 5 * MINUTE_MS).toISOString());
    platform.clock.advance(4 * MINUTE_MS);
    await runner.runDue();
    [message] = await messagesOf(key, enrolled.id);
    expect(message).toMatchObject({ status: 'failed', attempts: 3 });
    expect(await enrollment(key, sequence.id, enrolled.id)).toMatchObject({ status: 'failed', next_position: null, next_run_at: null, last_sent_at: null });
    platform.clock.advance(DAY_MS);
    await runner.runDue();
    expect(await messagesOf(key, enrolled.id)).toHaveLength(1);
    expect((await send(key, 'GET', `/sequences/${sequence.id}/enrollments?status=failed`)).data.map((row: EnrollmentData) => row.id)).toEqual([enrolled.id]);
  });

  it('goes on after a provider failure that clears on retry', async () => {
    freshSaturday();
    let failures = 1;
    const sandbox = new SandboxProvider();
    const flaky = outreachRunner({
      name: 'sandbox',
      send: async (message) => {
        if (failures-- > 0) throw new ProviderError('provider unavailable');
        return sandbox.send(message);
      },
    });
    const { key, sequence } = await setup(THREE_STEPS.slice(0, 1));
    const enrolled = await enroll(key, sequence.id, '+14155550123');
    await flaky.runDue();
    platform.clock.advance(MINUTE_MS);
    await flaky.runDue();
    const [message] = await messagesOf(key, enrolled.id);
    expect(message).toMatchObject({ status: 'sent', attempts: 2, error: null });
    expect(await enrollment(key, sequence.id, enrolled.id)).toMatchObject({ status: 'completed' });
  });

  it('sends a step whose job was lost, through the sweep that runs every 10 minutes', async () => {
    freshSaturday();
    const { key, sequence } = await setup(THREE_STEPS);
    const enrolled = await enroll(key, sequence.id, '+14155550123');
    await platform.database.db.deleteFrom('jobs').where('kind', '=', STEP_JOB).where('status', '=', 'queued').execute();
    await runner.runDue();
    expect(await messagesOf(key, enrolled.id)).toEqual([]);
    platform.clock.advance(25 * MINUTE_MS);
    await runner.runDue();
    await runner.runDue();
    expect((await messagesOf(key, enrolled.id)).map((message) => message.position)).toEqual([0]);
  });

  it('sends nothing while the sequence is paused and catches up when it is active again', async () => {
    freshSaturday();
    const { key, sequence } = await setup(THREE_STEPS);
    await send(key, 'PATCH', `/sequences/${sequence.id}`, { status: 'paused' });
    const enrolled = await enroll(key, sequence.id, '+14155550123');
    await runner.runDue();
    platform.clock.advance(3 * HOUR_MS);
    await runner.runDue();
    expect(await messagesOf(key, enrolled.id)).toEqual([]);
    await send(key, 'PATCH', `/sequences/${sequence.id}`, { status: 'active' });
    await runner.runDue();
    expect((await messagesOf(key, enrolled.id)).map((message) => message.position)).toEqual([0]);
  });

  it('sends nothing more after a reply or a removal', async () => {
    freshSaturday();
    const { key, sequence } = await setup(THREE_STEPS);
    const replied = await enroll(key, sequence.id, '+14155550123');
    const removed = await enroll(key, sequence.id, '+14155550124');
    await runner.runDue();
    await send(key, 'POST', '/inbound', { from: '+14155550123', to: '+15005550006', body: 'Who is this?' });
    await send(key, 'DELETE', `/sequences/${sequence.id}/enrollments/${removed.id}`);
    platform.clock.advance(3 * DAY_MS);
    await runner.runDue();
    expect(await messagesOf(key, replied.id)).toHaveLength(1);
    expect(await messagesOf(key, removed.id)).toHaveLength(1);
    expect(await enrollment(key, sequence.id, replied.id)).toMatchObject({ status: 'exited', exit_reason: 'replied' });
  });
});

describe('delivery status', () => {
  it('moves a sent message to delivered or failed by callback, never back, and filters the list by status', async () => {
    freshSaturday();
    const { key, sequence } = await setup(THREE_STEPS.slice(0, 1));
    const a = await enroll(key, sequence.id, '+14155550123');
    const b = await enroll(key, sequence.id, '+14155550124');
    await runner.runDue();
    const [first] = await messagesOf(key, a.id);
    const [second] = await messagesOf(key, b.id);
    expect(first!.status).toBe('sent');
    const delivered = (await send(key, 'POST', '/status-callbacks', { provider_message_id: first!.provider_message_id, status: 'delivered' })).data;
    expect(delivered).toMatchObject({ id: first!.id, status: 'delivered' });
    expect((await send(key, 'POST', '/status-callbacks', { message_id: first!.id, status: 'sent' })).data.status).toBe('delivered');
    expect((await send(key, 'POST', `/messages/${first!.id}/status`, { status: 'failed' })).data).toEqual(delivered);
    const failed = (await send(key, 'POST', '/status-callbacks', { message_id: second!.id, status: 'undelivered', error_message: '30003: Unreachable destination handset' })).data;
    expect(failed).toMatchObject({ status: 'failed', error: '30003: Unreachable destination handset' });
    expect((await send(key, 'GET', `/messages/${second!.id}`)).data).toEqual(failed);
    expect((await send(key, 'GET', '/messages?status=delivered')).data.map((message: MessageData) => message.id)).toEqual([first!.id]);
    expect((await send(key, 'GET', '/messages?direction=outbound&address=%2B14155550124')).data.map((message: MessageData) => message.id)).toEqual([second!.id]);
    expectError(await call(platform.app, 'POST', `${BASE}/status-callbacks`, { key, body: { provider_message_id: 'SMunknown', status: 'delivered' } }), 404, 'not_found');
    expectError(await call(platform.app, 'POST', `${BASE}/status-callbacks`, { key, body: { status: 'delivered' } }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', `${BASE}/messages/00000000-0000-4000-8000-000000000000/status`, { key, body: { status: 'delivered' } }), 404, 'not_found');
    const third = await enroll(key, sequence.id, '+14155550125');
    await runner.runDue();
    const [queuedThenDelivered] = await messagesOf(key, third.id);
    expect((await send(key, 'POST', `/messages/${queuedThenDelivered!.id}/status`, { status: 'delivered' })).data).toMatchObject({ status: 'delivered' });
  });
});
