/**
 * Wall-clock arithmetic in IANA zones with Intl.DateTimeFormat alone (no tz library is
 * installed): the offset of a zone at an instant, and the instant of a local date and time.
 */

/** True when `timeZone` names a zone of the IANA database (canonical or link): the formatter accepts it. */
export function isTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

export interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export function localParts(instant: number, timeZone: string): LocalParts {
  const parts: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(instant))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour! % 24, minute: parts.minute!, second: parts.second! };
}

/** Milliseconds the zone is ahead of UTC at `instant`. */
export function offsetAt(instant: number, timeZone: string): number {
  const p = localParts(instant, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/**
 * The instant of local `minutes` after midnight of `date` (YYYY-MM-DD) in the zone. A local time
 * skipped by a DST change maps to the instant the same distance past the change (02:30 in a
 * spring-forward gap becomes 03:30); a repeated local time maps to its first occurrence.
 */
export function zonedInstant(date: string, minutes: number, timeZone: string): number {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(year, month - 1, day, 0, minutes);
  // The offsets in force half a day either side cover any change near this wall time.
  const before = wall - offsetAt(wall - 12 * 3600 * 1000, timeZone);
  const after = wall - offsetAt(wall + 12 * 3600 * 1000, timeZone);
  const valid = [before, after].filter((instant) => instant + offsetAt(instant, timeZone) === wall).sort((a, b) => a - b);
  // A repeated wall time: its first occurrence; a skipped one: read with the offset before the change.
  return valid[0] ?? before;
}

/** `YYYY-MM-DDTHH:MM:SS±HH:MM`: the local time of an instant with its offset. */
export function localIso(instant: number, timeZone: string): string {
  const p = localParts(instant, timeZone);
  const offsetMinutes = Math.round(offsetAt(instant, timeZone) / 60000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${p.year}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** The local calendar date of an instant, YYYY-MM-DD. */
export function localDate(instant: number, timeZone: string): string {
  return localIso(instant, timeZone).slice(0, 10);
}

/** The date `days` after `date` (YYYY-MM-DD), on the calendar alone. */
export function addDays(date: string, days: number): string {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
}

export const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;

export function weekday(date: string): (typeof WEEKDAYS)[number] {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return WEEKDAYS[new Date(Date.UTC(year, month - 1, day)).getUTCDay()]!;
}

/** Minutes after midnight of `HH:MM` (24:00 is the end of the day). */
export function minutesOf(time: string): number {
  const [hours, minutes] = time.split(':').map(Number) as [number, number];
  return hours * 60 + minutes;
}
