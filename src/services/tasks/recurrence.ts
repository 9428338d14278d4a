import { invalidField } from '../../platform/errors/app-error.js';

/** A parsed RFC 5545 RRULE of the supported subset; instants are computed in UTC from DTSTART (the task's starts_at). */
export interface Rule {
  freq: 'DAILY' | 'WEEKLY' | 'MONTHLY';
  interval: number;
  /** Weekdays (0 = Sunday) with an optional ordinal (MONTHLY only: 1 = first, -1 = last). */
  byDay: { day: number; ordinal: number | null }[];
  count: number | null;
  until: Date | null;
}

const DAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];
const DAY_MS = 24 * 60 * 60 * 1000;
/** Most instants one rule may yield: a COUNT above it, or a rule without end, stops here. */
export const MAX_OCCURRENCES = 1000;

function fail(message: string): never {
  throw invalidField('recurrence_rule', 'invalid', message);
}

function parseUntil(value: string): Date {
  const match = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z?)?$/.exec(value);
  if (!match) fail('UNTIL is a date (YYYYMMDD) or a UTC date-time (YYYYMMDDTHHMMSSZ).');
  const [, y, mo, d, h, mi, s] = match;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), h === undefined ? 23 : Number(h), mi === undefined ? 59 : Number(mi), s === undefined ? 59 : Number(s)));
  if (Number.isNaN(date.getTime()) || date.getUTCDate() !== Number(d)) fail('UNTIL is not a real date.');
  return date;
}

/** Parses FREQ=DAILY|WEEKLY|MONTHLY;INTERVAL=n;BYDAY=MO,WE (or 1MO,-1FR monthly);COUNT=n;UNTIL=...; anything else is 400 on recurrence_rule. */
export function parseRule(text: string): Rule {
  const body = text.trim().replace(/^RRULE:/i, '');
  const parts = new Map<string, string>();
  for (const part of body.split(';')) {
    if (part === '') continue;
    const [name, value, extra] = part.split('=');
    if (!name || value === undefined || value === '' || extra !== undefined) fail(`"${part}" is not NAME=VALUE.`);
    const key = name.toUpperCase();
    if (parts.has(key)) fail(`${key} appears twice.`);
    parts.set(key, value.toUpperCase());
  }
  for (const key of parts.keys()) if (!['FREQ', 'INTERVAL', 'BYDAY', 'COUNT', 'UNTIL'].includes(key)) fail(`${key} is not supported (FREQ, INTERVAL, BYDAY, COUNT, UNTIL).`);
  const freq = parts.get('FREQ');
  if (freq !== 'DAILY' && freq !== 'WEEKLY' && freq !== 'MONTHLY') fail('FREQ is DAILY, WEEKLY or MONTHLY.');
  const intervalText = parts.get('INTERVAL') ?? '1';
  if (!/^[1-9][0-9]{0,2}$/.test(intervalText)) fail('INTERVAL is an integer from 1 to 999.');
  const countText = parts.get('COUNT');
  if (countText !== undefined && !/^[1-9][0-9]{0,3}$/.test(countText)) fail(`COUNT is an integer from 1 to ${MAX_OCCURRENCES}.`);
  const count = countText === undefined ? null : Number(countText);
  if (count !== null && count > MAX_OCCURRENCES) fail(`COUNT is an integer from 1 to ${MAX_OCCURRENCES}.`);
  const untilText = parts.get('UNTIL');
  if (count !== null && untilText !== undefined) fail('COUNT and UNTIL exclude each other.');
  const byDay = (parts.get('BYDAY')?.split(',') ?? []).map((entry) => {
    const match = /^([+-]?[1-5])?(SU|MO|TU|WE|TH|FR|SA)$/.exec(entry);
    if (!match) fail(`BYDAY entry "${entry}" is not a weekday (MO..SU, with an ordinal such as 1MO or -1FR for MONTHLY).`);
    const ordinal = match[1] === undefined ? null : Number(match[1]);
    if (ordinal !== null && freq !== 'MONTHLY') fail('Ordinal BYDAY entries (1MO, -1FR) need FREQ=MONTHLY.');
    return { day: DAYS.indexOf(match[2]!), ordinal };
  });
  return { freq, interval: Number(intervalText), byDay, count, until: untilText === undefined ? null : parseUntil(untilText) };
}

const timeOfDay = (date: Date) => date.getTime() - Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
const dayStart = (date: Date) => Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());

/** Candidate instants of one period (a day, a week, a month) of the rule, ascending. */
function period(rule: Rule, start: Date, index: number): number[] {
  const time = timeOfDay(start);
  if (rule.freq === 'DAILY') {
    const day = dayStart(start) + index * rule.interval * DAY_MS;
    if (rule.byDay.length > 0 && !rule.byDay.some((entry) => entry.day === new Date(day).getUTCDay())) return [];
    return [day + time];
  }
  if (rule.freq === 'WEEKLY') {
    // Weeks start on Monday (RFC 5545 WKST default).
    const monday = dayStart(start) - ((start.getUTCDay() + 6) % 7) * DAY_MS + index * rule.interval * 7 * DAY_MS;
    const days = rule.byDay.length > 0 ? rule.byDay.map((entry) => entry.day) : [start.getUTCDay()];
    return [...new Set(days.map((day) => (day + 6) % 7))].sort((a, b) => a - b).map((offset) => monday + offset * DAY_MS + time);
  }
  const monthIndex = start.getUTCMonth() + index * rule.interval;
  const year = start.getUTCFullYear() + Math.floor(monthIndex / 12);
  const month = ((monthIndex % 12) + 12) % 12;
  const daysInMonth = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  if (rule.byDay.length === 0) {
    const day = start.getUTCDate();
    return day <= daysInMonth ? [Date.UTC(year, month, day) + time] : [];
  }
  const instants = new Set<number>();
  for (const entry of rule.byDay) {
    const matching: number[] = [];
    for (let day = 1; day <= daysInMonth; day += 1) if (new Date(Date.UTC(year, month, day)).getUTCDay() === entry.day) matching.push(day);
    const chosen = entry.ordinal === null ? matching : [entry.ordinal > 0 ? matching[entry.ordinal - 1] : matching[matching.length + entry.ordinal]];
    for (const day of chosen) if (day !== undefined) instants.add(Date.UTC(year, month, day) + time);
  }
  return [...instants].sort((a, b) => a - b);
}

/**
 * The instants of `rule` from `start` (DTSTART, itself the first instant when it matches the
 * rule), ascending, up to and including `through`, at most MAX_OCCURRENCES in all. Each
 * instant comes with its number in the series (1-based), which COUNT limits.
 */
export function occurrences(rule: Rule, start: Date, through: Date): { at: Date; number: number }[] {
  const out: { at: Date; number: number }[] = [];
  let number = 0;
  for (let index = 0; index < 100_000; index += 1) {
    for (const instant of period(rule, start, index)) {
      if (instant < start.getTime()) continue;
      if (rule.until !== null && instant > rule.until.getTime()) return out;
      number += 1;
      if ((rule.count !== null && number > rule.count) || number > MAX_OCCURRENCES) return out;
      if (instant > through.getTime()) return out;
      out.push({ at: new Date(instant), number });
    }
  }
  return out;
}

/** The first instant of the rule after `after`, if any. */
export function nextOccurrence(rule: Rule, start: Date, after: Date): Date | undefined {
  const horizon = new Date(Math.max(after.getTime(), start.getTime()) + 400 * DAY_MS * Math.max(1, rule.interval));
  return occurrences(rule, start, horizon).find((entry) => entry.at.getTime() > after.getTime())?.at;
}
