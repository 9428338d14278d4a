import { createHash, randomBytes } from 'node:crypto';
import type { Mode } from '../../db/types.js';

const SECRET_LENGTH = 32;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const API_KEY_PATTERN = /^sk_(test|live)_[0-9A-Za-z]{32}$/;
/** `sk_test_` plus four characters: enough to tell keys apart in a list, useless as a credential. */
const DISPLAY_PREFIX_LENGTH = 12;

export interface GeneratedApiKey {
  secret: string;
  hash: string;
  prefix: string;
}

export function generateApiKey(mode: Mode): GeneratedApiKey {
  const secret = `sk_${mode}_${randomBase62(SECRET_LENGTH)}`;
  return { secret, hash: hashApiKey(secret), prefix: secret.slice(0, DISPLAY_PREFIX_LENGTH) };
}

/**
 * Keys carry 190 bits of randomness, so a plain SHA-256 is the right storage hash
 * (a slow password hash would only add latency); lookups go by hash, never by secret.
 */
export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function looksLikeApiKey(token: string): boolean {
  return API_KEY_PATTERN.test(token);
}

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: drop higher bytes so every character is equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}
