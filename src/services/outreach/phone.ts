/**
 * Phone numbers to E.164 (`+` and up to 15 digits) without a phone library: spaces, dots,
 * dashes and brackets are dropped, `00` reads as `+`, and a number without a country code is
 * read as North American (10 digits, or 11 starting with 1) as Twilio's console does for US
 * accounts. A North American number needs 10 digits after the 1 and an area code starting
 * with 2-9.
 */
export function normalizePhone(input: string): string | undefined {
  const text = input.trim();
  if (!/^\+?[0-9 ().\-/]+$/.test(text)) return undefined;
  let digits = text.replace(/[^0-9]/g, '');
  let international = text.startsWith('+');
  if (!international && digits.startsWith('00')) {
    digits = digits.slice(2);
    international = true;
  }
  if (!international) {
    if (digits.length === 10) digits = `1${digits}`;
    else if (!(digits.length === 11 && digits.startsWith('1'))) return undefined;
  }
  if (!/^[1-9][0-9]{6,14}$/.test(digits)) return undefined;
  if (digits.startsWith('1') && !/^1[2-9][0-9]{9}$/.test(digits)) return undefined;
  return `+${digits}`;
}
