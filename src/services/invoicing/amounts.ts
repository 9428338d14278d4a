import type { ErrorDetail } from '../../platform/errors/app-error.js';
import {
  add,
  compare,
  DecimalFormatError,
  formatMinorUnits,
  multiply,
  parseDecimal,
  roundHalfUp,
  significantDecimals,
  toFixed,
  ZERO,
  type Decimal,
} from '../../lib/money.js';

/**
 * The invoicing arithmetic, exact and pure: amounts are major-unit decimal strings on the
 * wire and integer minor units (2 decimals) in storage; quantities, unit prices and tax
 * rates keep up to 4 decimals. Each line is rounded half-up to cents, then summed.
 */

export const MONEY_DECIMALS = 2;
export const QUANTITY_DECIMALS = 4;
export const UNIT_PRICE_DECIMALS = 4;
export const TAX_RATE_DECIMALS = 4;

/** The largest amount anywhere (a line, an invoice, a payment): 1,000,000,000,000.00. */
export const MAX_AMOUNT_MINOR = 100_000_000_000_000n;
export const MAX_AMOUNT_TEXT = formatMinorUnits(MAX_AMOUNT_MINOR);
const MAX_QUANTITY = parseDecimal('1000000000');
const MAX_UNIT_PRICE = parseDecimal('1000000000000');
const HUNDRED = parseDecimal('100');
const ONE_PERCENT = parseDecimal('0.01');

export interface DecimalRule {
  /** Most digits after the point (trailing zeros do not count: "1.50" has 1). */
  decimals: number;
  /** Whether 0 is allowed (otherwise the value must be greater than 0). */
  allowZero: boolean;
  max: Decimal;
  /** How the value is named in messages, e.g. "amount". */
  label: string;
}

export const MONEY_RULE: Omit<DecimalRule, 'label'> = { decimals: MONEY_DECIMALS, allowZero: false, max: { units: MAX_AMOUNT_MINOR, scale: 2 } };
export const MIN_AMOUNT_RULE: Omit<DecimalRule, 'label'> = { decimals: MONEY_DECIMALS, allowZero: true, max: { units: MAX_AMOUNT_MINOR, scale: 2 } };
export const QUANTITY_RULE: Omit<DecimalRule, 'label'> = { decimals: QUANTITY_DECIMALS, allowZero: false, max: MAX_QUANTITY };
export const UNIT_PRICE_RULE: Omit<DecimalRule, 'label'> = { decimals: UNIT_PRICE_DECIMALS, allowZero: true, max: MAX_UNIT_PRICE };
export const TAX_RATE_RULE: Omit<DecimalRule, 'label'> = { decimals: TAX_RATE_DECIMALS, allowZero: true, max: HUNDRED };

export type Checked = { ok: true; value: Decimal } | { ok: false; problem: ErrorDetail };

/**
 * Reads a decimal sent as a numeric string or a JSON number and checks it against a rule.
 * Exponents, signs other than none, NaN and Infinity are refused; problems come back as
 * a validation detail at `path`, never as an exception.
 */
export function checkDecimal(input: string | number, path: string, rule: DecimalRule): Checked {
  let value: Decimal;
  try {
    if (typeof input === 'string' && !/^-?\d+(\.\d+)?$/.test(input)) throw new DecimalFormatError('not plain');
    value = parseDecimal(input);
  } catch {
    return problem(path, 'invalid_format', `${rule.label} must be a plain decimal number such as "12.50" (digits, an optional point and decimals).`);
  }
  const sign = compare(value, ZERO);
  if (sign < 0 || (sign === 0 && !rule.allowZero)) {
    return problem(path, 'out_of_range', `${rule.label} must be ${rule.allowZero ? 'at least 0' : 'greater than 0'}.`);
  }
  if (significantDecimals(value) > rule.decimals) {
    return problem(path, 'invalid_format', `${rule.label} may have at most ${rule.decimals} decimal places.`);
  }
  if (compare(value, rule.max) > 0) {
    return problem(path, 'out_of_range', `${rule.label} must be at most ${plain(rule.max)}.`);
  }
  return { ok: true, value };
}

function problem(path: string, code: string, message: string): Checked {
  return { ok: false, problem: { path, code, message } };
}

/** Minor units of a decimal already checked to have at most 2 decimals. */
export function minorOf(value: Decimal): bigint {
  return roundHalfUp(value, MONEY_DECIMALS).units;
}

export interface LineValues {
  quantity: Decimal;
  unitPrice: Decimal;
  /** Percent, e.g. 8.875; null for no tax. */
  taxRate: Decimal | null;
}

export interface LineAmounts {
  subtotalMinor: bigint;
  taxMinor: bigint;
}

/**
 * One line: subtotal = round_half_up(quantity x unit_price, 2);
 * tax = round_half_up(subtotal x tax_rate / 100, 2). Both in minor units.
 */
export function lineAmounts(line: LineValues): LineAmounts {
  const subtotal = roundHalfUp(multiply(line.quantity, line.unitPrice), MONEY_DECIMALS);
  const tax = line.taxRate === null ? ZERO : multiply(subtotal, multiply(line.taxRate, ONE_PERCENT));
  return { subtotalMinor: subtotal.units, taxMinor: roundHalfUp(tax, MONEY_DECIMALS).units };
}

export interface InvoiceAmounts {
  subtotalMinor: bigint;
  taxTotalMinor: bigint;
  totalMinor: bigint;
}

/** Invoice totals: sums of the rounded line values (never re-rounded). */
export function invoiceAmounts(lines: readonly LineAmounts[]): InvoiceAmounts {
  let subtotalMinor = 0n;
  let taxTotalMinor = 0n;
  for (const line of lines) {
    subtotalMinor += line.subtotalMinor;
    taxTotalMinor += line.taxMinor;
  }
  return { subtotalMinor, taxTotalMinor, totalMinor: subtotalMinor + taxTotalMinor };
}

/** "12.30" from 1230n. */
export function money(minor: bigint): string {
  return formatMinorUnits(minor, MONEY_DECIMALS);
}

/** A decimal with only the decimals it needs: "1.5000" -> "1.5", "20" -> "20". */
export function plain(value: Decimal): string {
  return toFixed(value, significantDecimals(value));
}

/** A unit price: at least 2 decimals, more only when needed: "12.3" -> "12.30", "33.333" stays. */
export function price(value: Decimal): string {
  return toFixed(value, Math.max(MONEY_DECIMALS, significantDecimals(value)));
}

/** Sum of decimals, for tests and checks. */
export function sum(values: readonly Decimal[]): Decimal {
  return values.reduce<Decimal>((total, value) => add(total, value), ZERO);
}

// Calendar dates (YYYY-MM-DD, UTC)

/** The UTC calendar date of an instant. */
export function utcDate(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

/** A calendar date plus whole days. */
export function addDays(date: string, days: number): string {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
}
