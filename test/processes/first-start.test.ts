import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, http, startServerProcess } from './server-process.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-first-start-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

// The quick start, as a user runs it (`npm start`: the build, then the compiled server with the
// start script's heap flags): no DATABASE_URL, data kept in DATA_DIR.
const env = { DATA_DIR: dataDir, DATABASE_URL: undefined, REDIS_URL: undefined, ADMIN_TOKEN: undefined };
beforeAll(() => buildServer(), 60_000);

describe('first start on the embedded database', () => {
  it('prints a working test key once, keeps data across restarts, and stops cleanly on SIGTERM', async () => {
    const first = await startServerProcess(env);
    const printed = first.output().match(/sk_test_[0-9A-Za-z]{32}/g) ?? [];
    expect(new Set(printed).size).toBe(1);
    const key = printed[0]!;
    expect(first.output()).toContain(`curl -H "Authorization: Bearer ${key}" ${first.baseUrl}/api/v1/services/crm/contacts`);
    // Beside the key: the tenant, so an operator who loses the key can find it and make another.
    expect(first.output()).toMatch(/^Tenant: default \(id [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\)$/m);
    expect(first.output()).toContain('npm run admin -- list-tenants');
    // The key is printed for the operator, never inside a JSON log line.
    for (const line of first
      .output()
      .split('\n')
      .filter((text) => text.startsWith('{')))
      expect(line).not.toContain(key);

    const created = await http(first.baseUrl, 'POST', '/api/v1/services/crm/contacts', { key, body: { name: 'Survives restarts' } });
    expect(created.status).toBe(201);
    expect(await first.stop()).toBe(0);
    expect(first.output()).toContain('shutting down');

    const second = await startServerProcess(env);
    try {
      expect(second.output()).not.toMatch(/sk_test_/);
      const list = await http(second.baseUrl, 'GET', '/api/v1/services/crm/contacts', { key });
      expect(list.status).toBe(200);
      expect(list.json().data.map((row: { name: string }) => row.name)).toEqual(['Survives restarts']);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 120_000);

  it('refuses to open an embedded database another live process holds', async () => {
    const running = await startServerProcess(env);
    try {
      await expect(startServerProcess(env)).rejects.toThrow(/in use by another process/);
    } finally {
      await running.stop();
    }
  }, 120_000);
});
