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
  let { units, scale } = value;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  return scale;
}

function rescaleUp(value: Decimal, scale: number): bigint {
  return value.units * 10n ** BigInt(scale - value.scale);
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
  if (value.scale <= scale) return { units: rescaleUp(value, scale), scale };
  const divisor = 10n ** BigInt(value.scale - scale);
  const negative = value.units < 0n;
  const magnitude = negative ? -value.units : value.units;
  let quotient = magnitude / divisor;
  if ((magnitude % divisor) * 2n >= divisor) quotient += 1n;
  return { units: negative ? -quotient : quotient, scale };
}

/** Fixed-point text with exactly `scale` decimals, e.g. `toFixed(x, 2)` -> "12.30". */
export function toFixed(value: Decimal, scale: number): string {
  const rounded = roundHalfUp(value, scale);
  const negative = rounded.units < 0n;
  const digits = (negative ? -rounded.units : rounded.units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale);
  return `${negative ? '-' : ''}${whole}${scale > 0 ? `.${fraction}` : ''}`;
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
