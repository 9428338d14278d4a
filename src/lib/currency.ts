/**
 * ISO 4217 "List One" (the list in force, checked against the February 2026 edition): every
 * active currency code with its minor-unit exponent, the number of decimals of its minor
 * unit (JPY 0: the yen has no minor unit; USD 2: cents; KWD 3: fils; CLF 4). Codes whose
 * minor unit ISO gives as "N.A." (precious metals, SDR, XSU, XUA, the test and "no
 * currency" codes) are left out: an amount in them has no minor unit to count.
 */
const CODES_BY_EXPONENT: Readonly<Record<number, string>> = {
  0: 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF',
  2:
    'AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF ' +
    'CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD ' +
    'GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL ' +
    'MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR ' +
    'PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP ' +
    'TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XAD XCD XCG YER ZAR ZMW ZWG',
  3: 'BHD IQD JOD KWD LYD OMR TND',
  4: 'CLF UYW',
};

const EXPONENTS: ReadonlyMap<string, number> = new Map(
  Object.entries(CODES_BY_EXPONENT).flatMap(([exponent, codes]) => codes.split(' ').map((code) => [code, Number(exponent)] as const)),
);

/** Every currency code the API accepts, upper-case. */
export const CURRENCY_CODES: readonly string[] = [...EXPONENTS.keys()].sort();

/** Returns the upper-case ISO 4217 code, or undefined when the code is not an active currency. */
export function normalizeCurrency(code: string): string | undefined {
  const upper = code.trim().toUpperCase();
  return EXPONENTS.has(upper) ? upper : undefined;
}

/**
 * Decimals of the currency's minor unit (JPY 0, USD 2, KWD 3, CLF 4). A code outside the
 * table can only come from a row stored before the table existed (HRK, ANG): it keeps the
 * 2 decimals every amount had then.
 */
export function minorUnitExponent(currency: string): number {
  // Stored currencies are upper-case already: no new string for them.
  return EXPONENTS.get(currency) ?? EXPONENTS.get(currency.toUpperCase()) ?? 2;
}
