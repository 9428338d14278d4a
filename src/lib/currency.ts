const ISO_4217_CODES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** Returns the upper-case ISO 4217 code, or undefined when the code is not a known currency. */
export function normalizeCurrency(code: string): string | undefined {
  const upper = code.trim().toUpperCase();
  return /^[A-Z]{3}$/.test(upper) && ISO_4217_CODES.has(upper) ? upper : undefined;
}
