import * as OTPAuth from 'otpauth';
import { describe, expect, it } from 'vitest';
import { hashPassword, isCommonPassword, passwordProblem, SCRYPT_COST, verifyPassword } from './passwords.js';
import { open, seal } from '../../lib/secret-box.js';
import { emailKey, newRecoveryCode, newToken, normalizeRecoveryCode, sha256Hex } from './tokens.js';
import { base32Encode, hotp, matchTotp, otpauthUrl, timeStep, totp } from './totp.js';

// RFC 6238 Appendix B: the SHA-1 rows (seed "12345678901234567890", 8 digits).
const RFC_SEED = Buffer.from('12345678901234567890', 'ascii');
const RFC_SHA1_VECTORS: Array<[number, string]> = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

describe('TOTP (RFC 6238)', () => {
  it('matches the SHA-1 test vectors of RFC 6238 Appendix B with 8 digits', () => {
    for (const [seconds, expected] of RFC_SHA1_VECTORS) {
      expect(totp(RFC_SEED, new Date(seconds * 1000), 8), `T=${seconds}`).toBe(expected);
    }
  });

  it('gives the last 6 digits of the same truncation with 6 digits, as otpauth does', () => {
    const secret = base32Encode(RFC_SEED);
    for (const [seconds, expected] of RFC_SHA1_VECTORS) {
      expect(totp(RFC_SEED, new Date(seconds * 1000))).toBe(expected.slice(2));
      const independent = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
      expect(totp(RFC_SEED, new Date(seconds * 1000))).toBe(independent.generate({ timestamp: seconds * 1000 }));
    }
  });

  it('matches RFC 4226 Appendix D HOTP values', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expected.forEach((code, counter) => expect(hotp(RFC_SEED, counter)).toBe(code));
  });

  it('accepts one step of drift either side, and only steps after the last accepted one', () => {
    const now = new Date(1_700_000_000_000);
    const step = timeStep(now);
    const at = (offset: number) => new Date(now.getTime() + offset * 30_000);
    expect(matchTotp(RFC_SEED, totp(RFC_SEED, at(-1)), now, null)).toBe(step - 1);
    expect(matchTotp(RFC_SEED, totp(RFC_SEED, now), now, null)).toBe(step);
    expect(matchTotp(RFC_SEED, totp(RFC_SEED, at(1)), now, null)).toBe(step + 1);
    expect(matchTotp(RFC_SEED, totp(RFC_SEED, at(-2)), now, null)).toBeUndefined();
    expect(matchTotp(RFC_SEED, totp(RFC_SEED, at(2)), now, null)).toBeUndefined();
    // Replay: the step already accepted, or an earlier one, is refused.
    expect(matchTotp(RFC_SEED, totp(RFC_SEED, now), now, step)).toBeUndefined();
    expect(matchTotp(RFC_SEED, totp(RFC_SEED, at(-1)), now, step - 1)).toBeUndefined();
    expect(matchTotp(RFC_SEED, totp(RFC_SEED, at(1)), now, step)).toBe(step + 1);
    for (const bad of ['', '12345', '1234567', 'abcdef', ' 123456', '１２３４５６']) expect(matchTotp(RFC_SEED, bad, now, null)).toBeUndefined();
  });

  it('encodes base32 as RFC 4648 without padding, readable by otpauth', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Encode(Buffer.from('f'))).toBe('MY');
    const bytes = Buffer.from('0123456789abcdefghij');
    expect(Buffer.from(OTPAuth.Secret.fromBase32(base32Encode(bytes)).bytes)).toEqual(bytes);
  });

  it('builds an otpauth URL that otpauth parses back', () => {
    const url = otpauthUrl({ issuer: 'Acme & Co', account: 'ada@example.com', secret: 'MZXW6YTBOI' });
    const parsed = OTPAuth.URI.parse(url) as OTPAuth.TOTP;
    expect(parsed).toMatchObject({ issuer: 'Acme & Co', label: 'ada@example.com', algorithm: 'SHA1', digits: 6, period: 30 });
    expect(parsed.secret.base32).toBe('MZXW6YTBOI');
  });
});

describe('secret box (AES-256-GCM)', () => {
  const key = Buffer.alloc(32, 1);
  it('round-trips, with a fresh IV each time', () => {
    const a = seal(key, Buffer.from('secret'), 'ctx');
    const b = seal(key, Buffer.from('secret'), 'ctx');
    expect(a).not.toBe(b);
    expect(open(key, a, 'ctx').toString()).toBe('secret');
  });
  it('refuses another key, another context or a changed byte', () => {
    const sealed = seal(key, Buffer.from('secret'), 'ctx');
    expect(() => open(Buffer.alloc(32, 2), sealed, 'ctx')).toThrow();
    expect(() => open(key, sealed, 'other row')).toThrow();
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    raw[raw.length - 1]! ^= 1;
    expect(() => open(key, `v1.${raw.toString('base64url')}`, 'ctx')).toThrow();
  });
});

describe('tokens and recovery codes', () => {
  it('issues prefixed 256-bit tokens stored as SHA-256', () => {
    const { token, hash } = newToken('session');
    expect(token).toMatch(/^cas_[A-Za-z0-9_-]{43}$/);
    expect(hash).toBe(sha256Hex(token));
    expect(newToken('challenge').token).toMatch(/^cach_/);
    expect(newToken('verification').token).toMatch(/^cav_/);
  });
  it('makes recovery codes of 19 characters and accepts them in any case, trimmed', () => {
    const codes = new Set(Array.from({ length: 200 }, newRecoveryCode));
    expect(codes.size).toBe(200);
    for (const code of codes) expect(code).toMatch(/^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$/);
    expect(normalizeRecoveryCode('  ABCD-efgh-1234-5678 ')).toBe('abcd-efgh-1234-5678');
    expect(normalizeRecoveryCode('abcd-efgh-1234')).toBeUndefined();
    expect(normalizeRecoveryCode('abcdefgh12345678')).toBeUndefined();
  });
  it('keys the lockout by the lower-cased address', () => {
    expect(emailKey(' Ada@Example.com')).toBe(emailKey('ada@example.com'));
  });
});

describe('passwords', () => {
  it('stores scrypt$N$r$p$salt$hash with a per-password salt, and verifies', async () => {
    const first = await hashPassword('correct horse battery staple');
    const second = await hashPassword('correct horse battery staple');
    expect(first).toMatch(new RegExp(`^scrypt\\$${SCRYPT_COST.N}\\$8\\$1\\$[A-Za-z0-9+/=]{24}\\$[A-Za-z0-9+/=]{44}$`));
    expect(first).not.toBe(second);
    expect(await verifyPassword(first, 'correct horse battery staple')).toEqual({ ok: true, needsRehash: false });
    expect((await verifyPassword(first, 'correct horse battery stapl')).ok).toBe(false);
    // NFKC: the same password typed with a compatibility character matches.
    expect((await verifyPassword(await hashPassword('ﬁnal answer 42'), 'final answer 42')).ok).toBe(true);
  });

  it('refuses without a hash, with a damaged one, and flags old parameters for rehashing', async () => {
    expect((await verifyPassword(null, 'anything at all')).ok).toBe(false);
    expect((await verifyPassword('scrypt$1099511627776$8$1$AAAA$BBBB', 'anything at all')).ok).toBe(false);
    expect((await verifyPassword('plain-text', 'plain-text')).ok).toBe(false);
    const { scrypt } = await import('node:crypto');
    const salt = Buffer.alloc(16, 3);
    const old = await new Promise<Buffer>((resolve, reject) => scrypt('old password!', salt, 32, { N: 2 ** 14, r: 8, p: 1 }, (e, k) => (e ? reject(e) : resolve(k))));
    const stored = `scrypt$${2 ** 14}$8$1$${salt.toString('base64')}$${old.toString('base64')}`;
    expect(await verifyPassword(stored, 'old password!')).toEqual({ ok: true, needsRehash: true });
  });

  it('ships a list of common passwords and refuses them, the email and its local part', () => {
    for (const common of ['password', 'Password1', 'QWERTY123', 'iloveyou', '12345678', 'sunshine1', 'letmein!']) expect(isCommonPassword(common), common).toBe(true);
    expect(isCommonPassword('violet tractor harmonica')).toBe(false);
    expect(passwordProblem('password123', 'ada@example.com')?.code).toBe('password_too_common');
    expect(passwordProblem('Ada@Example.com', 'ada@example.com')?.code).toBe('password_matches_email');
    expect(passwordProblem('ADA.LOVELACE', 'ada.lovelace@example.com')?.code).toBe('password_matches_email');
    expect(passwordProblem('short', 'ada@example.com')?.code).toBe('invalid_length');
    expect(passwordProblem('x'.repeat(257), 'ada@example.com')?.code).toBe('invalid_length');
    expect(passwordProblem('  spaces count too  ', 'ada@example.com')).toBeUndefined();
    expect(passwordProblem('😀'.repeat(8), 'ada@example.com')).toBeUndefined();
  });
});
