import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../lib/clock.js';
import { addMonthsClamped, advance, nextEventAt, pause, periodBoundary, periodContaining, resume, startState, type BillingState } from './billing.js';

const at = (iso: string) => new Date(iso);
const iso = (date: Date | null) => date?.toISOString() ?? null;

describe('calendar arithmetic', () => {
  it('clamps the day to the end of shorter months and keeps the anchor day afterwards', () => {
    const anchor = at('2027-01-31T10:15:30.123Z');
    const ends = [1, 2, 3, 4, 13].map((n) => iso(periodBoundary(anchor, 'month', 1, n)));
    expect(ends).toEqual([
      '2027-02-28T10:15:30.123Z',
      '2027-03-31T10:15:30.123Z',
      '2027-04-30T10:15:30.123Z',
      '2027-05-31T10:15:30.123Z',
      '2028-02-29T10:15:30.123Z', // leap year
    ]);
    expect(iso(addMonthsClamped(at('2028-02-29T00:00:00.000Z'), 12))).toBe('2029-02-28T00:00:00.000Z');
    expect(iso(periodBoundary(at('2028-02-29T00:00:00.000Z'), 'year', 1, 4))).toBe('2032-02-29T00:00:00.000Z');
    expect(iso(periodBoundary(anchor, 'month', 3, 1))).toBe('2027-04-30T10:15:30.123Z');
    expect(iso(periodBoundary(anchor, 'month', 1, 11))).toBe('2027-12-31T10:15:30.123Z');
    expect(iso(periodBoundary(anchor, 'month', 1, 12))).toBe('2028-01-31T10:15:30.123Z');
  });

  it('counts days and weeks as fixed UTC durations', () => {
    const anchor = at('2027-03-27T12:00:00.000Z');
    expect(iso(periodBoundary(anchor, 'day', 1, 2))).toBe('2027-03-29T12:00:00.000Z');
    expect(iso(periodBoundary(anchor, 'week', 2, 1))).toBe('2027-04-10T12:00:00.000Z');
  });

  it('finds the period containing an instant, on the anchor grid', () => {
    const anchor = at('2027-01-31T00:00:00.000Z');
    expect(periodContaining(anchor, 'month', 1, at('2027-03-30T23:59:59.999Z'))).toMatchObject({
      start: at('2027-02-28T00:00:00.000Z'),
      end: at('2027-03-31T00:00:00.000Z'),
      index: 1,
    });
    // A boundary belongs to the period it starts.
    expect(periodContaining(anchor, 'month', 1, at('2027-03-31T00:00:00.000Z')).start).toEqual(at('2027-03-31T00:00:00.000Z'));
    expect(periodContaining(anchor, 'day', 7, at('2027-02-14T00:00:00.000Z'))).toMatchObject({ start: at('2027-02-14T00:00:00.000Z'), index: 2 });
    expect(periodContaining(anchor, 'year', 1, at('2031-01-30T00:00:00.000Z')).start).toEqual(at('2030-01-31T00:00:00.000Z'));
  });
});

describe('advance (the billing clock)', () => {
  const start = at('2027-01-31T09:00:00.000Z');

  it('renews as many periods as have passed, in one step, stamping the real boundaries', () => {
    const state = startState({ interval: 'month', count: 1, trialDays: 0, now: start });
    expect(advance(state, at('2027-02-28T08:59:59.999Z')).events).toEqual([]);
    const { state: later, events } = advance(state, at('2027-05-15T00:00:00.000Z'));
    expect(events).toEqual([{ type: 'renewed', at: at('2027-04-30T09:00:00.000Z'), periods: 3 }]);
    expect(later).toMatchObject({ status: 'active', current_period_start: at('2027-04-30T09:00:00.000Z'), current_period_end: at('2027-05-31T09:00:00.000Z') });
    // Running again at the same instant finds nothing to do.
    expect(advance(later, at('2027-05-15T00:00:00.000Z')).events).toEqual([]);
  });

  it('ends a trial into an active period anchored at trial_end, then renews from there', () => {
    const state = startState({ interval: 'month', count: 1, trialDays: 14, now: start });
    expect(state).toMatchObject({ status: 'trialing', trial_end: at('2027-02-14T09:00:00.000Z'), current_period_end: at('2027-02-14T09:00:00.000Z') });
    const { state: later, events } = advance(state, at('2027-04-01T00:00:00.000Z'));
    expect(events.map((event) => event.type)).toEqual(['trial_ended', 'renewed']);
    expect(later).toMatchObject({
      status: 'active',
      trial_end: at('2027-02-14T09:00:00.000Z'),
      billing_cycle_anchor: at('2027-02-14T09:00:00.000Z'),
      current_period_start: at('2027-03-14T09:00:00.000Z'),
      current_period_end: at('2027-04-14T09:00:00.000Z'),
    });
  });

  it('cancels at the end of the period (or the trial) when cancel_at_period_end is set, and stops there', () => {
    const active: BillingState = { ...startState({ interval: 'week', count: 1, trialDays: 0, now: start }), cancel_at_period_end: true };
    const ended = advance(active, new Date(start.getTime() + 30 * DAY_MS));
    expect(ended.events).toEqual([{ type: 'canceled', at: at('2027-02-07T09:00:00.000Z') }]);
    expect(ended.state).toMatchObject({ status: 'canceled', canceled_at: at('2027-02-07T09:00:00.000Z'), current_period_end: at('2027-02-07T09:00:00.000Z') });
    expect(nextEventAt(ended.state)).toBeNull();

    const trialing: BillingState = { ...startState({ interval: 'month', count: 1, trialDays: 7, now: start }), cancel_at_period_end: true };
    expect(advance(trialing, at('2027-03-01T00:00:00.000Z')).state).toMatchObject({ status: 'canceled', canceled_at: at('2027-02-07T09:00:00.000Z') });
  });

  it('resumes a pause at pause_resumes_at, continuing the interrupted period or starting a new one', () => {
    const active = startState({ interval: 'month', count: 1, trialDays: 0, now: start });
    const early = pause(active, at('2027-02-05T00:00:00.000Z'), at('2027-02-10T00:00:00.000Z'));
    expect(nextEventAt(early)).toEqual(at('2027-02-10T00:00:00.000Z'));
    expect(advance(early, at('2027-02-11T00:00:00.000Z')).state).toMatchObject({
      status: 'active',
      pause_resumes_at: null,
      current_period_start: start,
      current_period_end: at('2027-02-28T09:00:00.000Z'),
    });

    const late = pause(active, at('2027-02-05T00:00:00.000Z'), at('2027-03-10T00:00:00.000Z'));
    // While paused, the period end passes without a renewal.
    expect(advance(late, at('2027-03-01T00:00:00.000Z')).events).toEqual([]);
    const resumed = advance(late, at('2027-04-15T00:00:00.000Z'));
    expect(resumed.events.map((event) => event.type)).toEqual(['resumed', 'renewed']);
    expect(resumed.state).toMatchObject({
      billing_cycle_anchor: at('2027-03-10T00:00:00.000Z'),
      current_period_start: at('2027-04-10T00:00:00.000Z'),
      current_period_end: at('2027-05-10T00:00:00.000Z'),
    });
  });

  it('ends a trial when it is paused; resuming starts the first paid period', () => {
    const trialing = startState({ interval: 'day', count: 1, trialDays: 30, now: start });
    const paused = pause(trialing, at('2027-02-02T00:00:00.000Z'), null);
    expect(paused).toMatchObject({ status: 'paused', trial_end: at('2027-02-02T00:00:00.000Z'), current_period_end: at('2027-02-02T00:00:00.000Z') });
    expect(nextEventAt(paused)).toBeNull();
    expect(advance(paused, at('2028-01-01T00:00:00.000Z')).events).toEqual([]);
    expect(resume(paused, at('2027-02-03T12:00:00.000Z'))).toMatchObject({
      status: 'active',
      billing_cycle_anchor: at('2027-02-03T12:00:00.000Z'),
      current_period_start: at('2027-02-03T12:00:00.000Z'),
      current_period_end: at('2027-02-04T12:00:00.000Z'),
    });
  });

  it('catches up ten years of daily periods without looping over them', () => {
    const state = startState({ interval: 'day', count: 1, trialDays: 0, now: start });
    const { events, state: later } = advance(state, new Date(start.getTime() + 3652.5 * DAY_MS));
    expect(events).toEqual([{ type: 'renewed', at: new Date(start.getTime() + 3652 * DAY_MS), periods: 3652 }]);
    expect(later.current_period_end).toEqual(new Date(start.getTime() + 3653 * DAY_MS));
  });
});
