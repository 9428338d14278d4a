import pg from 'pg';

const TIMESTAMPTZ_OID = 1184;
const defaultTimestamptzParser = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => unknown;

const ZERO = 48;
const MS_PER_SECOND = 1000;

/** The value of `length` decimal digits of `text` from `start`, or -1 if one of them is not a digit. */
function digits(text: string, start: number, length: number): number {
  let value = 0;
  for (let index = start; index < start + length; index += 1) {
    const digit = text.charCodeAt(index) - ZERO; // NaN past the end
    if (!(digit >= 0 && digit <= 9)) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** ':' and two digits at `start` (an offset's minutes or seconds): their value, or -1. */
function colonAndTwoDigits(text: string, start: number): number {
  return text.charCodeAt(start) === 58 ? digits(text, start + 1, 2) : -1;
}

/**
 * Parses PostgreSQL's text form of a timestamptz, `2026-11-22 03:04:05.123456+00`, into a Date
 * with the value pg's own parser (postgres-date) gives: fractions beyond milliseconds truncated.
 *
 * pg's parser runs two regular expressions per value; on list endpoints (two timestamps a row,
 * fifty rows a page) their match arrays were a quarter of all memory a request allocated. This
 * reads the usual form by character codes instead, and hands every other form (infinity, BC,
 * years below 1000 or above 9999) to pg's parser.
 */
export function parseTimestamptz(text: string): unknown {
  // 'YYYY-MM-DD HH:MM:SS' is 19 characters; at least a sign and an hour of offset follow.
  if (text.length < 22 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 32 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) {
    return defaultTimestamptzParser(text);
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return defaultTimestamptzParser(text);

  let position = 19;
  let milliseconds = 0;
  if (text.charCodeAt(position) === 46) {
    position += 1;
    const fractionStart = position;
    while (position < text.length && text.charCodeAt(position) >= ZERO && text.charCodeAt(position) <= ZERO + 9) position += 1;
    const fractionLength = position - fractionStart;
    if (fractionLength === 0) return defaultTimestamptzParser(text);
    const kept = Math.min(fractionLength, 3);
    milliseconds = digits(text, fractionStart, kept) * 10 ** (3 - kept);
  }

  const sign = text.charCodeAt(position);
  if (sign !== 43 && sign !== 45) return defaultTimestamptzParser(text);
  const offsetHours = digits(text, position + 1, 2);
  const offsetMinutes = position + 3 < text.length ? colonAndTwoDigits(text, position + 3) : 0;
  const offsetSecondsPart = position + 6 < text.length ? colonAndTwoDigits(text, position + 6) : 0;
  const end = position + 3 + (position + 3 < text.length ? 3 : 0) + (position + 6 < text.length ? 3 : 0);
  if (offsetHours < 0 || offsetMinutes < 0 || offsetSecondsPart < 0 || end !== text.length) return defaultTimestamptzParser(text);
  const offsetSeconds = offsetHours * 3600 + offsetMinutes * 60 + offsetSecondsPart;

  const utc = Date.UTC(year, month - 1, day, hour, minute, second, milliseconds);
  return new Date(utc - (sign === 43 ? 1 : -1) * offsetSeconds * MS_PER_SECOND);
}

const INT8_OID = 20;

/**
 * bigint in text form, as pg's own parser gives it: the decimal text, unchanged. pg's parser
 * returns the same text too, but tests it with a regular expression literal, a new RegExp
 * object for every value: on list pages (ids and amounts) they were a tenth of all memory a
 * request allocated.
 */
export function parseInt8Text(text: string): string {
  return text;
}

/** Type parsers for a pg pool: pg's own, except timestamptz (see parseTimestamptz) and bigint (see parseInt8Text) in text form. */
export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): unknown {
    if (format !== 'binary') {
      if (oid === TIMESTAMPTZ_OID) return parseTimestamptz;
      if (oid === INT8_OID) return parseInt8Text;
    }
    return pg.types.getTypeParser(oid, format);
  },
};
