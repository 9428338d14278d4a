import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, freePort, runFailingStart } from './server-process.js';

/**
 * A start that cannot succeed ends with one line on stderr saying what to fix, exit status 1,
 * and no stack trace; the embedded database's lock is released on the way out.
 */

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-start-failures-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
beforeAll(() => buildServer(), 60_000);

const embedded = { DATA_DIR: dataDir, DATABASE_URL: undefined, REDIS_URL: undefined, ADMIN_TOKEN: undefined };

function expectOneErrorLine(stderr: string): string {
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  expect(stderr).not.toMatch(/^\s+at /m);
  return lines[0]!;
}

describe('start-up failures', () => {
  it('names the port and PORT when the port is in use', async () => {
    const port = await freePort();
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      const run = await runFailingStart({ ...embedded, PORT: String(port) });
      expect(run.code).toBe(1);
      const line = expectOneErrorLine(run.stderr);
      expect(line).toContain(`port ${port} is already in use`);
      expect(line).toContain('PORT');
      expect(fs.existsSync(path.join(dataDir, 'embedded-db.lock'))).toBe(false);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  }, 120_000);

  it('names the database URL without its password when PostgreSQL cannot be reached', async () => {
    const run = await runFailingStart({
      DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:1/x',
      SECRETS_KEY: Buffer.alloc(32, 3).toString('base64'),
      REDIS_URL: undefined,
    });
    expect(run.code).toBe(1);
    const line = expectOneErrorLine(run.stderr);
    expect(line).toBe('error: cannot reach the database at postgres://postgres@127.0.0.1:1/x (password hidden): connect ECONNREFUSED 127.0.0.1:1');
    expect(run.stdout + run.stderr).not.toContain('secret');
  }, 60_000);

  it('names the Redis URL without its password when Redis cannot be reached', async () => {
    const run = await runFailingStart({ ...embedded, REDIS_URL: 'redis://:pw@127.0.0.1:1' });
    expect(run.code).toBe(1);
    const line = expectOneErrorLine(run.stderr);
    expect(line).toBe('error: cannot reach Redis at redis://127.0.0.1:1 (password hidden): connect ECONNREFUSED 127.0.0.1:1');
    expect(run.stdout + run.stderr).not.toContain(':pw@');
    expect(fs.existsSync(path.join(dataDir, 'embedded-db.lock'))).toBe(false);
  }, 120_000);
});
