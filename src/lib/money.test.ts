import { describe, expect, it } from 'vitest';
import { CURRENCY_CODES, minorUnitExponent, normalizeCurrency } from './currency.js';
import {
  add,
  compare,
  decimalsAllowed,
  decimalsMessage,
  DecimalFormatError,
  fitsCurrency,
  formatAmount,
  formatMinorUnits,
  fromMinorUnits,
  minorUnitsProblem,
  multiply,
  parseDecimal,
  roundHalfUp,
  significantDecimals,
  subtract,
  toFixed,
  toMinorUnits,
  trimDecimalText,
} from './money.js';

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

describe('the ISO 4217 table', () => {
  it('knows every active code with its minor-unit exponent', () => {
    expect(CURRENCY_CODES).toHaveLength(165);
    const byExponent = (exponent: number) => CURRENCY_CODES.filter((code) => minorUnitExponent(code) === exponent).join(' ');
    expect(byExponent(0)).toBe('BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF');
    expect(byExponent(3)).toBe('BHD IQD JOD KWD LYD OMR TND');
    expect(byExponent(4)).toBe('CLF UYW');
    expect(minorUnitExponent('USD')).toBe(2);
    expect(minorUnitExponent('jpy')).toBe(0);
  });

  it('accepts active codes that Intl does not list, and refuses withdrawn codes and codes without a minor unit', () => {
    for (const code of ['CLF', 'UYW', 'UYI', 'VED', 'XAD', 'XCG', 'ZWG']) expect(normalizeCurrency(code.toLowerCase())).toBe(code);
    for (const code of ['HRK', 'ANG', 'SLL', 'ZWL', 'CUC', 'XAU', 'XDR', 'XSU', 'XTS', 'XXX']) expect(normalizeCurrency(code)).toBeUndefined();
  });

  it('allows at most 2 decimals whatever the exponent', () => {
    expect(['JPY', 'USD', 'KWD', 'BHD', 'CLF'].map(decimalsAllowed)).toEqual([0, 2, 2, 2, 2]);
  });
});

describe('money in a currency', () => {
  it('converts decimal amounts to ISO minor units', () => {
    expect(toMinorUnits('15.00', 'USD')).toBe(1500n);
    expect(toMinorUnits('12.3', 'USD')).toBe(1230n);
    expect(toMinorUnits(d(0.1), 'USD')).toBe(10n);
    expect(toMinorUnits('1500', 'JPY')).toBe(1500n);
    expect(toMinorUnits('1500.00', 'JPY')).toBe(1500n);
    expect(toMinorUnits('1.23', 'KWD')).toBe(1230n);
    expect(toMinorUnits('1.2', 'BHD')).toBe(1200n);
    expect(toMinorUnits('1.23', 'CLF')).toBe(12300n);
  });

  it('refuses more decimals than the currency allows, never rounding', () => {
    expect(() => toMinorUnits('1500.50', 'JPY')).toThrow('JPY has no minor unit; amounts must be whole numbers.');
    expect(() => toMinorUnits('12.345', 'USD')).toThrow(DecimalFormatError);
    expect(() => toMinorUnits('1.234', 'KWD')).toThrow('amount may have at most 2 decimal places in KWD.');
    expect(() => toMinorUnits('1.234', 'BHD')).toThrow(DecimalFormatError);
    expect(() => toMinorUnits('1.2345', 'CLF')).toThrow(DecimalFormatError);
    expect(() => toMinorUnits(d(0.1 + 0.2), 'USD')).toThrow(DecimalFormatError);
    expect(fitsCurrency(d('1500.00'), 'JPY')).toBe(true);
    expect(fitsCurrency(d('1500.5'), 'JPY')).toBe(false);
    expect(decimalsMessage('UGX')).toBe('UGX has no minor unit; amounts must be whole numbers.');
  });

  it("formats minor units as decimal text with the currency's decimals", () => {
    expect(formatMinorUnits(1500n, 'JPY')).toBe('1500');
    expect(formatMinorUnits(1500n, 'USD')).toBe('15.00');
    expect(formatMinorUnits(5n, 'USD')).toBe('0.05');
    expect(formatMinorUnits(-5n, 'USD')).toBe('-0.05');
    expect(formatMinorUnits(0n, 'USD')).toBe('0.00');
    expect(formatMinorUnits(1230n, 'KWD')).toBe('1.23');
    expect(formatMinorUnits(1200n, 'BHD')).toBe('1.20');
    expect(formatMinorUnits(12300n, 'CLF')).toBe('1.23');
    expect(fromMinorUnits(1500n, 'JPY')).toEqual({ units: 1500n, scale: 0 });
  });

  it('never rounds an amount away when formatting (rows stored before the currency rules)', () => {
    expect(formatAmount(d('1500.50'), 'JPY')).toBe('1500.50');
    expect(formatMinorUnits(1235n, 'KWD')).toBe('1.235');
    expect(formatAmount(d('1500.00'), 'JPY')).toBe('1500');
  });

  it('checks `_cents` counts: any whole number for JPY and USD, multiples of 10 fils for KWD, of 100 for CLF', () => {
    expect(minorUnitsProblem(1500, 'JPY', 'unit_price_cents')).toBeUndefined();
    expect(minorUnitsProblem(1, 'USD', 'unit_price_cents')).toBeUndefined();
    expect(minorUnitsProblem(1230, 'KWD', 'unit_price_cents')).toBeUndefined();
    expect(minorUnitsProblem(1235, 'KWD', 'unit_price_cents')).toMatch(/multiple of 10/);
    expect(minorUnitsProblem(1235, 'BHD', 'amount_cents')).toMatch(/^amount_cents .*multiple of 10/);
    expect(minorUnitsProblem(12300, 'CLF', 'x')).toBeUndefined();
    expect(minorUnitsProblem(12310, 'CLF', 'x')).toMatch(/multiple of 100/);
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

describe('toFixed on stored amounts', () => {
  it('cuts zero decimals as text and rounds the rest, exactly as roundHalfUp does', () => {
    expect(toFixed({ units: 150000n, scale: 4 }, 2)).toBe('15.00');
    expect(toFixed({ units: -150000n, scale: 4 }, 2)).toBe('-15.00');
    expect(toFixed({ units: 0n, scale: 4 }, 2)).toBe('0.00');
    expect(toFixed({ units: 500n, scale: 4 }, 2)).toBe('0.05');
    expect(toFixed({ units: 5n, scale: 4 }, 2)).toBe('0.00');
    expect(toFixed({ units: 50n, scale: 4 }, 2)).toBe('0.01');
    expect(toFixed({ units: 15000000n, scale: 4 }, 0)).toBe('1500');
    for (let index = 0; index < 20_000; index += 1) {
      const magnitude = BigInt(Math.floor(Math.random() * 10 ** Math.floor(Math.random() * 15)));
      const units = Math.random() < 0.3 ? -magnitude : magnitude;
      const scale = Math.floor(Math.random() * 6);
      const target = Math.floor(Math.random() * (scale + 1));
      const value = { units: Math.random() < 0.5 ? units * 10n ** BigInt(scale - target) : units, scale };
      const rounded = roundHalfUp(value, target);
      const negative = rounded.units < 0n;
      const digits = (negative ? -rounded.units : rounded.units).toString().padStart(target + 1, '0');
      const expected = `${negative ? '-' : ''}${target === 0 ? digits : `${digits.slice(0, -target)}.${digits.slice(-target)}`}`;
      expect(toFixed(value, target)).toBe(expected);
    }
  });
});
