import { minorUnitExponent } from './currency.js';

/**
 * Exact decimal arithmetic for money and quantities, on BigInt: a `Decimal` is
 * `units x 10^-scale`. No binary floating point is ever involved, so 0.1 + 0.2 is 0.3.
 */
export interface Decimal {
  units: bigint;
  scale: number;
}

const DECIMAL_PATTERN = /^([+-]?)(\d+)(?:\.(\d+))?$/;
/** Far beyond any real amount; keeps hostile inputs from building huge numbers. */
const MAX_DIGITS = 30;

export class DecimalFormatError extends Error {}

/**
 * Parses `"12"`, `"12.5"`, `"-0.25"` (and JSON numbers, through their shortest text form).
 * Exponents, spaces, commas, `NaN` and `Infinity` are refused.
 */
export function parseDecimal(input: string | number): Decimal {
  const text = typeof input === 'number' ? numberToPlainText(input) : input;
  const match = DECIMAL_PATTERN.exec(text);
  if (!match) throw new DecimalFormatError(`"${String(input)}" is not a decimal number.`);
  const [, sign, whole, fraction = ''] = match;
  if (whole!.length + fraction.length > MAX_DIGITS) throw new DecimalFormatError(`"${String(input)}" has too many digits.`);
  const units = BigInt(`${whole}${fraction}`);
  return { units: sign === '-' ? -units : units, scale: fraction.length };
}

function numberToPlainText(value: number): string {
  if (!Number.isFinite(value)) throw new DecimalFormatError(`${value} is not a finite number.`);
  const text = String(value);
  if (/e/i.test(text)) throw new DecimalFormatError(`${text} is too large or too small.`);
  return text;
}

/** Number of digits after the point as written, ignoring trailing zeros ("1.50" has 1). */
export function significantDecimals(value: Decimal): number {
  if (value.scale === 0 || value.units === 0n) return 0;
  // Counted on the digits' text: BigInt division allocates a new number per step.
  const digits = value.units.toString();
  let scale = value.scale;
  for (let index = digits.length - 1; scale > 0 && digits.charCodeAt(index) === 48 /* 0 */; index -= 1) scale -= 1;
  return scale;
}

function rescaleUp(value: Decimal, scale: number): bigint {
  return scale === value.scale ? value.units : value.units * 10n ** BigInt(scale - value.scale);
}

export function add(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  return { units: rescaleUp(a, scale) + rescaleUp(b, scale), scale };
}

export function subtract(a: Decimal, b: Decimal): Decimal {
  return add(a, { units: -b.units, scale: b.scale });
}

export function multiply(a: Decimal, b: Decimal): Decimal {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

export function compare(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const scale = Math.max(a.scale, b.scale);
  const left = rescaleUp(a, scale);
  const right = rescaleUp(b, scale);
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Rounds half away from zero ("half-up" as accountants use it) to `scale` decimals. */
export function roundHalfUp(value: Decimal, scale: number): Decimal {
  if (value.scale === scale) return value;
  if (value.scale < scale) return { units: rescaleUp(value, scale), scale };
  const divisor = 10n ** BigInt(value.scale - scale);
  const negative = value.units < 0n;
  const magnitude = negative ? -value.units : value.units;
  let quotient = magnitude / divisor;
  if ((magnitude % divisor) * 2n >= divisor) quotient += 1n;
  return { units: negative ? -quotient : quotient, scale };
}

/**
 * Fixed-point text with exactly `scale` decimals, e.g. `toFixed(x, 2)` -> "12.30". Lists
 * format hundreds of amounts per page, so the common cases work on the digits' text:
 * no rounding when the scale already fits, and added decimals are appended zeros.
 */
export function toFixed(value: Decimal, scale: number): string {
  if (value.scale <= scale) return pointAt(value.units, value.scale, '0'.repeat(scale - value.scale));
  // Stored amounts carry more decimals than they show, nearly always zeros: those are cut as text.
  const negative = value.units < 0n;
  const digits = (negative ? -value.units : value.units).toString();
  const dropped = value.scale - scale;
  if (endsWithZeros(digits, dropped)) return digitsAt(negative, digits.slice(0, digits.length - dropped) || '0', scale, '');
  return pointAt(roundHalfUp(value, scale).units, scale, '');
}

function endsWithZeros(digits: string, count: number): boolean {
  if (digits.length <= count) return digits === '0';
  for (let index = digits.length - count; index < digits.length; index += 1) if (digits.charCodeAt(index) !== 48 /* 0 */) return false;
  return true;
}

/** `units x 10^-scale` as text with `zeros` appended to its decimals. */
function pointAt(units: bigint, scale: number, zeros: string): string {
  const negative = units < 0n;
  return digitsAt(negative, (negative ? -units : units).toString(), scale, zeros);
}

/** The magnitude `digits x 10^-scale`, signed, as text with `zeros` appended to its decimals. */
function digitsAt(negative: boolean, digits: string, scale: number, zeros: string): string {
  if (digits.length <= scale) digits = digits.padStart(scale + 1, '0');
  const sign = negative ? '-' : '';
  if (scale === 0) return zeros === '' ? `${sign}${digits}` : `${sign}${digits}.${zeros}`;
  const cut = digits.length - scale;
  return `${sign}${digits.slice(0, cut)}.${digits.slice(cut)}${zeros}`;
}

export const ZERO: Decimal = { units: 0n, scale: 0 };

// Money in a currency. Minor units follow ISO 4217 (`src/lib/currency.ts`): JPY 1500 is
// 1500 yen, USD 1500 is 15.00 dollars, KWD 1500 is 1.500 dinars. Decimal amounts keep the
// spec's limit of 2 decimal places, so a three- or four-decimal currency is written with 2.

/** The spec's limit on decimal places of an amount, whatever the currency. */
export const MAX_AMOUNT_DECIMALS = 2;

/** Decimal places an amount in `currency` may have: JPY 0, USD 2, KWD 2 (the spec's limit), CLF 2. */
export function decimalsAllowed(currency: string): number {
  return Math.min(minorUnitExponent(currency), MAX_AMOUNT_DECIMALS);
}

/** Why an amount does not fit its currency, in the words every service answers with. */
export function decimalsMessage(currency: string, label = 'amount'): string {
  const decimals = decimalsAllowed(currency);
  if (decimals === 0) return `${currency} has no minor unit; amounts must be whole numbers.`;
  return `${label} may have at most ${decimals} decimal places in ${currency}.`;
}

/** Whether a decimal amount has no more decimal places than `currency` allows ("1500.00" JPY does: the zeros say nothing). */
export function fitsCurrency(value: Decimal, currency: string): boolean {
  return significantDecimals(value) <= decimalsAllowed(currency);
}

/**
 * A decimal amount (`"15.00"`, `"1500"`, a Decimal) in the currency's ISO minor units:
 * ("15.00", "USD") -> 1500n, ("1500", "JPY") -> 1500n, ("1.23", "KWD") -> 1230n.
 * More decimal places than `decimalsAllowed` is a DecimalFormatError, never a rounding.
 */
export function toMinorUnits(amount: Decimal | string, currency: string): bigint {
  const value = typeof amount === 'string' ? parseDecimal(amount) : amount;
  if (!fitsCurrency(value, currency)) throw new DecimalFormatError(decimalsMessage(currency));
  return roundHalfUp(value, minorUnitExponent(currency)).units;
}

/** ISO minor units as a decimal amount: (1500n, "JPY") -> 1500, (1500n, "USD") -> 15.00. */
export function fromMinorUnits(minor: bigint, currency: string): Decimal {
  return { units: minor, scale: minorUnitExponent(currency) };
}

/**
 * A decimal amount as text with the currency's decimal places: JPY "1500", USD "15.00",
 * KWD "1.23" (the spec's 2). Never rounds: an amount with more decimals than the currency
 * allows (only rows stored before this rule: JPY 1500.50) is shown with all of them, at least 2.
 */
export function formatAmount(value: Decimal, currency: string): string {
  const allowed = decimalsAllowed(currency);
  const needed = significantDecimals(value);
  return toFixed(value, needed <= allowed ? allowed : Math.max(needed, MAX_AMOUNT_DECIMALS));
}

/** ISO minor units as decimal text: (1500n, "JPY") -> "1500", (1500n, "USD") -> "15.00", (1230n, "KWD") -> "1.23". */
export function formatMinorUnits(minor: bigint, currency: string): string {
  return formatAmount(fromMinorUnits(minor, currency), currency);
}

/**
 * Whether an integer count of minor units (a `_cents` field) is an amount the currency
 * allows: any whole number for JPY and USD; for KWD (fils) a multiple of 10 and for CLF a
 * multiple of 100, since amounts keep at most 2 decimal places (Stripe's rule for
 * three-decimal currencies). Undefined when it fits, else the message to answer with.
 */
export function minorUnitsProblem(minor: number | bigint, currency: string, label: string): string | undefined {
  const step = 10n ** BigInt(minorUnitExponent(currency) - decimalsAllowed(currency));
  if (step === 1n || BigInt(minor) % step === 0n) return undefined;
  return `${label} is in minor units of ${currency} (${minorUnitExponent(currency)} decimals) and must be a multiple of ${step}: amounts have at most ${MAX_AMOUNT_DECIMALS} decimal places.`;
}

/**
 * A non-negative decimal's text as PostgreSQL prints a numeric ("12.5000"), with only the
 * decimals it needs but at least `minDecimals`: ("2.0000") -> "2", ("100.5000", 2) -> "100.50",
 * ("5.1", 2) -> "5.10". The same text as `toFixed(parseDecimal(text), max(minDecimals,
 * significantDecimals))`, by string operations alone, for lists that show many stored amounts.
 */
export function trimDecimalText(text: string, minDecimals = 0): string {
  if (!/^\d+(\.\d+)?$/.test(text)) {
    const value = parseDecimal(text);
    return toFixed(value, Math.max(minDecimals, significantDecimals(value)));
  }
  const point = text.indexOf('.');
  if (point < 0) return minDecimals > 0 ? `${text}.${'0'.repeat(minDecimals)}` : text;
  let end = text.length;
  while (end > point + 1 + minDecimals && text.charCodeAt(end - 1) === 48 /* 0 */) end -= 1;
  if (end === point + 1) return text.slice(0, point);
  const decimals = end - point - 1;
  return decimals < minDecimals ? `${text.slice(0, end)}${'0'.repeat(minDecimals - decimals)}` : text.slice(0, end);
}
