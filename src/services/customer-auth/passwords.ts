import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import fs from 'node:fs';

/**
 * Password hashing: scrypt (RFC 7914) with a 16-byte random salt per password. N = 2^15,
 * r = 8, p = 1 uses 32 MiB and took about 100 ms on the 2-core build machine (measured,
 * 2026-11; docs/decisions.md). The parameters are stored with each hash, so raising them
 * later only needs a new constant: older hashes are upgraded at the next good login.
 */
export const SCRYPT_COST = { N: 2 ** 15, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const KEY_BYTES = 32;
const PREFIX = 'scrypt';

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 256;

interface ParsedHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; allow twice that so Node never refuses the parameters.
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) => {
    scryptCallback(password, salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** NFKC, as NIST SP 800-63B asks, so the same password typed on two keyboards matches. */
export function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}

/** `scrypt$N$r$p$salt$hash` with base64 salt and hash. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(normalizePassword(password), salt, SCRYPT_COST);
  return [PREFIX, SCRYPT_COST.N, SCRYPT_COST.r, SCRYPT_COST.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

function parseHash(stored: string): ParsedHash | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== PREFIX) return undefined;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  // Refuse parameters no hash of ours has: a damaged row must not cost a gigabyte of memory.
  if (!Number.isInteger(N) || N < 2 ** 10 || N > 2 ** 20 || (N & (N - 1)) !== 0) return undefined;
  if (!Number.isInteger(r) || r < 1 || r > 32 || !Number.isInteger(p) || p < 1 || p > 16) return undefined;
  const salt = Buffer.from(parts[4]!, 'base64');
  const hash = Buffer.from(parts[5]!, 'base64');
  if (salt.length < 8 || hash.length !== KEY_BYTES) return undefined;
  return { N, r, p, salt, hash };
}

let dummyHash: Promise<ParsedHash> | undefined;

/** A hash of a random password with the current cost, for accounts that have none. */
function dummy(): Promise<ParsedHash> {
  dummyHash ??= hashPassword(randomBytes(16).toString('base64')).then((stored) => parseHash(stored)!);
  return dummyHash;
}

/** Computes the dummy hash ahead of the first sign-in, so that one is not slower either. */
export function warmUpPasswordHashing(): void {
  void dummy();
}

/**
 * Checks a password against a stored hash in constant time. With no hash (unknown email,
 * an account without a password, a damaged row) it still runs one scrypt of the same cost
 * against a dummy hash, so every refusal takes the same time.
 */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<{ ok: boolean; needsRehash: boolean }> {
  const parsed = stored ? parseHash(stored) : undefined;
  const target = parsed ?? (await dummy());
  const candidate = await derive(normalizePassword(password), target.salt, target);
  const ok = parsed !== undefined && timingSafeEqual(candidate, target.hash);
  const needsRehash = ok && (target.N !== SCRYPT_COST.N || target.r !== SCRYPT_COST.r || target.p !== SCRYPT_COST.p);
  return { ok, needsRehash };
}

let commonPasswords: Set<string> | undefined;

/** The list shipped in common-passwords.txt (one lower-cased password a line; # comments). */
export function isCommonPassword(password: string): boolean {
  commonPasswords ??= new Set(
    fs
      .readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#')),
  );
  return commonPasswords.has(normalizePassword(password).toLowerCase());
}

export interface PasswordProblem {
  code: 'invalid_length' | 'password_too_common' | 'password_matches_email';
  message: string;
}

/**
 * ASVS V2.1 rules: 8 to 256 characters after normalisation (spaces and any printable
 * Unicode allowed, never truncated), not in the common-password list, not the email
 * address or its local part. Returns the first problem, or undefined.
 */
export function passwordProblem(password: string, email: string): PasswordProblem | undefined {
  const normalized = normalizePassword(password);
  const length = [...normalized].length;
  if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH) {
    return { code: 'invalid_length', message: `password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long.` };
  }
  const lowered = normalized.toLowerCase();
  const address = email.toLowerCase();
  const localPart = address.slice(0, address.lastIndexOf('@'));
  if (lowered === address || lowered === localPart) {
    return { code: 'password_matches_email', message: 'password must not be the email address or its local part.' };
  }
  if (isCommonPassword(normalized)) {
    return { code: 'password_too_common', message: 'password is on the list of commonly used passwords; choose another.' };
  }
  return undefined;
}
