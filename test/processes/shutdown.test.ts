import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, http as call, startServerProcess } from './server-process.js';
import { testDatabaseUrl } from '../database.js';

const databaseUrl = testDatabaseUrl();
const redisUrl = process.env.REDIS_URL;
const ADMIN_TOKEN = 'shutdown-test-admin-token-0123456789';
const CLIENTS = 16;
const GRACE_MS = 1_000;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-shutdown-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

/** The same server twice on the same storage: PostgreSQL when the run has it, else the embedded database in dataDir. */
const env = databaseUrl
  ? { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, SECRETS_KEY: Buffer.alloc(32, 5).toString('base64'), ADMIN_TOKEN, LOG_LEVEL: 'warn' }
  : { DATA_DIR: dataDir, DATABASE_URL: undefined, REDIS_URL: undefined, ADMIN_TOKEN, LOG_LEVEL: 'warn' };
const shutdownEnv = { SHUTDOWN_GRACE_MS: String(GRACE_MS), SHUTDOWN_TIMEOUT_MS: '20000' };

type Outcome =
  | { kind: 'answered'; status: number; id: string | undefined; connection: string | undefined; at: number }
  | { kind: 'refused'; at: number }
  | { kind: 'failed'; code: string; message: string; syscall: string | undefined; at: number };

/** One POST on a keep-alive agent; classifies how it ended. */
function post(agent: http.Agent, baseUrl: string, key: string, name: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ name });
    const request = http.request(
      `${baseUrl}/api/v1/services/crm/contacts`,
      { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          let id: string | undefined;
          try {
            id = (JSON.parse(text) as { data?: { id?: string } }).data?.id;
          } catch {
            id = undefined;
          }
          resolve({ kind: 'answered', status: response.statusCode ?? 0, id, connection: response.headers.connection, at: Date.now() });
        });
        response.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ kind: 'failed', code: error.code ?? 'response error', message: error.message, syscall: error.syscall, at: Date.now() }),
        );
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') resolve({ kind: 'refused', at: Date.now() });
      else resolve({ kind: 'failed', code: error.code ?? 'error', message: error.message, syscall: error.syscall, at: Date.now() });
    });
    request.end(body);
  });
}

beforeAll(() => buildServer(), 60_000);

describe(`SIGTERM under the load of ${CLIENTS} keep-alive writers (${databaseUrl ? 'PostgreSQL' : 'embedded database'})`, () => {
  it('answers every request or refuses it before reading it, exits 0, and keeps every acknowledged write', async () => {
    const server = await startServerProcess({ ...env, ...shutdownEnv });
    const operator = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const tenant = (await call(server.baseUrl, 'POST', '/admin/v1/tenants', { headers: operator, body: { name: 'shutdown under load' } })).json().data;
    const { key } = (
      await call(server.baseUrl, 'POST', `/admin/v1/tenants/${tenant.id}/api-keys`, { headers: operator, body: { mode: 'test', scopes: ['*'], rate_limit_per_minute: 1_000_000 } })
    ).json().data as { key: string };
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));

    const outcomes: Outcome[] = [];
    const byClient: Outcome[][] = Array.from({ length: CLIENTS }, () => []);
    let sigtermAt = Number.POSITIVE_INFINITY;
    const writers = Array.from({ length: CLIENTS }, async (_, client) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let n = 0; ; n += 1) {
          const outcome = await post(agent, server.baseUrl, key, `client ${client} write ${n}`);
          outcomes.push(outcome);
          byClient[client]!.push(outcome);
          // Refused means the server no longer listens; a failure ends this client too (the test then fails).
          if (outcome.kind !== 'answered') return;
          if (Date.now() - sigtermAt > 30_000) throw new Error('the server kept answering long after SIGTERM');
        }
      } finally {
        agent.destroy();
      }
    });

    // Load first, then the signal in the middle of it.
    while (outcomes.filter((outcome) => outcome.kind === 'answered').length < CLIENTS * 5) await new Promise((resolve) => setTimeout(resolve, 20));
    sigtermAt = Date.now();
    server.child.kill('SIGTERM');
    // Not ready from the signal on, while still serving (polled: the signal takes a moment to land under load).
    let readiness: number | string = 'not asked';
    for (const started = Date.now(); readiness !== 503 && Date.now() - started < GRACE_MS;) {
      readiness = await fetch(`${server.baseUrl}/readyz`).then(
        (response) => response.status,
        () => 'unreachable',
      );
      if (readiness !== 503) await new Promise((resolve) => setTimeout(resolve, 25));
    }

    await Promise.all(writers);
    const exitCode = await exited;

    const failures = outcomes.filter((outcome) => outcome.kind === 'failed');
    expect(failures, 'no request may be reset or cut mid-way').toEqual([]);
    const answered = outcomes.filter((outcome): outcome is Extract<Outcome, { kind: 'answered' }> => outcome.kind === 'answered');
    expect(answered.filter((outcome) => outcome.status !== 201)).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.kind === 'refused')).toHaveLength(CLIENTS);
    expect(exitCode).toBe(0);
    expect(readiness).toBe(503);
    // The server kept serving through the grace period...
    expect(answered.filter((outcome) => outcome.at > sigtermAt + GRACE_MS / 2).length).toBeGreaterThan(0);
    // ...and each client's last answer told it to close its connection, so its next request went
    // to a new connection, which was refused.
    for (const outcomesOfClient of byClient) expect(outcomesOfClient.at(-2)).toMatchObject({ kind: 'answered', connection: 'close' });

    // Every acknowledged write is there after a restart on the same storage.
    const acknowledged = new Set(answered.map((outcome) => outcome.id!));
    const restarted = await startServerProcess({ ...env, SHUTDOWN_GRACE_MS: '0' });
    try {
      const stored = new Set<string>();
      for (let offset = 0; ; offset += 200) {
        const page = (await call(restarted.baseUrl, 'GET', `/api/v1/services/crm/contacts?limit=200&offset=${offset}`, { key })).json() as {
          data: Array<{ id: string }>;
          meta: { has_more: boolean };
        };
        for (const contact of page.data) stored.add(contact.id);
        if (!page.meta.has_more) break;
      }
      expect([...acknowledged].filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      expect(await restarted.stop()).toBe(0);
    }
  }, 120_000);
});
