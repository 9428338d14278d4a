import { DAY_MS } from '../../lib/clock.js';
import type { BillingInterval, SubscriptionStatus } from './tables.js';

/**
 * The pure part of subscriptions: billing-period arithmetic and the state machine.
 * No database, no clock: every function takes the instant it acts at.
 */

/** Longest billing interval per unit: three years, as Stripe allows (3 years, 36 months, 156 weeks). */
export const MAX_INTERVAL_COUNT: Readonly<Record<BillingInterval, number>> = { day: 1095, week: 156, month: 36, year: 3 };

/**
 * The moves between statuses. trialing -> active happens only by the billing clock (the
 * trial ends); paused -> active by resume (or the clock at pause_resumes_at); canceled is final.
 */
export const STATUS_MOVES: Readonly<Record<SubscriptionStatus, readonly SubscriptionStatus[]>> = {
  trialing: ['active', 'paused', 'canceled'],
  active: ['paused', 'canceled'],
  paused: ['active', 'canceled'],
  canceled: [],
};

/** The fields of a subscription the billing clock and the actions read and write. */
export interface BillingState {
  status: SubscriptionStatus;
  billing_interval: BillingInterval;
  interval_count: number;
  billing_cycle_anchor: Date;
  current_period_start: Date;
  current_period_end: Date;
  cancel_at_period_end: boolean;
  canceled_at: Date | null;
  trial_end: Date | null;
  pause_resumes_at: Date | null;
}

export type BillingEvent = { type: 'trial_ended'; at: Date } | { type: 'renewed'; at: Date; periods: number } | { type: 'resumed'; at: Date } | { type: 'canceled'; at: Date };

/**
 * `anchor` plus `months` calendar months in UTC, keeping the time of day and the anchor's
 * day of the month, clamped to the month's last day (Jan 31 + 1 month = Feb 28 or 29).
 * Always counted from the anchor, so Jan 31 -> Feb 28 -> Mar 31, never Mar 28.
 */
export function addMonthsClamped(anchor: Date, months: number): Date {
  const monthIndex = anchor.getUTCMonth() + months;
  const year = anchor.getUTCFullYear() + Math.floor(monthIndex / 12);
  const month = ((monthIndex % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const result = new Date(anchor.getTime());
  result.setUTCFullYear(year, month, Math.min(anchor.getUTCDate(), lastDay));
  return result;
}

/** The end of the `n`-th billing period counted from the anchor (n = 0 is the anchor itself). */
export function periodBoundary(anchor: Date, interval: BillingInterval, count: number, n: number): Date {
  switch (interval) {
    case 'day':
      return new Date(anchor.getTime() + n * count * DAY_MS);
    case 'week':
      return new Date(anchor.getTime() + n * count * 7 * DAY_MS);
    case 'month':
      return addMonthsClamped(anchor, n * count);
    case 'year':
      return addMonthsClamped(anchor, n * count * 12);
  }
}

/**
 * The billing period containing `at` (start <= at < end), on the anchor's grid; `at`
 * must not be before the anchor. Computed directly, so a clock that jumped many periods
 * costs no loop over them.
 */
export function periodContaining(anchor: Date, interval: BillingInterval, count: number, at: Date): { start: Date; end: Date; index: number } {
  let n = estimatePeriods(anchor, interval, count, at);
  while (n > 0 && periodBoundary(anchor, interval, count, n).getTime() > at.getTime()) n -= 1;
  while (periodBoundary(anchor, interval, count, n + 1).getTime() <= at.getTime()) n += 1;
  return { start: periodBoundary(anchor, interval, count, n), end: periodBoundary(anchor, interval, count, n + 1), index: n };
}

function estimatePeriods(anchor: Date, interval: BillingInterval, count: number, at: Date): number {
  const elapsedMs = Math.max(0, at.getTime() - anchor.getTime());
  switch (interval) {
    case 'day':
      return Math.floor(elapsedMs / (count * DAY_MS));
    case 'week':
      return Math.floor(elapsedMs / (count * 7 * DAY_MS));
    case 'month':
    case 'year': {
      const months = (at.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (at.getUTCMonth() - anchor.getUTCMonth());
      return Math.max(0, Math.floor(months / (count * (interval === 'year' ? 12 : 1))));
    }
  }
}

/** Starts a fresh paid period at `at`, which becomes the new billing cycle anchor. */
function startPaidPeriod(state: BillingState, at: Date): void {
  state.status = 'active';
  state.billing_cycle_anchor = at;
  state.current_period_start = at;
  state.current_period_end = periodBoundary(at, state.billing_interval, state.interval_count, 1);
}

/** Resumes a paused subscription at `at`: the interrupted period goes on if it has not ended, else a new one starts. */
function resumeAt(state: BillingState, at: Date): void {
  state.pause_resumes_at = null;
  if (at.getTime() < state.current_period_end.getTime()) {
    state.status = 'active';
  } else {
    startPaidPeriod(state, at);
  }
}

/**
 * Applies everything the billing clock owes a subscription up to `now`, in time order:
 * a trial ending (trialing -> active, or canceled if it was set to cancel at period end),
 * period renewals (as many as have passed), resumption of a pause at pause_resumes_at,
 * and cancel_at_period_end at the end of the running period. Events are stamped with
 * the instant they were due, not with `now`, so a late run writes the same history.
 */
export function advance(current: BillingState, now: Date): { state: BillingState; events: BillingEvent[] } {
  const state: BillingState = { ...current };
  const events: BillingEvent[] = [];
  const t = now.getTime();
  for (;;) {
    if (state.status === 'canceled') break;
    if (state.status === 'paused') {
      if (state.pause_resumes_at === null || state.pause_resumes_at.getTime() > t) break;
      const at = state.pause_resumes_at;
      resumeAt(state, at);
      events.push({ type: 'resumed', at });
      continue;
    }
    const end = state.current_period_end;
    if (end.getTime() > t) break;
    if (state.cancel_at_period_end) {
      state.status = 'canceled';
      state.canceled_at = end;
      events.push({ type: 'canceled', at: end });
      break;
    }
    if (state.status === 'trialing') {
      startPaidPeriod(state, end);
      events.push({ type: 'trial_ended', at: end });
      continue;
    }
    const previous = periodContaining(state.billing_cycle_anchor, state.billing_interval, state.interval_count, state.current_period_start);
    const period = periodContaining(state.billing_cycle_anchor, state.billing_interval, state.interval_count, now);
    state.current_period_start = period.start;
    state.current_period_end = period.end;
    events.push({ type: 'renewed', at: period.start, periods: Math.max(1, period.index - previous.index) });
  }
  return { state, events };
}

/** When the billing clock next has something to do for this state (null: nothing scheduled). */
export function nextEventAt(state: BillingState): Date | null {
  switch (state.status) {
    case 'trialing':
    case 'active':
      return state.current_period_end;
    case 'paused':
      return state.pause_resumes_at;
    case 'canceled':
      return null;
  }
}

/** The state of a new subscription started at `now`. */
export function startState(input: { interval: BillingInterval; count: number; trialDays: number; now: Date }): BillingState {
  const base = { billing_interval: input.interval, interval_count: input.count, cancel_at_period_end: false, canceled_at: null, pause_resumes_at: null };
  if (input.trialDays > 0) {
    // The trial is the first period; the first paid period starts at trial_end and anchors the cycle (Stripe).
    const trialEnd = new Date(input.now.getTime() + input.trialDays * DAY_MS);
    return {
      ...base,
      status: 'trialing',
      billing_cycle_anchor: trialEnd,
      current_period_start: input.now,
      current_period_end: trialEnd,
      trial_end: trialEnd,
    };
  }
  return {
    ...base,
    status: 'active',
    billing_cycle_anchor: input.now,
    current_period_start: input.now,
    current_period_end: periodBoundary(input.now, input.interval, input.count, 1),
    trial_end: null,
  };
}

/** Pauses at `at`. A trial ends at the pause (trial_end and the trial period end then); a paid period is kept. */
export function pause(current: BillingState, at: Date, resumesAt: Date | null): BillingState {
  const state: BillingState = { ...current, status: 'paused', pause_resumes_at: resumesAt };
  if (current.status === 'trialing') {
    state.trial_end = at;
    state.current_period_end = at;
  }
  return state;
}

/** Resumes a paused subscription at `at`. */
export function resume(current: BillingState, at: Date): BillingState {
  const state: BillingState = { ...current };
  resumeAt(state, at);
  return state;
}

/** Ends the subscription at `at`. */
export function cancelNow(current: BillingState, at: Date): BillingState {
  return { ...current, status: 'canceled', canceled_at: at, pause_resumes_at: null };
}
