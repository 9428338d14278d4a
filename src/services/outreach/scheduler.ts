import type { Db } from '../../db/database.js';
import type { Mode } from '../../db/types.js';
import type { Owner } from '../../db/owned.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobHandler, JobRunner } from '../../platform/jobs/runner.js';
import { presentEnrollment, presentMessage } from './present.js';
import type { MessagingProvider } from './provider.js';
import * as repository from './repository.js';
import type { EnrollmentRow, OutreachDb, SequenceRow } from './repository.js';
import { dueAt, nextSendTime, renderBody } from './window.js';

/**
 * The scheduler: one durable job per enrollment and due step, at the step's `next_run_at`.
 * Its handler locks the enrollment row, re-checks that the step is still due, and sends it
 * through the mode's provider in the same transaction that records the message and moves
 * the enrollment on; a unique index on (enrollment, position) of outbound messages makes a
 * second send of the same step impossible whatever the number of processes.
 */
export const STEP_JOB = 'outreach.enrollment-step';
/** Provider attempts per step before the enrollment fails. */
export const MAX_SEND_ATTEMPTS = 3;
/** Wait after the n-th failed attempt: 1 minute, then 4, then 16... */
export function retryDelayMs(attempt: number): number {
  return 60_000 * 4 ** (attempt - 1);
}

/** The safety net: every 10 minutes, steps overdue by more than 10 minutes get a job again. */
export const SWEEP_JOB = 'outreach.sweep';
const SWEEP_EVERY_MS = 10 * 60_000;
const SWEEP_BATCH = 500;

/** Makes sure the sweep exists (called with each enrolment, in its transaction; a no-op once queued). */
export async function ensureSweep(jobs: JobRunner, jobsDb: Db, now: Date): Promise<void> {
  await jobs.enqueue({ kind: SWEEP_JOB, runAt: new Date(now.getTime() + SWEEP_EVERY_MS), dedupeKey: `recurring:${SWEEP_JOB}` }, jobsDb);
}

/**
 * Schedules again the steps whose job was lost or gave up (a handler that kept failing on
 * something other than the provider): the step handler is safe to run twice, so a step whose
 * job is merely late is not harmed by a second one.
 */
export function createSweepHandler({ db, jobs }: Pick<SchedulerDeps, 'db' | 'jobs'>): JobHandler {
  return async (_job, now) => {
    const overdue = await repository.overdueEnrollments(repository.outreachDb(db), new Date(now.getTime() - SWEEP_EVERY_MS), SWEEP_BATCH);
    for (const row of overdue) {
      const owner = { tenantId: row.tenant_id, mode: row.mode };
      await scheduleStep(jobs, db, owner, { id: row.id, next_position: row.next_position, next_run_at: now });
    }
    return { rescheduleAt: new Date(now.getTime() + SWEEP_EVERY_MS) };
  };
}

export function stepJobKey(enrollmentId: string, position: number, runAt: Date): string {
  return `outreach.step:${enrollmentId}:${position}:${runAt.getTime()}`;
}

/** Queues the job of an enrollment's next step, in the caller's transaction (`jobsDb`). */
export async function scheduleStep(jobs: JobRunner, jobsDb: Db, owner: Owner, enrollment: { id: string; next_position: number | null; next_run_at: Date | null }): Promise<void> {
  if (enrollment.next_position === null || enrollment.next_run_at === null) return;
  await jobs.enqueue(
    {
      kind: STEP_JOB,
      runAt: enrollment.next_run_at,
      tenantId: owner.tenantId,
      mode: owner.mode,
      payload: { enrollment_id: enrollment.id },
      dedupeKey: stepJobKey(enrollment.id, enrollment.next_position, enrollment.next_run_at),
    },
    jobsDb,
  );
}

export interface SchedulerDeps {
  db: Db;
  jobs: JobRunner;
  events: EventLog;
  providers: Record<Mode, MessagingProvider>;
}

/** Sends the step due for the job's enrollment at `now`, if any. Safe to run twice, late or concurrently. */
export function createStepHandler({ db, jobs, events, providers }: SchedulerDeps): JobHandler {
  return async (job, now) => {
    const enrollmentId = job.payload.enrollment_id;
    if (typeof enrollmentId !== 'string' || !isUuid(enrollmentId) || job.tenantId === null || job.mode === null) return;
    const owner: Owner = { tenantId: job.tenantId, mode: job.mode };
    await db.transaction().execute(async (jobsDb) => {
      const tx = repository.outreachDb(jobsDb);
      const enrollment = await repository.findEnrollmentForUpdate(tx, owner, enrollmentId);
      if (!enrollment || enrollment.status !== 'active' || enrollment.next_position === null || enrollment.next_run_at === null) return;
      if (enrollment.next_run_at.getTime() > now.getTime()) return; // moved later: its own job comes then
      const sequence = await repository.findSequence(tx, owner, enrollment.sequence_id);
      if (!sequence || sequence.status !== 'active') return; // scheduled again when the sequence becomes active
      const position = enrollment.next_position;
      if (position >= sequence.steps.length) {
        await finish(tx, owner, enrollment, now); // the sequence lost steps since: nothing left to send
        return;
      }
      const opens = nextSendTime(now, sequence.send_window, sequence.timezone);
      if (opens.getTime() > now.getTime()) {
        const moved = await repository.updateEnrollment(tx, owner, enrollment.id, { next_run_at: opens, updated_at: now });
        await scheduleStep(jobs, jobsDb, owner, moved);
        return;
      }
      await sendStep(tx, jobsDb, owner, sequence, enrollment, position, now);
    });
  };

  async function sendStep(tx: OutreachDb, jobsDb: Db, owner: Owner, sequence: SequenceRow, enrollment: EnrollmentRow, position: number, now: Date) {
    const provider = providers[owner.mode];
    const inserted = await repository.insertStepMessage(tx, owner, {
      id: newId(),
      direction: 'outbound',
      sequence_id: sequence.id,
      enrollment_id: enrollment.id,
      position,
      from_address: null,
      to_address: enrollment.address,
      body: renderBody(sequence.steps[position]!.body, enrollment),
      status: 'queued',
      provider: provider.name,
      provider_message_id: null,
      error: null,
      attempts: 0,
      created_at: now,
      sent_at: null,
      updated_at: now,
    });
    const message = inserted ?? (await repository.findStepMessage(tx, owner, enrollment.id, position));
    if (!message) return;
    if (message.status !== 'queued') {
      // Sent before (the enrollment was not moved on, which the same transaction does): move on without sending again.
      if (message.status === 'sent' || message.status === 'delivered') await advance(tx, jobsDb, owner, sequence, enrollment, position, message.sent_at ?? now, now);
      return;
    }
    let receipt;
    try {
      receipt = await provider.send({ to: message.to_address, body: message.body });
    } catch (error) {
      const reason = (error instanceof Error ? error.message : String(error)).slice(0, 500);
      const attempts = enrollment.send_attempts + 1;
      if (attempts >= MAX_SEND_ATTEMPTS) {
        const failedMessage = await repository.updateMessage(tx, owner, message.id, { status: 'failed', error: reason, attempts: message.attempts + 1, updated_at: now });
        const failed = await repository.updateEnrollment(tx, owner, enrollment.id, {
          status: 'failed',
          send_attempts: attempts,
          next_position: null,
          next_run_at: null,
          updated_at: now,
        });
        await events.record(tx, owner, 'outreach.message.status_changed', presentMessage(failedMessage));
        await events.record(tx, owner, 'outreach.enrollment.failed', presentEnrollment(failed));
      } else {
        await repository.updateMessage(tx, owner, message.id, { error: reason, attempts: message.attempts + 1, updated_at: now });
        const retry = nextSendTime(new Date(now.getTime() + retryDelayMs(attempts)), sequence.send_window, sequence.timezone);
        const waiting = await repository.updateEnrollment(tx, owner, enrollment.id, { send_attempts: attempts, next_run_at: retry, updated_at: now });
        await scheduleStep(jobs, jobsDb, owner, waiting);
      }
      return;
    }
    const sent = await repository.updateMessage(tx, owner, message.id, {
      status: 'sent',
      provider_message_id: receipt.providerMessageId,
      from_address: receipt.from,
      error: null,
      attempts: message.attempts + 1,
      sent_at: now,
      updated_at: now,
    });
    await events.record(tx, owner, 'outreach.message.sent', presentMessage(sent));
    await advance(tx, jobsDb, owner, sequence, enrollment, position, now, now);
  }

  async function advance(tx: OutreachDb, jobsDb: Db, owner: Owner, sequence: SequenceRow, enrollment: EnrollmentRow, position: number, sentAt: Date, now: Date) {
    const next = position + 1;
    if (next >= sequence.steps.length) {
      await finish(tx, owner, enrollment, now, sentAt);
      return;
    }
    const moved = await repository.updateEnrollment(tx, owner, enrollment.id, {
      next_position: next,
      next_run_at: dueAt(sentAt, sequence.steps, next, sequence.send_window, sequence.timezone),
      last_sent_at: sentAt,
      send_attempts: 0,
      updated_at: now,
    });
    await scheduleStep(jobs, jobsDb, owner, moved);
  }

  async function finish(tx: OutreachDb, owner: Owner, enrollment: EnrollmentRow, now: Date, sentAt?: Date) {
    const completed = await repository.updateEnrollment(tx, owner, enrollment.id, {
      status: 'completed',
      next_position: null,
      next_run_at: null,
      send_attempts: 0,
      ...(sentAt ? { last_sent_at: sentAt } : {}),
      updated_at: now,
    });
    await events.record(tx, owner, 'outreach.enrollment.completed', presentEnrollment(completed));
  }
}

/** Registers the scheduler on `jobs` (the app's runner, or a test's or another process's). */
export function registerOutreachJobs(deps: SchedulerDeps): void {
  deps.jobs.register(STEP_JOB, createStepHandler(deps));
  deps.jobs.register(SWEEP_JOB, createSweepHandler(deps));
}
