import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';

const KEY_FILE = 'secrets.key';

/**
 * The key that encrypts secrets at rest. From SECRETS_KEY when set; on the embedded
 * database without it, generated once into DATA_DIR (readable by the owner only), so the
 * quick start needs no setup, with a warning that production should set SECRETS_KEY.
 */
export function resolveSecretsKey(options: { configured: Buffer | undefined; backend: 'pglite' | 'postgres'; dataDir: string | undefined; log: FastifyBaseLogger }): Buffer {
  if (options.configured) return options.configured;
  if (options.backend === 'postgres') {
    throw new Error('SECRETS_KEY is required with DATABASE_URL, and every process must share it: 32 random bytes as base64 or hex (e.g. `openssl rand -base64 32`).');
  }
  if (!options.dataDir) return randomBytes(32); // in-memory database: the data dies with the process anyway
  const file = path.join(options.dataDir, KEY_FILE);
  if (fs.existsSync(file)) {
    const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key; restore it or set SECRETS_KEY.`);
    return key;
  }
  const key = randomBytes(32);
  fs.mkdirSync(options.dataDir, { recursive: true });
  fs.writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  options.log.warn({ file }, 'SECRETS_KEY is not set: generated a key for the embedded database; back it up with DATA_DIR, and set SECRETS_KEY in production');
  return key;
}
