import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import { isUuid } from '../../lib/ids.js';
import { nextUpdatedAt } from '../../platform/concurrency.js';
import type { JobHandler, JobRunner } from '../../platform/jobs/runner.js';
import type { ServiceDeps } from '../module.js';
import { advance, type BillingEvent, type BillingState, nextEventAt } from './billing.js';
import { clockEventTypes, recordSubscriptionEvents } from './events.js';
import * as repository from './repository.js';
import type { SubscriptionRow } from './repository.js';
import { createSubscriptionViews } from './subscription-views.js';

/**
 * The billing clock: one durable job per subscription, due at the subscription's next
 * boundary (period end, trial end, pause_resumes_at). Its handler applies everything due
 * by then, in the subscription's row lock, and queues the job for the next boundary.
 */
export const SUBSCRIPTION_CLOCK_JOB = 'catalog.subscription-clock';
const CLOCK_MAX_ATTEMPTS = 30;

/**
 * One key per subscription and boundary: moving a boundary queues a new job instead of
 * updating one that may be running at that moment (whose reschedule would be lost).
 */
export function clockJobKey(subscriptionId: string, at: Date): string {
  return `catalog.subscription:${subscriptionId}:${at.getTime()}`;
}

export function billingStateOf(row: SubscriptionRow): BillingState {
  return {
    status: row.status,
    billing_interval: row.billing_interval,
    interval_count: row.interval_count,
    billing_cycle_anchor: row.billing_cycle_anchor,
    current_period_start: row.current_period_start,
    current_period_end: row.current_period_end,
    cancel_at_period_end: row.cancel_at_period_end,
    canceled_at: row.canceled_at,
    trial_end: row.trial_end,
    pause_resumes_at: row.pause_resumes_at,
  };
}

/**
 * Moves the subscription's clock job from `previous` to `next` (either may be null), in
 * the caller's transaction so the job and the row never disagree. A queued job for the old
 * boundary is removed; one already running finishes and finds nothing left to do.
 */
export async function rescheduleClock(jobs: JobRunner, jobsDb: Db, owner: Owner, subscriptionId: string, previous: Date | null, next: Date | null): Promise<void> {
  if (previous?.getTime() === next?.getTime()) return;
  if (previous) await jobs.cancel(clockJobKey(subscriptionId, previous), jobsDb);
  if (next) {
    await jobs.enqueue(
      {
        kind: SUBSCRIPTION_CLOCK_JOB,
        runAt: next,
        tenantId: owner.tenantId,
        mode: owner.mode,
        payload: { subscription_id: subscriptionId },
        dedupeKey: clockJobKey(subscriptionId, next),
        maxAttempts: CLOCK_MAX_ATTEMPTS,
      },
      jobsDb,
    );
  }
}

/** What the clock needs: it schedules its jobs on `jobs`, and shows crm names in its events. */
export type ClockDeps = Pick<ServiceDeps, 'db' | 'jobs' | 'events' | 'services'>;

export interface ClockOptions {
  /** Called after the transaction with the events actually applied (never for a run that found nothing due). */
  onEvents?: (subscriptionId: string, events: BillingEvent[], owner: Owner) => Promise<void> | void;
}

/**
 * Applies what is due for the job's subscription at `now`, and records its events, in one
 * transaction. The row lock and the state check make it safe to run twice, late, or on
 * several processes at once: the second run finds nothing due and records nothing. A late
 * run (after downtime) catches up every missed boundary.
 */
export function createSubscriptionClockHandler({ db, jobs, events, services }: ClockDeps, options: ClockOptions = {}): JobHandler {
  const views = createSubscriptionViews(repository.catalogDb(db), services);
  return async (job, now) => {
    const subscriptionId = job.payload.subscription_id;
    if (typeof subscriptionId !== 'string' || !isUuid(subscriptionId) || job.tenantId === null || job.mode === null) return;
    const owner: Owner = { tenantId: job.tenantId, mode: job.mode };
    // The crm names its events show are read before the transaction (see subscription-views.ts).
    const subscription = await repository.findSubscription(repository.catalogDb(db), owner, subscriptionId);
    if (!subscription) return;
    const names = await views.customerNames(owner, [subscription]);
    const applied = await db.transaction().execute(async (tx) => {
      const catalog = repository.catalogDb(tx);
      const row = await repository.findSubscription(catalog, owner, subscriptionId, { forUpdate: true });
      if (!row) return [];
      const { state, events: due } = advance(billingStateOf(row), now);
      if (due.length === 0) return [];
      const next = nextEventAt(state);
      const updated = await repository.updateSubscription(catalog, owner, subscriptionId, { ...state, next_event_at: next, updated_at: nextUpdatedAt(row.updated_at, now) });
      await rescheduleClock(jobs, tx, owner, subscriptionId, row.next_event_at, next);
      await recordSubscriptionEvents(events, catalog, owner, clockEventTypes(due), await views.one(catalog, owner, updated, names));
      return due;
    });
    if (applied.length > 0) await options.onEvents?.(subscriptionId, applied, owner);
  };
}

/** Registers the catalog's job handlers on `deps.jobs` (the app's runner, or another process's). */
export function registerCatalogJobs(deps: ClockDeps, options: ClockOptions = {}): void {
  deps.jobs.register(SUBSCRIPTION_CLOCK_JOB, createSubscriptionClockHandler(deps, options));
}
