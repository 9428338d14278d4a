import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseTimestamptz, pgTypes } from './timestamptz.js';

const pgParser = pg.types.getTypeParser(1184, 'text') as (text: string) => unknown;

function expectSameAsPg(text: string): void {
  const ours = parseTimestamptz(text);
  const theirs = pgParser(text);
  if (theirs instanceof Date) {
    expect(ours).toBeInstanceOf(Date);
    expect((ours as Date).getTime(), text).toBe(theirs.getTime());
  } else {
    expect(ours, text).toEqual(theirs);
  }
}

describe('parseTimestamptz', () => {
  it('reads the usual form with every fraction length and offset shape', () => {
    for (const fraction of ['', '.1', '.12', '.123', '.1234', '.12345', '.123456', '.999999', '.000001']) {
      for (const offset of ['+00', '-00', '+05', '-08', '+05:30', '-03:30', '+14', '-12', '+00:30:15', '-04:56:02']) {
        expectSameAsPg(`2026-11-22 03:04:05${fraction}${offset}`);
      }
    }
  });

  it('truncates beyond milliseconds as pg does', () => {
    expect((parseTimestamptz('2026-11-22 03:04:05.123999+00') as Date).toISOString()).toBe('2026-11-22T03:04:05.123Z');
    expect((parseTimestamptz('2026-11-22 03:04:05.5+00') as Date).toISOString()).toBe('2026-11-22T03:04:05.500Z');
  });

  it('agrees with pg on many random instants', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let index = 0; index < 5000; index += 1) {
      const instant = new Date(Date.UTC(1000, 0, 1) + Math.floor(random() * (Date.UTC(9999, 11, 31) - Date.UTC(1000, 0, 1))));
      const micros = String(Math.floor(random() * 1_000_000))
        .padStart(6, '0')
        .slice(0, 1 + Math.floor(random() * 6));
      const offsetMinutes = Math.floor(random() * 26 * 60) - 12 * 60;
      const local = new Date(instant.getTime() + offsetMinutes * 60_000);
      const pad = (value: number, width = 2) => String(value).padStart(width, '0');
      const sign = offsetMinutes < 0 ? '-' : '+';
      const absolute = Math.abs(offsetMinutes);
      const text =
        `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())} ` +
        `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}.${micros}` +
        `${sign}${pad(Math.floor(absolute / 60))}${absolute % 60 ? `:${pad(absolute % 60)}` : ''}`;
      expectSameAsPg(text);
    }
  });

  it('hands every other form to pg', () => {
    for (const text of [
      'infinity',
      '-infinity',
      '2026-11-22 03:04:05 BC',
      '2026-11-22 03:04:05+00 BC',
      '0099-01-01 00:00:00+00',
      '0999-12-31 23:59:59.5+00',
      '12026-11-22 03:04:05+00',
      '2026-11-22',
      '2026-11-22 03:04:05',
      '2026-11-22 03:04:05.',
      '2026-11-22 03:04:05+0',
      '2026-11-22 03:04:05+00:3',
      '2026-11-22 03:04:05+00:30:1',
      '2026-11-22 03:04:05+00:30:15:00',
      '2026-11-22T03:04:05Z',
      '2026-1x-22 03:04:05+00',
    ]) {
      expectSameAsPg(text);
    }
  });
});

describe('pgTypes', () => {
  it('reads bigint text as pg does: the same decimal text', () => {
    const ours = pgTypes.getTypeParser(20, 'text') as (text: string) => unknown;
    const theirs = pg.types.getTypeParser(20, 'text') as (text: string) => unknown;
    for (const text of ['0', '7', '-1', '9007199254740993', '-9223372036854775808', '9223372036854775807']) {
      expect(ours(text), text).toBe(theirs(text));
    }
  });

  it('hands every other type and the binary forms to pg', () => {
    expect(pgTypes.getTypeParser(23, 'text')).toBe(pg.types.getTypeParser(23, 'text'));
    expect(pgTypes.getTypeParser(20, 'binary')).toBe(pg.types.getTypeParser(20, 'binary'));
    expect(pgTypes.getTypeParser(1184, 'text')).toBe(parseTimestamptz);
  });
});
