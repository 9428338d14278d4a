import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../runtime.js';
import { resolveSecretsKey } from './secrets-key.js';

const log = createLogger('silent');

describe('resolveSecretsKey', () => {
  it('uses SECRETS_KEY when set', () => {
    const key = Buffer.alloc(32, 5);
    expect(resolveSecretsKey({ configured: key, backend: 'postgres', dataDir: undefined, log })).toBe(key);
  });

  it('refuses to run PostgreSQL without SECRETS_KEY, since processes must share it', () => {
    expect(() => resolveSecretsKey({ configured: undefined, backend: 'postgres', dataDir: undefined, log })).toThrow(/SECRETS_KEY is required/);
  });

  it('generates a key into DATA_DIR once on the embedded database, owner-readable only', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'secrets-key-'));
    try {
      const first = resolveSecretsKey({ configured: undefined, backend: 'pglite', dataDir, log });
      const again = resolveSecretsKey({ configured: undefined, backend: 'pglite', dataDir, log });
      expect(first).toHaveLength(32);
      expect(again).toEqual(first);
      expect(fs.statSync(path.join(dataDir, 'secrets.key')).mode & 0o777).toBe(0o600);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
