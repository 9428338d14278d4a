import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatAmount, parseDecimal } from '../../lib/money.js';
import { addDays, checkDecimal, invoiceAmounts, lineAmounts, MIN_AMOUNT_RULE, money, MONEY_RULE, plain, QUANTITY_RULE, TAX_RATE_RULE, UNIT_PRICE_RULE } from './amounts.js';
import { formatInvoiceNumber, readLines } from './invoices.js';
import { isInt64Id } from '../../platform/http/schemas.js';
import { normalizeCountry } from './countries.js';

const d = parseDecimal;
const line = (quantity: string, unitPrice: string, taxRate: string | null = null) =>
  lineAmounts({ quantity: d(quantity), unitPrice: d(unitPrice), taxRate: taxRate === null ? null : d(taxRate) }, 'USD');

describe('line and invoice arithmetic', () => {
  it('adds 0.10 + 0.20 to exactly 0.30 across lines', () => {
    const totals = invoiceAmounts([line('1', '0.1'), line('1', '0.2')]);
    expect(money(totals.totalMinor, 'USD')).toBe('0.30');
    expect(totals.totalMinor).toBe(30n);
  });

  it('rounds 3 x 33.333 half-up to 100.00 per line', () => {
    expect(money(line('3', '33.333').subtotalMinor, 'USD')).toBe('100.00');
  });

  it('sums rounded lines: three lines of 1 x 33.335 are 3 x 33.34 = 100.02, not 100.01', () => {
    const one = line('1', '33.335');
    expect(money(one.subtotalMinor, 'USD')).toBe('33.34');
    expect(money(invoiceAmounts([one, one, one]).subtotalMinor, 'USD')).toBe('100.02');
  });

  it('computes tax on the rounded line subtotal, rounded half-up', () => {
    // 19.99 at 8.875 % = 1.7741... -> 1.77
    expect(line('1', '19.99', '8.875')).toEqual({ subtotalMinor: 1999n, taxMinor: 177n });
    // 0.05 at 10 % = 0.005 -> 0.01 (half-up, not banker's rounding)
    expect(line('1', '0.05', '10').taxMinor).toBe(1n);
    // 2.5 x 0.01 = 0.025 -> 0.03
    expect(line('2.5', '0.01').subtotalMinor).toBe(3n);
    // tax on the rounded subtotal: 3 x 33.333 = 100.00 (not 99.999) at 20 % -> 20.00
    expect(line('3', '33.333', '20')).toEqual({ subtotalMinor: 10000n, taxMinor: 2000n });
  });

  it('totals an invoice as the sum of rounded lines and taxes', () => {
    const totals = invoiceAmounts([line('3', '33.333', '20'), line('1', '19.99', '8.875'), line('0.5', '0.01')]);
    expect({ subtotal: money(totals.subtotalMinor, 'USD'), tax: money(totals.taxTotalMinor, 'USD'), total: money(totals.totalMinor, 'USD') }).toEqual({
      subtotal: '120.00',
      tax: '21.77',
      total: '141.77',
    });
  });

  it('prices lines from request values and reports every problem with its path', () => {
    const { lines, totals } = readLines([{ description: ' Work ', quantity: '1.50', unit_price: 10, tax_rate: '20.000' }], 'USD');
    expect(lines[0]).toMatchObject({ description: 'Work', quantity: '1.5', unit_price: '10', tax_rate: '20', subtotal_minor: 1500n, tax_minor: 300n });
    expect(totals.totalMinor).toBe(1800n);
    try {
      readLines(
        [
          { description: 'a', quantity: '0', unit_price: '1.00001' },
          { description: 'b', quantity: '1', unit_price: '1', tax_rate: '100.5' },
        ],
        'USD',
      );
      expect.unreachable();
    } catch (error) {
      expect((error as { details: Array<{ path: string }> }).details.map((detail) => detail.path)).toEqual([
        'line_items[0].quantity',
        'line_items[0].unit_price',
        'line_items[1].tax_rate',
      ]);
    }
  });

  it('refuses an invoice above the largest amount', () => {
    expect(() => readLines([{ description: 'big', quantity: '1000000000', unit_price: '1000000000000' }], 'USD')).toThrow();
    expect(() =>
      readLines(
        Array.from({ length: 2 }, () => ({ description: 'x', quantity: '1', unit_price: '600000000000' })),
        'USD',
      ),
    ).toThrow();
  });
});

describe('checking decimal input', () => {
  const money2 = { ...MONEY_RULE, label: 'amount' };

  it.each([
    ['12', '12'],
    ['12.5', '12.5'],
    ['12.50', '12.5'],
    [12.5, '12.5'],
    [0.1, '0.1'],
    ['0.01', '0.01'],
  ])('accepts %j', (input, expected) => {
    const checked = checkDecimal(input, 'amount', money2);
    expect(checked.ok && plain(checked.value)).toBe(expected);
  });

  it.each([
    ['0', 'out_of_range'],
    [0, 'out_of_range'],
    ['-1', 'out_of_range'],
    [-0.5, 'out_of_range'],
    ['1.005', 'invalid_format'],
    [1.005, 'invalid_format'],
    ['1e3', 'invalid_format'],
    [1e21, 'invalid_format'],
    ['', 'invalid_format'],
    [' 1', 'invalid_format'],
    ['+1', 'invalid_format'],
    ['1,5', 'invalid_format'],
    ['NaN', 'invalid_format'],
    ['Infinity', 'invalid_format'],
    ['0x10', 'invalid_format'],
    ['1000000000000.01', 'out_of_range'],
  ])('refuses %j with %s', (input, code) => {
    const checked = checkDecimal(input, 'amount', money2);
    expect(checked.ok ? 'accepted' : checked.problem).toMatchObject({ path: 'amount', code });
  });

  it('applies each rule: zero allowed where it should be, decimals per field', () => {
    expect(checkDecimal('0', 'min_amount', { ...MIN_AMOUNT_RULE, label: 'min_amount' }).ok).toBe(true);
    expect(checkDecimal('0', 'unit_price', { ...UNIT_PRICE_RULE, label: 'unit_price' }).ok).toBe(true);
    expect(checkDecimal('33.3333', 'unit_price', { ...UNIT_PRICE_RULE, label: 'unit_price' }).ok).toBe(true);
    expect(checkDecimal('0', 'quantity', { ...QUANTITY_RULE, label: 'quantity' }).ok).toBe(false);
    expect(checkDecimal('0.0001', 'quantity', { ...QUANTITY_RULE, label: 'quantity' }).ok).toBe(true);
    expect(checkDecimal('100', 'tax_rate', { ...TAX_RATE_RULE, label: 'tax_rate' }).ok).toBe(true);
    expect(checkDecimal('100.0001', 'tax_rate', { ...TAX_RATE_RULE, label: 'tax_rate' }).ok).toBe(false);
  });
});

describe('formatting', () => {
  it('formats money with 2 decimals, quantities plainly, prices with at least 2 decimals', () => {
    expect(money(1230n, 'USD')).toBe('12.30');
    expect(money(5n, 'USD')).toBe('0.05');
    expect(plain(d('1.5000'))).toBe('1.5');
    expect(plain(d('20.0000'))).toBe('20');
  });

  it('numbers invoices INV-000001 and grows past six digits', () => {
    expect(formatInvoiceNumber(1n)).toBe('INV-000001');
    expect(formatInvoiceNumber(1234567n)).toBe('INV-1234567');
  });

  it('adds days to calendar dates across months and leap days', () => {
    expect(addDays('2026-01-31', 30)).toBe('2026-03-02');
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2026-12-31', 0)).toBe('2026-12-31');
  });
});

describe('ids and countries', () => {
  it.each(['1', '42', '9223372036854775807'])('accepts the id %s', (value) => expect(isInt64Id(value)).toBe(true));
  it.each(['0', '-1', '+1', '01', '1.0', '1e3', 'abc', '', ' 1', '9223372036854775808', '99999999999999999999'])('refuses the id %j', (value) =>
    expect(isInt64Id(value)).toBe(false),
  );

  it('knows ISO 3166-1 alpha-2 codes in any case, and not regions that are not countries', () => {
    expect(normalizeCountry('gb')).toBe('GB');
    expect(normalizeCountry('De')).toBe('DE');
    expect(normalizeCountry('XK')).toBe('XK');
    for (const code of ['UK', 'EU', 'XX', 'ZZ', 'QO', 'AN', 'UN']) expect(normalizeCountry(code)).toBeUndefined();
  });
});

describe('stored amounts as shown', () => {
  it('writes hundredths exactly as the general decimal formatting does, in every kind of currency', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 16n), max: 10n ** 16n }), fc.constantFrom('USD', 'JPY', 'KWD', 'CLF', 'EUR', 'BHD'), (stored, currency) => {
        expect(money(stored, currency)).toBe(formatAmount({ units: stored, scale: 2 }, currency));
      }),
      { numRuns: 2000 },
    );
    expect([money(5n, 'USD'), money(-5n, 'USD'), money(150000n, 'JPY'), money(150050n, 'JPY'), money(120n, 'KWD'), money(0n, 'JPY')]).toEqual([
      '0.05',
      '-0.05',
      '1500',
      '1500.50',
      '1.20',
      '0',
    ]);
  });
});
