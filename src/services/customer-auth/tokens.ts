import { createHash, randomBytes, randomInt } from 'node:crypto';

/** Recognisable prefixes; none starts with `sk_`, so no token can pass for an API key. */
export const TOKEN_PREFIXES = { session: 'cas_', challenge: 'cach_', verification: 'cav_' } as const;
export type TokenKind = keyof typeof TOKEN_PREFIXES;

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * A bearer secret: prefix + 32 random bytes in base64url (256 bits). Only its SHA-256 is
 * stored, and lookups go by that hash; a fast hash suffices for a secret this long.
 */
export function newToken(kind: TokenKind): { token: string; hash: string } {
  const token = `${TOKEN_PREFIXES[kind]}${randomBytes(32).toString('base64url')}`;
  return { token, hash: sha256Hex(token) };
}

const RECOVERY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const RECOVERY_PATTERN = /^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$/;
export const RECOVERY_CODE_COUNT = 10;

/** `xxxx-xxxx-xxxx-xxxx`: 16 characters of a-z0-9 (about 82 bits), 19 with the dashes. */
export function newRecoveryCode(): string {
  const chars = Array.from({ length: 16 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]);
  return [0, 4, 8, 12].map((start) => chars.slice(start, start + 4).join('')).join('-');
}

/** The stored form of a typed recovery code: trimmed, lower-cased; undefined if not one. */
export function normalizeRecoveryCode(input: string): string | undefined {
  const code = input.trim().toLowerCase();
  return RECOVERY_PATTERN.test(code) ? code : undefined;
}

/** What the lockout counts by: the lower-cased address, hashed (strangers' typos are not kept). */
export function emailKey(email: string): string {
  return sha256Hex(email.trim().toLowerCase());
}
