import { describe, expect, it } from 'vitest';
import { zonedInstant } from '../../lib/zones.js';
import { dueAt, nextSendTime, renderBody } from './window.js';
import type { SendWindow } from './tables.js';

/** The last Sunday of `month` (1-12) in `year`, YYYY-MM-DD: the day the EU clocks change. */
function lastSunday(year: number, month: number): string {
  const last = new Date(Date.UTC(year, month, 0));
  last.setUTCDate(last.getUTCDate() - last.getUTCDay());
  return last.toISOString().slice(0, 10);
}

const YEAR = new Date().getUTCFullYear() + 1;
const EVERY_DAY: SendWindow = { days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'], start: '09:00', end: '17:00' };
const london = (date: string, hour: number, minute = 0) => new Date(zonedInstant(date, hour * 60 + minute, 'Europe/London'));

describe('the send window', () => {
  it('keeps an instant inside the window and moves one outside to the next opening, in local time across a DST change', () => {
    const spring = lastSunday(YEAR, 3); // the clocks go forward at 01:00 UTC
    const saturday = new Date(Date.parse(`${spring}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    expect(nextSendTime(london(saturday, 12), EVERY_DAY, 'Europe/London')).toEqual(london(saturday, 12));
    // Saturday 18:00 GMT: the next opening is Sunday 09:00 BST, which is 08:00 UTC.
    const opening = nextSendTime(london(saturday, 18), EVERY_DAY, 'Europe/London');
    expect(opening).toEqual(london(spring, 9));
    expect(opening.toISOString()).toBe(`${spring}T08:00:00.000Z`);
    expect(nextSendTime(london(saturday, 17), EVERY_DAY, 'Europe/London')).toEqual(london(spring, 9)); // the end is exclusive
  });

  it('skips the days outside the window and treats null as any time', () => {
    const weekdays: SendWindow = { ...EVERY_DAY, days: ['monday'] };
    const at = new Date(Date.UTC(YEAR, 0, 7, 12)); // some day of January in UTC
    const next = nextSendTime(at, weekdays, 'UTC');
    expect(next.getUTCDay()).toBe(1);
    expect(next.getUTCHours()).toBe(at.getUTCDay() === 1 ? 12 : 9);
    expect(nextSendTime(at, null, 'UTC')).toEqual(at);
    expect(nextSendTime(at, { ...EVERY_DAY, end: '24:00' }, 'Asia/Kolkata').getTime()).toBeGreaterThanOrEqual(at.getTime());
  });

  it('counts delays in minutes, hours and 24-hour days from the given instant', () => {
    const from = new Date(Date.UTC(YEAR, 5, 1, 10));
    const steps = [
      { body: 'a', delay: { amount: 30, unit: 'minutes' as const } },
      { body: 'b', delay: { amount: 2, unit: 'hours' as const } },
      { body: 'c', delay: { amount: 3, unit: 'days' as const } },
    ];
    expect(dueAt(from, steps, 0, null, 'UTC').getTime() - from.getTime()).toBe(30 * 60_000);
    expect(dueAt(from, steps, 1, null, 'UTC').getTime() - from.getTime()).toBe(2 * 3_600_000);
    expect(dueAt(from, steps, 2, null, 'UTC').getTime() - from.getTime()).toBe(3 * 86_400_000);
  });

  it('fills placeholders, empty when unknown', () => {
    expect(renderBody('Hi {{display_name}} ({{ first_name }}) at {{address}}', { display_name: 'Ada Lovelace', address: '+14155550123' })).toBe(
      'Hi Ada Lovelace (Ada) at +14155550123',
    );
    expect(renderBody('Hi {{display_name}}!', { display_name: null, address: '+14155550123' })).toBe('Hi !');
  });
});
