import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * TOTP (RFC 6238) over HOTP (RFC 4226): HMAC-SHA-1, 30-second steps, 6 digits, and one
 * step of clock drift accepted either side. Written here on node:crypto so the rules the
 * service depends on (truncation, drift, replay) are in view; tested against the RFC's
 * vectors and, over HTTP, against the independent `otpauth` package.
 */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
export const TOTP_DRIFT_STEPS = 1;
export const TOTP_SECRET_BYTES = 20;

/** RFC 4226 section 5.3: HMAC-SHA-1 of the 8-byte counter, dynamic truncation, modulo 10^digits. */
export function hotp(secret: Buffer, counter: number, digits: number = TOTP_DIGITS): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', secret).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The RFC 6238 time step T = floor(unix seconds / 30). */
export function timeStep(at: Date): number {
  return Math.floor(at.getTime() / 1000 / TOTP_PERIOD_SECONDS);
}

export function totp(secret: Buffer, at: Date, digits: number = TOTP_DIGITS): string {
  return hotp(secret, timeStep(at), digits);
}

/**
 * The time step a code belongs to, within one step of `at` either side, that is later than
 * `lastAcceptedStep` (RFC 6238 section 5.2: a code is accepted once, and never one older
 * than the last accepted); undefined when there is none. Every candidate is compared, in
 * constant time, whatever matched earlier.
 */
export function matchTotp(secret: Buffer, code: string, at: Date, lastAcceptedStep: number | null): number | undefined {
  if (!/^[0-9]{6}$/.test(code)) return undefined;
  const given = Buffer.from(code);
  const current = timeStep(at);
  let matched: number | undefined;
  for (let step = current - TOTP_DRIFT_STEPS; step <= current + TOTP_DRIFT_STEPS; step += 1) {
    const equal = timingSafeEqual(Buffer.from(hotp(secret, step)), given);
    if (equal && matched === undefined && (lastAcceptedStep === null || step > lastAcceptedStep)) matched = step;
  }
  return matched;
}

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32, upper-case, without padding (what authenticator apps expect). */
export function base32Encode(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** `otpauth://` URI of the Key Uri Format understood by authenticator apps. */
export function otpauthUrl(options: { issuer: string; account: string; secret: string }): string {
  const issuer = encodeURIComponent(options.issuer);
  const label = `${issuer}:${encodeURIComponent(options.account)}`;
  const query = `secret=${options.secret}&issuer=${issuer}&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_PERIOD_SECONDS}`;
  return `otpauth://totp/${label}?${query}`;
}
