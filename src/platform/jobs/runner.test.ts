import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE_MS, SECOND_MS } from '../../lib/clock.js';
import { createLogger } from '../../runtime.js';
import { startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { deleteFinishedJobs, JobRunner } from './runner.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

function runner(): JobRunner {
  return new JobRunner({ db: platform.database.db, clock: platform.clock, log: createLogger('silent') });
}

async function jobRow(kind: string) {
  return platform.database.db.selectFrom('jobs').selectAll().where('kind', '=', kind).executeTakeFirstOrThrow();
}

describe('durable jobs', () => {
  it('deletes finished rows only once they are older than the cut-off', async () => {
    const jobs = runner();
    jobs.register('test.finished', async () => {});
    await jobs.enqueue({ kind: 'test.finished', runAt: platform.clock.now() });
    await jobs.runDue();
    const finishedAt = (await jobRow('test.finished')).finished_at!;
    // Other test files share the jobs table on PostgreSQL, so look at this row, not at counts.
    await deleteFinishedJobs(platform.database.db, finishedAt);
    expect((await jobRow('test.finished')).status).toBe('succeeded');
    expect(await deleteFinishedJobs(platform.database.db, new Date(finishedAt.getTime() + 1))).toBeGreaterThanOrEqual(1);
    expect(await platform.database.db.selectFrom('jobs').select('id').where('kind', '=', 'test.finished').execute()).toEqual([]);
  });

  it('runs a job when its time comes, not before', async () => {
    const jobs = runner();
    const ran: unknown[] = [];
    jobs.register('test.when-due', async (job) => {
      ran.push(job.payload);
    });
    await jobs.enqueue({ kind: 'test.when-due', runAt: new Date(platform.clock.now().getTime() + MINUTE_MS), payload: { n: 1 } });
    expect(await jobs.runDue()).toBe(0);
    platform.clock.advance(MINUTE_MS);
    expect(await jobs.runDue()).toBe(1);
    expect(ran).toEqual([{ n: 1 }]);
    expect((await jobRow('test.when-due')).status).toBe('succeeded');
    expect(await jobs.runDue()).toBe(0);
  });

  it('retries a failing job with back-off, then gives up', async () => {
    const jobs = runner();
    let attempts = 0;
    jobs.register('test.flaky', async () => {
      attempts += 1;
      throw new Error(`boom ${attempts}`);
    });
    await jobs.enqueue({ kind: 'test.flaky', runAt: platform.clock.now(), maxAttempts: 2 });
    await jobs.runDue();
    expect(await jobRow('test.flaky')).toMatchObject({ status: 'queued', attempts: 1, last_error: 'boom 1' });
    await jobs.runDue();
    expect(attempts).toBe(1); // backing off
    platform.clock.advance(11 * SECOND_MS);
    await jobs.runDue();
    expect(await jobRow('test.flaky')).toMatchObject({ status: 'failed', attempts: 2, last_error: 'boom 2' });
  });

  it('reschedules recurring work and keeps a single instance per dedupe key', async () => {
    const jobs = runner();
    let runs = 0;
    jobs.register('test.recurring', async (_job, now) => {
      runs += 1;
      return { rescheduleAt: new Date(now.getTime() + MINUTE_MS) };
    });
    await jobs.ensureRecurring('test.recurring');
    await jobs.ensureRecurring('test.recurring');
    await jobs.runDue();
    await jobs.runDue();
    expect(runs).toBe(1);
    platform.clock.advance(MINUTE_MS);
    await jobs.runDue();
    expect(runs).toBe(2);
    const rows = await platform.database.db.selectFrom('jobs').select('id').where('kind', '=', 'test.recurring').execute();
    expect(rows).toHaveLength(1);
  });

  it('moves a scheduled job to a new time, and cancels it', async () => {
    const jobs = runner();
    const ran: string[] = [];
    jobs.register('test.schedule', async (job) => {
      ran.push(String(job.payload.version));
    });
    const start = platform.clock.now().getTime();
    await jobs.schedule({ kind: 'test.schedule', dedupeKey: 'post:1', runAt: new Date(start + 10 * MINUTE_MS), payload: { version: 'late' } });
    await jobs.schedule({ kind: 'test.schedule', dedupeKey: 'post:1', runAt: new Date(start + MINUTE_MS), payload: { version: 'early' } });
    platform.clock.advance(MINUTE_MS);
    await jobs.runDue();
    expect(ran).toEqual(['early']);

    await jobs.schedule({ kind: 'test.schedule', dedupeKey: 'post:2', runAt: new Date(start + 2 * MINUTE_MS), payload: { version: 'cancelled' } });
    await jobs.cancel('post:2');
    platform.clock.advance(10 * MINUTE_MS);
    await jobs.runDue();
    expect(ran).toEqual(['early']);
  });

  it('runs each job exactly once when several runners poll at the same time', async () => {
    const seen: string[] = [];
    const runners = [runner(), runner(), runner()];
    for (const jobs of runners) {
      jobs.register('test.shared', async (job) => {
        seen.push(String(job.payload.n));
      });
    }
    for (let n = 0; n < 30; n += 1) await runners[0]!.enqueue({ kind: 'test.shared', runAt: platform.clock.now(), payload: { n } });
    await Promise.all(runners.map((jobs) => jobs.runDue()));
    expect(seen).toHaveLength(30);
    expect(new Set(seen).size).toBe(30);
  });

  it('picks up a job whose worker died mid-run once its claim lapses', async () => {
    const crashed = runner();
    crashed.register('test.orphan', async () => new Promise(() => {})); // never finishes
    await crashed.enqueue({ kind: 'test.orphan', runAt: platform.clock.now() });
    void crashed.runDue();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await jobRow('test.orphan')).status).toBe('running');

    const rescuer = runner();
    let rescued = 0;
    rescuer.register('test.orphan', async () => {
      rescued += 1;
    });
    await rescuer.runDue();
    expect(rescued).toBe(0);
    platform.clock.advance(6 * MINUTE_MS);
    await rescuer.runDue();
    expect(rescued).toBe(1);
  });

  it('on stop, finishes the job in hand and hands back the claimed ones not started, so another process takes them at once', async () => {
    const jobs = runner();
    let release = () => {};
    let started = () => {};
    const firstStarted = new Promise<void>((resolve) => (started = resolve));
    const ran: number[] = [];
    jobs.register('test.shutdown-batch', async (job) => {
      ran.push(job.payload.n as number);
      if (ran.length === 1) {
        started();
        await new Promise<void>((resolve) => (release = resolve));
      }
    });
    for (const n of [1, 2, 3]) await jobs.enqueue({ kind: 'test.shutdown-batch', runAt: platform.clock.now(), payload: { n } });
    const batch = jobs.runDue();
    await firstStarted;
    const stopped = jobs.stop();
    release();
    await stopped;
    await batch;
    expect(ran).toHaveLength(1);
    const rows = await platform.database.db.selectFrom('jobs').selectAll().where('kind', '=', 'test.shutdown-batch').execute();
    const statusOf = (n: number) => rows.find((row) => row.payload.n === n)!;
    expect(statusOf(ran[0]!)).toMatchObject({ status: 'succeeded', attempts: 1, locked_by: null });
    for (const n of [1, 2, 3].filter((other) => other !== ran[0])) expect(statusOf(n)).toMatchObject({ status: 'queued', attempts: 0, locked_by: null, locked_until: null });
    const next = runner();
    next.register('test.shutdown-batch', async (job) => void ran.push(job.payload.n as number));
    expect(await next.runDue()).toBe(2);
    expect([...ran].sort()).toEqual([1, 2, 3]);
  });

  it('on stop with a deadline, releases the claim of a job still running past it', async () => {
    const jobs = runner();
    jobs.register('test.shutdown-stuck', () => new Promise<void>(() => {}));
    await jobs.enqueue({ kind: 'test.shutdown-stuck', runAt: platform.clock.now() });
    void jobs.runDue();
    for (let i = 0; i < 100 && (await jobRow('test.shutdown-stuck')).status !== 'running'; i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    await jobs.stop({ releaseAfterMs: 50 });
    expect(await jobRow('test.shutdown-stuck')).toMatchObject({ status: 'queued', attempts: 0, locked_by: null, locked_until: null });
  });
});
