import type { ErrorDetail } from '../../platform/errors/app-error.js';
import {
  add,
  compare,
  decimalsAllowed,
  decimalsMessage,
  DecimalFormatError,
  fitsCurrency,
  MAX_AMOUNT_DECIMALS,
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
 * wire with the currency's decimals (`src/lib/money.ts`: JPY "1500", USD "12.30"), and
 * hundredths of the major unit in storage (`*_minor` columns, scale 2, whatever the
 * currency: every amount the spec allows fits exactly, and rows stored before the
 * currency rules stay exact). Quantities, unit prices and tax rates keep up to 4
 * decimals. Each line is rounded half-up to the currency's decimals, then summed.
 */

/** Decimals of the stored `*_minor` integers: hundredths of the major unit. */
export const STORED_SCALE = MAX_AMOUNT_DECIMALS;
export const QUANTITY_DECIMALS = 4;
export const UNIT_PRICE_DECIMALS = 4;
export const TAX_RATE_DECIMALS = 4;

/** The largest amount anywhere (a line, an invoice, a payment): 1,000,000,000,000.00. */
export const MAX_AMOUNT_MINOR = 100_000_000_000_000n;
export const MAX_AMOUNT_TEXT = toFixed({ units: MAX_AMOUNT_MINOR, scale: STORED_SCALE }, STORED_SCALE);
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

export const MONEY_RULE: Omit<DecimalRule, 'label'> = { decimals: MAX_AMOUNT_DECIMALS, allowZero: false, max: { units: MAX_AMOUNT_MINOR, scale: STORED_SCALE } };
export const MIN_AMOUNT_RULE: Omit<DecimalRule, 'label'> = { decimals: MAX_AMOUNT_DECIMALS, allowZero: true, max: { units: MAX_AMOUNT_MINOR, scale: STORED_SCALE } };
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

/**
 * `checkDecimal`, then the currency's own limit (JPY: whole numbers) when the currency is
 * known; `currency` undefined checks only the spec's 2 decimals, for amounts whose
 * currency is read later (then `fitCurrency`).
 */
export function checkMoney(input: string | number, path: string, rule: DecimalRule, currency: string | undefined): Checked {
  const checked = checkDecimal(input, path, rule);
  return checked.ok && currency !== undefined ? fitCurrency(checked.value, path, currency, rule.label) : checked;
}

/** A checked amount against its currency's decimals: JPY "1500.50" is refused, "1500" and "1500.00" pass. */
export function fitCurrency(value: Decimal, path: string, currency: string, label: string): Checked {
  return fitsCurrency(value, currency) ? { ok: true, value } : problem(path, 'invalid_format', decimalsMessage(currency, label));
}

/**
 * A unit price: up to 4 decimals (Xero's precision, so 3 x 33.333 can be written), except
 * in a currency without a minor unit, where it is a whole number like every other amount.
 */
export function checkUnitPrice(input: string | number, path: string, currency: string): Checked {
  const checked = checkDecimal(input, path, { ...UNIT_PRICE_RULE, label: 'unit_price' });
  return checked.ok && decimalsAllowed(currency) === 0 ? fitCurrency(checked.value, path, currency, 'unit_price') : checked;
}

function problem(path: string, code: string, message: string): Checked {
  return { ok: false, problem: { path, code, message } };
}

/** The stored integer (hundredths) of an amount already checked to have at most 2 decimals. */
export function minorOf(value: Decimal): bigint {
  return roundHalfUp(value, STORED_SCALE).units;
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
 * One line, with d = the currency's decimals (USD 2, JPY 0): subtotal =
 * round_half_up(quantity x unit_price, d); tax = round_half_up(subtotal x tax_rate / 100, d).
 * Both as stored integers (hundredths).
 */
export function lineAmounts(line: LineValues, currency: string): LineAmounts {
  const decimals = decimalsAllowed(currency);
  const subtotal = roundHalfUp(multiply(line.quantity, line.unitPrice), decimals);
  const tax = line.taxRate === null ? ZERO : roundHalfUp(multiply(subtotal, multiply(line.taxRate, ONE_PERCENT)), decimals);
  return { subtotalMinor: minorOf(subtotal), taxMinor: minorOf(tax) };
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

/** A stored `*_minor` integer: a BigInt in the rules, decimal text (or a number on the embedded database) as read. */
export type StoredAmount = bigint | string | number;

/**
 * A stored amount as the API shows it: (1230n, "USD") -> "12.30", (150000n, "JPY") -> "1500";
 * null (a policy for any currency) keeps the spec's 2 decimals. The amount may also be the
 * driver's own reading of the column (decimal text, or a number on the embedded database):
 * list pages show it without first making a BigInt of it.
 */
export function money(stored: StoredAmount, currency: string | null): string {
  if (currency === null) return toFixed({ units: BigInt(stored), scale: STORED_SCALE }, STORED_SCALE);
  return hundredthsAsAmount(typeof stored === 'string' ? stored : String(stored), decimalsAllowed(currency));
}

/** Zero as shown with 0, 1 or 2 decimals: the most common amount on a page (taxes, payments), with no new string each time. */
const ZERO_SHOWN = ['0', '0.0', '0.00'] as const;

/**
 * `formatAmount({ units: stored, scale: 2 }, currency)` by string operations on the stored
 * integer's decimal text: lists show many stored amounts, and the general path allocated a
 * BigInt text per step.
 */
function hundredthsAsAmount(storedText: string, allowed: number): string {
  if (storedText === '0') return ZERO_SHOWN[allowed]!;
  const negative = storedText.charCodeAt(0) === 45; /* - */
  const digits = negative || storedText.length < 3 ? (negative ? storedText.slice(1) : storedText).padStart(3, '0') : storedText;
  const point = digits.length - 2;
  const tenths = digits.charCodeAt(point);
  const hundredths = digits.charCodeAt(point + 1);
  const needed = hundredths !== 48 /* 0 */ ? 2 : tenths !== 48 ? 1 : 0;
  const shown = needed <= allowed ? allowed : STORED_SCALE;
  const whole = negative ? '-' + digits.slice(0, point) : digits.slice(0, point);
  return shown === 0 ? whole : whole + '.' + digits.slice(point, point + shown);
}

/** A decimal with only the decimals it needs: "1.5000" -> "1.5", "20" -> "20". */
export function plain(value: Decimal): string {
  return toFixed(value, significantDecimals(value));
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
