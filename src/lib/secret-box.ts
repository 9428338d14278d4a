import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM with a fresh 12-byte IV per encryption, stored as `v1.` + base64url of
 * iv | tag | ciphertext. `context` (tenant, mode and row) is authenticated data: a
 * ciphertext copied onto another row does not decrypt.
 */
export function seal(key: Buffer, plaintext: Buffer, context: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
}

/** Decrypts what `seal` produced with the same key and context; throws if anything differs. */
export function open(key: Buffer, sealed: string, context: string): Buffer {
  const [version, body] = sealed.split('.');
  if (version !== VERSION || body === undefined) throw new Error('Unknown secret format.');
  const raw = Buffer.from(body, 'base64url');
  if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('Truncated secret.');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}
