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
  if (value.scale > scale) return pointAt(roundHalfUp(value, scale).units, scale, '');
  return pointAt(value.units, value.scale, value.scale < scale ? '0'.repeat(scale - value.scale) : '');
}

/** `units x 10^-scale` as text with `zeros` appended to its decimals. */
function pointAt(units: bigint, scale: number, zeros: string): string {
  const negative = units < 0n;
  let digits = (negative ? -units : units).toString();
  if (digits.length <= scale) digits = digits.padStart(scale + 1, '0');
  const sign = negative ? '-' : '';
  if (scale === 0) return zeros === '' ? `${sign}${digits}` : `${sign}${digits}.${zeros}`;
  const cut = digits.length - scale;
  return `${sign}${digits.slice(0, cut)}.${digits.slice(cut)}${zeros}`;
}

export const ZERO: Decimal = { units: 0n, scale: 0 };

/** Money in minor units (cents) as a BigInt, from a major-unit decimal with at most `decimals` places. */
export function toMinorUnits(value: Decimal, decimals = 2): bigint {
  if (significantDecimals(value) > decimals) throw new DecimalFormatError(`At most ${decimals} decimal places are allowed.`);
  return roundHalfUp(value, decimals).units;
}

/** Minor units back to a major-unit string, e.g. 1230n -> "12.30". */
export function formatMinorUnits(minor: bigint, decimals = 2): string {
  return toFixed({ units: minor, scale: decimals }, decimals);
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
