import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultPoint } from '../../src/platform/fault-injection.js';
import { buildServer, http, startServerProcess, type ServerProcess } from './server-process.js';
import { testDatabaseUrl } from '../database.js';

// The backend of the run: PostgreSQL when the suite has DATABASE_URL, else the embedded
// database in a DATA_DIR that survives the crash.
const databaseUrl = testDatabaseUrl();
const dataDir = databaseUrl ? undefined : fs.mkdtempSync(path.join(os.tmpdir(), 'platform-idempotency-crash-'));
afterAll(() => {
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const ADMIN_TOKEN = 'crash-test-admin-token-0123456789';
const CONTACTS = '/api/v1/services/crm/contacts';
const env = {
  NODE_ENV: 'test',
  ADMIN_TOKEN,
  LOG_LEVEL: 'warn',
  REDIS_URL: undefined,
  ...(databaseUrl ? { DATABASE_URL: databaseUrl, SECRETS_KEY: Buffer.alloc(32, 5).toString('base64') } : { DATABASE_URL: undefined, DATA_DIR: dataDir }),
};

beforeAll(() => buildServer(), 60_000);

/** A fresh tenant's key, made through the operator API. */
async function newKey(server: ServerProcess): Promise<string> {
  const operator = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const tenant = (await http(server.baseUrl, 'POST', '/admin/v1/tenants', { headers: operator, body: { name: 'crash test' } })).json().data;
  const created = await http(server.baseUrl, 'POST', `/admin/v1/tenants/${tenant.id}/api-keys`, {
    headers: operator,
    body: { mode: 'test', scopes: ['*'], rate_limit_per_minute: 1000 },
  });
  return created.json().data.key;
}

/**
 * Sends the request to a server that kills itself (SIGKILL) at `point`, then starts a
 * server without the fault on the same database.
 */
async function crashAt(point: FaultPoint, request: { key: string; headers: Record<string, string>; body: unknown }): Promise<ServerProcess> {
  const crashing = await startServerProcess({ ...env, FAULT_INJECTION: point });
  await expect(http(crashing.baseUrl, 'POST', CONTACTS, request)).rejects.toThrow();
  expect(await crashing.ended()).toEqual({ code: null, signal: 'SIGKILL' });
  return startServerProcess(env);
}

/** The retry a client makes: again while the key is reported in use (PostgreSQL may not have noticed the dead connection yet). */
async function retry(server: ServerProcess, request: { key: string; headers: Record<string, string>; body: unknown }) {
  for (let attempt = 1; ; attempt += 1) {
    const response = await http(server.baseUrl, 'POST', CONTACTS, request);
    if (response.status !== 409 || response.json().error.code !== 'idempotency_key_in_use' || attempt === 20) return response;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe(`a crash while a request with an Idempotency-Key acts (${databaseUrl ? 'PostgreSQL' : 'embedded database'})`, () => {
  let key: string;
  beforeAll(async () => {
    const server = await startServerProcess(env);
    try {
      key = await newKey(server);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('before the commit loses the write and the record together: the retry acts once, the next replays', async () => {
    const request = { key, headers: { 'idempotency-key': 'crash-after-write' }, body: { name: 'Written once' } };
    const restarted = await crashAt('idempotency:after-write', request);
    try {
      const first = await retry(restarted, request);
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await http(restarted.baseUrl, 'POST', CONTACTS, request);
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.text).toBe(first.text);

      const list = (await http(restarted.baseUrl, 'GET', `${CONTACTS}?search=Written%20once`, { key })).json();
      expect(list.meta.total).toBe(1);
      expect(list.data[0].id).toBe(first.json().data.id);
    } finally {
      expect(await restarted.stop()).toBe(0);
    }
  }, 120_000);

  it('after the commit keeps both: the retry replays the original 201 without acting again', async () => {
    const request = { key, headers: { 'idempotency-key': 'crash-after-commit' }, body: { name: 'Committed once' } };
    const restarted = await crashAt('idempotency:after-commit', request);
    try {
      const replayed = await retry(restarted, request);
      expect(replayed.status).toBe(201);
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      expect(replayed.json().data.name).toBe('Committed once');

      const list = (await http(restarted.baseUrl, 'GET', `${CONTACTS}?search=Committed%20once`, { key })).json();
      expect(list.meta.total).toBe(1);
      expect(list.data[0].id).toBe(replayed.json().data.id);
    } finally {
      expect(await restarted.stop()).toBe(0);
    }
  }, 120_000);

  it('refuses to start with FAULT_INJECTION outside NODE_ENV=test', async () => {
    await expect(startServerProcess({ ...env, NODE_ENV: 'production', FAULT_INJECTION: 'idempotency:after-write' })).rejects.toThrow(/FAULT_INJECTION/);
  }, 60_000);
});
