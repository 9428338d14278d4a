import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { HOUR_MS } from '../../lib/clock.js';
import { nextOccurrence, occurrences, parseRule } from './recurrence.js';
import { createGenerateOccurrencesHandler, GENERATE_OCCURRENCES_JOB } from './recurring-job.js';
import { BASE, DAY, fixtures } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { send, assign } = fixtures(() => platform);

/** 09:00 UTC on the first Monday at least 30 days after the real clock. */
function aMonday(): Date {
  const day = new Date(Date.now() + 30 * DAY);
  const monday = new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), 9));
  while (monday.getUTCDay() !== 1) monday.setUTCDate(monday.getUTCDate() + 1);
  return monday;
}
const iso = (date: Date) => date.toISOString();
const plusDays = (date: Date, days: number) => new Date(date.getTime() + days * DAY);

describe('RRULE subset', () => {
  const start = aMonday();
  const far = plusDays(start, 400);
  const at = (rule: string, from = start, through = far) => occurrences(parseRule(rule), from, through).map((entry) => iso(entry.at));

  it('daily with interval and count', () => {
    expect(at('FREQ=DAILY;INTERVAL=2;COUNT=3')).toEqual([iso(start), iso(plusDays(start, 2)), iso(plusDays(start, 4))]);
  });

  it('weekly on several days, with UNTIL', () => {
    const until = plusDays(start, 9).toISOString().slice(0, 10).replace(/-/g, '');
    expect(at(`FREQ=WEEKLY;BYDAY=MO,FR;UNTIL=${until}`)).toEqual([iso(start), iso(plusDays(start, 4)), iso(plusDays(start, 7))]);
    expect(at('RRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=2')).toEqual([iso(start), iso(plusDays(start, 14))]);
  });

  it('monthly on the same day, or on an ordinal weekday', () => {
    const first = at('FREQ=MONTHLY;COUNT=2');
    expect(first[0]).toBe(iso(start));
    expect(new Date(first[1]!).getUTCDate()).toBe(start.getUTCDate());
    for (const instant of at('FREQ=MONTHLY;BYDAY=-1FR;COUNT=3')) {
      const date = new Date(instant);
      expect(date.getUTCDay()).toBe(5);
      expect(plusDays(date, 7).getUTCMonth()).not.toBe(date.getUTCMonth());
    }
  });

  it('finds the next instant after a time', () => {
    expect(iso(nextOccurrence(parseRule('FREQ=DAILY'), start, plusDays(start, 2.5))!)).toBe(iso(plusDays(start, 3)));
    expect(nextOccurrence(parseRule('FREQ=DAILY;COUNT=2'), start, plusDays(start, 1))).toBeUndefined();
  });

  it('refuses what it does not support', () => {
    for (const rule of [
      'FREQ=YEARLY',
      'FREQ=DAILY;BYHOUR=9',
      'FREQ=DAILY;COUNT=0',
      'FREQ=DAILY;COUNT=2;UNTIL=20300101',
      'FREQ=WEEKLY;BYDAY=1MO',
      'FREQ=DAILY;INTERVAL=x',
      'BYDAY=MO',
    ]) {
      expect(() => parseRule(rule), rule).toThrow();
    }
  });
});

describe('recurring tasks', () => {
  it('generates each occurrence exactly once when its time comes, assigned like the definition', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const startsAt = new Date(Math.ceil((platform.clock.now().getTime() + HOUR_MS) / 1000) * 1000);
    const definition = await send(key, 'POST', '/tasks', {
      title: 'Daily stand-up notes',
      status: 'published',
      schedule_mode: 'recurring',
      starts_at: iso(startsAt),
      due_at: iso(new Date(startsAt.getTime() + 8 * HOUR_MS)),
      recurrence_rule: 'FREQ=DAILY;COUNT=3',
      submission_mode: 'note',
    });
    expect(definition).toMatchObject({ schedule_mode: 'recurring', recurrence_rule: 'FREQ=DAILY;COUNT=3' });
    await assign(key, definition.id, [7]);
    const occurrencesNow = async () =>
      (await call(platform.app, 'GET', `${BASE}/tasks?limit=200`, { key }))
        .json()
        .data.filter((task: { recurrence_parent_id: number | null }) => task.recurrence_parent_id === definition.id);

    await platform.runtime.jobs.runDue();
    expect(await occurrencesNow()).toEqual([]);

    // startsAt was rounded up to a whole second, up to 1 s past now + 1 h: a quick run had not reached it.
    platform.clock.advance(HOUR_MS + 1000);
    await platform.runtime.jobs.runDue();
    await platform.runtime.jobs.runDue();
    let made = await occurrencesNow();
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({
      title: 'Daily stand-up notes',
      status: 'published',
      schedule_mode: 'one_time',
      source: 'schedule',
      starts_at: iso(startsAt),
      occurrence_at: iso(startsAt),
      due_at: iso(new Date(startsAt.getTime() + 8 * HOUR_MS)),
      recurrence_rule: null,
      assignment_count: 1,
    });
    const assigned = (await call(platform.app, 'GET', `${BASE}/assignments?task_id=${made[0].id}`, { key })).json().data;
    expect(assigned).toMatchObject([{ assignee_user_id: 7, assigned_by: 1, status: 'assigned' }]);

    platform.clock.advance(5 * DAY);
    await platform.runtime.jobs.runDue();
    await platform.runtime.jobs.runDue();
    made = await occurrencesNow();
    expect(made.map((task: { occurrence_at: string }) => task.occurrence_at).sort()).toEqual([iso(startsAt), iso(plusDays(startsAt, 1)), iso(plusDays(startsAt, 2))]);
  });

  it('creates each occurrence once when two runs of the job overlap', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const startsAt = new Date(Math.ceil(platform.clock.now().getTime() / 1000) * 1000 - 2.5 * DAY);
    const definition = await send(key, 'POST', '/tasks', { title: 'Daily', schedule_mode: 'recurring', starts_at: iso(startsAt), recurrence_rule: 'FREQ=DAILY', status: 'draft' });
    await send(key, 'PATCH', `/tasks/${definition.id}`, { status: 'published' });
    const handler = createGenerateOccurrencesHandler({ db: platform.database.db, events: platform.runtime.events });
    const now = platform.clock.now();
    const job = {
      id: 'overlap',
      kind: GENERATE_OCCURRENCES_JOB,
      tenantId: tenant.id,
      mode: 'test' as const,
      payload: { task_id: definition.id },
      attempts: 1,
      maxAttempts: 5,
      runAt: now,
    };
    const results = await Promise.all([handler(job, now), handler(job, now), handler(job, now)]);
    for (const result of results) expect(result).toEqual({ rescheduleAt: plusDays(startsAt, 3) });
    await platform.runtime.jobs.runDue();
    const list = (await call(platform.app, 'GET', `${BASE}/tasks?limit=200`, { key })).json();
    expect(list.meta.total).toBe(4);
    const created = await platform.runtime.events.list({ tenantId: tenant.id, mode: 'test' }, { type: 'tasks.task.created' }, { limit: 50, offset: 0 });
    expect(created.rows).toHaveLength(4);
  });

  it('generates nothing for a draft or paused definition', async () => {
    const key = await (await platform.newTenant()).key();
    const startsAt = new Date(Math.ceil(platform.clock.now().getTime() / 1000) * 1000 - HOUR_MS);
    const definition = await send(key, 'POST', '/tasks', { title: 'Weekly', schedule_mode: 'recurring', starts_at: iso(startsAt), recurrence_rule: 'FREQ=WEEKLY' });
    await platform.runtime.jobs.runDue();
    expect((await call(platform.app, 'GET', `${BASE}/tasks`, { key })).json().meta.total).toBe(1);
    await send(key, 'PATCH', `/tasks/${definition.id}`, { status: 'published' });
    await platform.runtime.jobs.runDue();
    expect((await call(platform.app, 'GET', `${BASE}/tasks`, { key })).json().meta.total).toBe(2);
    await send(key, 'PATCH', `/tasks/${definition.id}`, { status: 'paused' });
    platform.clock.advance(8 * DAY);
    await platform.runtime.jobs.runDue();
    expect((await call(platform.app, 'GET', `${BASE}/tasks`, { key })).json().meta.total).toBe(2);
  });

  it('refuses a recurring task without a valid rule', async () => {
    const key = await (await platform.newTenant()).key();
    const error = expectError(
      await call(platform.app, 'POST', `${BASE}/tasks`, {
        key,
        body: { title: 'X', schedule_mode: 'recurring', starts_at: new Date().toISOString(), recurrence_rule: 'FREQ=DAILY;BYSECOND=1' },
      }),
      400,
      'validation_failed',
    );
    expect(error.details[0]?.path).toBe('recurrence_rule');
  });
});
