import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from '../../lib/clock.js';

/**
 * The wait before each retry of a failed delivery, about three days in all (Svix's and Standard
 * Webhooks' schedule, stretched to three days): after the last one the delivery has failed.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND_MS,
  5 * MINUTE_MS,
  30 * MINUTE_MS,
  2 * HOUR_MS,
  5 * HOUR_MS,
  10 * HOUR_MS,
  10 * HOUR_MS,
  10 * HOUR_MS,
  12 * HOUR_MS,
  12 * HOUR_MS,
  12 * HOUR_MS,
];

/** Each retry waits its delay plus up to this share of it, so failed receivers are not hit all at once. */
export const JITTER_SHARE = 0.1;

/** An endpoint whose attempts have failed for this long, without a single success, is disabled. */
export const DISABLE_AFTER_FAILING_MS = 3 * DAY_MS;

/** The wait before the next attempt after `attemptsMade` failed ones, or undefined when the schedule is spent. */
export function nextRetryDelay(attemptsMade: number, random: () => number = Math.random): number | undefined {
  const delay = RETRY_DELAYS_MS[attemptsMade - 1];
  if (delay === undefined) return undefined;
  return delay + Math.floor(delay * JITTER_SHARE * random());
}
