import { describe, expect, it } from 'vitest';
import { add, compare, DecimalFormatError, formatMinorUnits, multiply, parseDecimal, roundHalfUp, significantDecimals, subtract, toFixed, toMinorUnits, trimDecimalText } from './money.js';

const d = parseDecimal;

describe('exact decimals', () => {
  it('adds 0.1 and 0.2 to exactly 0.3', () => {
    expect(toFixed(add(d('0.1'), d('0.2')), 2)).toBe('0.30');
    expect(compare(add(d('0.1'), d('0.2')), d('0.3'))).toBe(0);
    expect(toFixed(add(d(0.1), d(0.2)), 2)).toBe('0.30');
  });

  it('rounds 3 x 33.333 half-up to 100.00, and per line before summing', () => {
    expect(toFixed(multiply(d('3'), d('33.333')), 2)).toBe('100.00');
    const line = roundHalfUp(multiply(d('1'), d('33.335')), 2);
    expect(toFixed(line, 2)).toBe('33.34');
    const threeLines = add(add(line, line), line);
    expect(toFixed(threeLines, 2)).toBe('100.02');
  });

  it('rounds half away from zero at every position', () => {
    expect(toFixed(d('2.345'), 2)).toBe('2.35');
    expect(toFixed(d('2.344'), 2)).toBe('2.34');
    expect(toFixed(d('-2.345'), 2)).toBe('-2.35');
    expect(toFixed(d('0.005'), 2)).toBe('0.01');
    expect(toFixed(d('0.0049999'), 2)).toBe('0.00');
    expect(toFixed(d('1.5'), 0)).toBe('2');
    expect(toFixed(d('7'), 2)).toBe('7.00');
  });

  it('computes tax exactly: 19.99 at 8.875 % is 1.77', () => {
    expect(toFixed(multiply(d('19.99'), multiply(d('8.875'), d('0.01'))), 2)).toBe('1.77');
  });

  it('subtracts and compares', () => {
    expect(toFixed(subtract(d('10'), d('0.01')), 2)).toBe('9.99');
    expect(compare(d('1.50'), d('1.5'))).toBe(0);
    expect(compare(d('-1'), d('0'))).toBe(-1);
    expect(compare(d('100000000000000000000.01'), d('100000000000000000000'))).toBe(1);
  });

  it('counts significant decimals', () => {
    expect(significantDecimals(d('1.50'))).toBe(1);
    expect(significantDecimals(d('1.005'))).toBe(3);
    expect(significantDecimals(d('3'))).toBe(0);
  });

  it.each(['', ' 1', '1,5', '1e3', 'NaN', 'Infinity', '.5', '5.', '--1', '0x10', '1.2.3', '9'.repeat(31)])('refuses %j', (text) => {
    expect(() => parseDecimal(text)).toThrow(DecimalFormatError);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, 1e21, 1e-7])('refuses the number %s', (value) => {
    expect(() => parseDecimal(value)).toThrow(DecimalFormatError);
  });
});

describe('minor units', () => {
  it('converts major-unit amounts with at most 2 decimals', () => {
    expect(toMinorUnits(d('12.3'))).toBe(1230n);
    expect(toMinorUnits(d('12.30'))).toBe(1230n);
    expect(toMinorUnits(d(0.1))).toBe(10n);
    expect(() => toMinorUnits(d('12.345'))).toThrow(DecimalFormatError);
    expect(() => toMinorUnits(d(0.1 + 0.2))).toThrow(DecimalFormatError);
  });

  it('formats minor units as major-unit strings', () => {
    expect(formatMinorUnits(1230n)).toBe('12.30');
    expect(formatMinorUnits(5n)).toBe('0.05');
    expect(formatMinorUnits(-5n)).toBe('-0.05');
    expect(formatMinorUnits(0n)).toBe('0.00');
  });
});

describe('stored decimal text', () => {
  it('keeps only the decimals needed, at least the minimum, exactly as the BigInt path does', () => {
    expect(trimDecimalText('2.0000')).toBe('2');
    expect(trimDecimalText('100.5000', 2)).toBe('100.50');
    expect(trimDecimalText('5.1', 2)).toBe('5.10');
    expect(trimDecimalText('0.0000', 2)).toBe('0.00');
    expect(trimDecimalText('33.3330', 2)).toBe('33.333');
    expect(trimDecimalText('7', 2)).toBe('7.00');
    expect(trimDecimalText('-1.5000')).toBe('-1.5');
    for (let index = 0; index < 5_000; index += 1) {
      const whole = String(Math.floor(Math.random() * 10 ** Math.floor(Math.random() * 12)));
      const decimals = Math.floor(Math.random() * 7);
      const text = decimals === 0 ? whole : `${whole}.${String(Math.floor(Math.random() * 10 ** decimals)).padStart(decimals, '0')}`;
      for (const minimum of [0, 2, 4]) {
        const value = parseDecimal(text);
        expect(trimDecimalText(text, minimum)).toBe(toFixed(value, Math.max(minimum, significantDecimals(value))));
      }
    }
  });
});
