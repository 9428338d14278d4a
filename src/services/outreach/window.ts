import { addDays, localDate, minutesOf, weekday, zonedInstant } from '../../lib/zones.js';
import type { SendWindow, Step } from './tables.js';

const UNIT_MS = { minutes: 60_000, hours: 3_600_000, days: 86_400_000 } as const;

/** The wait before a step, in milliseconds (a day is 24 hours). */
export function delayMs(step: Step): number {
  return step.delay.amount * UNIT_MS[step.delay.unit];
}

/**
 * The first instant at or after `at` inside the send window, read in the sequence's time zone:
 * `at` itself when the window is open (or there is none), else the next opening on one of the
 * window's days. The window is half-open: [start, end).
 */
export function nextSendTime(at: Date, window: SendWindow | null, timeZone: string): Date {
  if (!window || window.days.length === 0) return at;
  const instant = at.getTime();
  const today = localDate(instant, timeZone);
  const start = minutesOf(window.start);
  const end = minutesOf(window.end);
  for (let day = 0; day <= 8; day += 1) {
    const date = addDays(today, day);
    if (!window.days.includes(weekday(date))) continue;
    const opens = zonedInstant(date, start, timeZone);
    const closes = zonedInstant(date, end, timeZone);
    if (instant < opens) return new Date(opens);
    if (instant < closes) return at;
  }
  return at; // unreachable with at least one day: a week always holds an opening
}

/** When the step at `position` is due, counted from `from` (enrolment or the previous send). */
export function dueAt(from: Date, steps: Step[], position: number, window: SendWindow | null, timeZone: string): Date {
  return nextSendTime(new Date(from.getTime() + delayMs(steps[position]!)), window, timeZone);
}

/** The step's body with `{{display_name}}`, `{{first_name}}` and `{{address}}` filled in (missing values read as empty). */
export function renderBody(body: string, person: { display_name: string | null; address: string }): string {
  const values: Record<string, string> = {
    display_name: person.display_name ?? '',
    first_name: (person.display_name ?? '').trim().split(/\s+/)[0] ?? '',
    address: person.address,
  };
  return body.replace(PLACEHOLDER, (_match, name: string) => values[name] ?? '');
}

export const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g;
export const PLACEHOLDER_NAMES = ['display_name', 'first_name', 'address'];
