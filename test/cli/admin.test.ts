import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger, createRuntime } from '../../src/runtime.js';
import { call } from '../harness.js';

/**
 * Runs the operator CLI as operators do: a separate process on the embedded database in a
 * temporary DATA_DIR. Each spawn costs a second or two (the first also creates the
 * database), so the scenarios share one data folder and keep the number of runs small.
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TIMEOUT_MS = 60_000;

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(dataDir: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
  // The suite may run against PostgreSQL; the CLI test always uses its own embedded database.
  delete env.DATABASE_URL;
  Object.assign(env, extraEnv);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], { cwd: REPO_ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface TenantJson {
  id: string;
  name: string;
  created_at: string;
  key_count: number;
}

interface ErrorJson {
  error: { code: string; message: string; details?: { tenant_id?: string }[] };
}

/** The one line a --json run writes to stderr on failure. */
function errorJson(run: CliResult): ErrorJson {
  expect(run.stdout).toBe('');
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  return JSON.parse(run.stderr) as ErrorJson;
}

/** Serves the CLI's embedded database in this process (the CLI has exited) and calls the API with the key. */
async function callApiWith(dataDir: string, key: string): Promise<number> {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', RUN_JOBS: 'false' });
  const runtime = await createRuntime(config, { startJobs: false, logger: createLogger('silent') });
  try {
    return (await call(runtime.app, 'GET', '/api/v1/services/crm/contacts', { key })).statusCode;
  } finally {
    await runtime.close();
  }
}

interface ApiKeyJson {
  id: string;
  key_prefix: string;
  mode: string;
  revoked_at: string | null;
}

const SECRET_PATTERN = /sk_test_[0-9A-Za-z]{32}/;

describe('admin CLI', () => {
  const tempDirs: string[] = [];
  let dataDir = '';

  const newTempDir = (): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-cli-'));
    tempDirs.push(dir);
    return dir;
  };

  beforeAll(() => {
    dataDir = newTempDir();
  });

  afterAll(() => {
    for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  // The lifecycle steps run in order (vitest runs a file's tests sequentially) and share
  // the tenant, key and secret. The first run also creates the embedded database, which
  // takes several seconds, much longer on a loaded machine: it gets a larger budget.
  const created = { tenantId: '', keyId: '', secret: '' };

  it(
    'create-tenant prints the new tenant (on a fresh database)',
    async () => {
      const run = await runCli(dataDir, ['create-tenant', '--name', 'Acme Ltd']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/name:\s+Acme Ltd/);
      expect(run.stdout).toMatch(/created_at:\s+\d{4}-\d\d-\d\dT/);
      created.tenantId = /id:\s+([0-9a-f-]{36})/.exec(run.stdout)?.[1] ?? '';
      expect(created.tenantId).not.toBe('');
    },
    2 * TIMEOUT_MS,
  );

  it(
    'create-key prints the key and its secret, shown only once',
    async () => {
      const run = await runCli(dataDir, [
        'create-key',
        '--tenant',
        created.tenantId,
        '--mode',
        'test',
        '--scopes',
        'service.crm.view,service.crm.manage',
        '--rate-limit',
        '120',
        '--name',
        'ci',
      ]);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/shown only once/i);
      expect(run.stdout).toMatch(/rate_limit:\s+120\/min/);
      created.secret = SECRET_PATTERN.exec(run.stdout)?.[0] ?? '';
      expect(created.secret).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
      created.keyId = /id:\s+([0-9a-f-]{36})/.exec(run.stdout)?.[1] ?? '';
      expect(created.keyId).not.toBe('');
    },
    TIMEOUT_MS,
  );

  it(
    'refuses a bad mode with exit status 2 before touching the database',
    async () => {
      const run = await runCli(dataDir, ['create-key', '--tenant', created.tenantId, '--mode', 'prod', '--scopes', '*']);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/--mode must be "test" or "live"/);
      expect(run.stdout).toBe('');
      // That nothing was created is checked by the total of the --json listing below.
    },
    TIMEOUT_MS,
  );

  it(
    'list-keys shows the key prefix but never the secret',
    async () => {
      const run = await runCli(dataDir, ['list-keys', '--tenant', created.tenantId]);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(created.keyId);
      expect(run.stdout).toContain(created.secret.slice(0, 12));
      expect(run.stdout).toContain('service.crm.view,service.crm.manage');
      expect(run.stdout).not.toContain(created.secret);
      expect(run.stdout).not.toMatch(SECRET_PATTERN);
    },
    TIMEOUT_MS,
  );

  it(
    'revoke-key prints the revoked key',
    async () => {
      const run = await runCli(dataDir, ['revoke-key', created.keyId]);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(created.keyId);
      expect(run.stdout).toMatch(/revoked_at:\s+\d{4}-\d\d-\d\dT/);
    },
    TIMEOUT_MS,
  );

  it(
    'list-keys --json parses and shows the key revoked, and only that key',
    async () => {
      const run = await runCli(dataDir, ['--json', 'list-keys', '--tenant', created.tenantId]);
      expect(run.code).toBe(0);
      const page = JSON.parse(run.stdout) as { data: ApiKeyJson[]; meta: { total: number } };
      expect(page.meta.total).toBe(1);
      expect(page.data).toHaveLength(1);
      expect(page.data[0]).toMatchObject({ id: created.keyId, mode: 'test', key_prefix: created.secret.slice(0, 12) });
      expect(page.data[0]!.revoked_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(run.stdout).not.toContain(created.secret);
    },
    TIMEOUT_MS,
  );

  // The check: an operator who lost every key finds the tenant and makes a new key.
  it(
    'list-tenants finds a tenant whose every key is revoked, showing 0 keys',
    async () => {
      const run = await runCli(dataDir, ['list-tenants']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^ID\s+NAME\s+CREATED_AT\s+KEYS$/m);
      expect(run.stdout).toMatch(new RegExp(`^${created.tenantId}\\s+Acme Ltd\\s+\\d{4}-\\d\\d-\\d\\dT\\S+\\s+0$`, 'm'));
      expect(run.stdout).toContain('Showing 1-1 of 1.');
    },
    TIMEOUT_MS,
  );

  it(
    'create-key takes the tenant by its exact name, and the new key calls the API',
    async () => {
      const run = await runCli(dataDir, ['--json', 'create-key', '--tenant', 'Acme Ltd', '--mode', 'test', '--scopes', 'service.crm.view']);
      expect(run.code).toBe(0);
      const { key, secret } = JSON.parse(run.stdout) as { key: ApiKeyJson & { tenant_id: string }; secret: string };
      expect(key.tenant_id).toBe(created.tenantId);
      expect(await callApiWith(dataDir, secret)).toBe(200);

      const listed = await runCli(dataDir, ['--json', 'list-tenants', '--limit', '1']);
      expect(listed.code).toBe(0);
      const page = JSON.parse(listed.stdout) as { data: TenantJson[]; meta: unknown };
      expect(page).toEqual({
        data: [{ id: created.tenantId, name: 'Acme Ltd', created_at: expect.any(String), key_count: 1 }],
        meta: { limit: 1, offset: 0, total: 1, has_more: false },
      });
    },
    2 * TIMEOUT_MS,
  );

  it(
    'rename-tenant renames by name and by id',
    async () => {
      const byName = await runCli(dataDir, ['rename-tenant', '--tenant', 'Acme Ltd', '--name', '  Acme Group ']);
      expect(byName.code).toBe(0);
      expect(byName.stdout).toMatch(/^Renamed tenant$/m);
      expect(byName.stdout).toMatch(/name:\s+Acme Group$/m);

      const byId = await runCli(dataDir, ['--json', 'rename-tenant', '--tenant', created.tenantId, '--name', 'Acme Group Ltd']);
      expect(byId.code).toBe(0);
      expect(JSON.parse(byId.stdout)).toMatchObject({ id: created.tenantId, name: 'Acme Group Ltd', key_count: 1 });
    },
    TIMEOUT_MS,
  );

  it(
    'refuses a name several tenants share, listing their ids (JSON on stderr)',
    async () => {
      const twins: string[] = [];
      for (let index = 0; index < 2; index += 1) {
        const run = await runCli(dataDir, ['--json', 'create-tenant', '--name', 'Twin']);
        expect(run.code).toBe(0);
        twins.push((JSON.parse(run.stdout) as TenantJson).id);
      }
      const run = await runCli(dataDir, ['--json', 'list-keys', '--tenant', 'Twin']);
      expect(run.code).toBe(1);
      const { error } = errorJson(run);
      expect(error.code).toBe('conflict');
      for (const id of twins) expect(error.message).toContain(id);
      expect(error.details?.map((detail) => detail.tenant_id).sort()).toEqual([...twins].sort());
    },
    2 * TIMEOUT_MS,
  );

  it(
    'with --json, reports an unknown tenant and bad usage as JSON on stderr with exit statuses 1 and 2',
    async () => {
      const unknown = await runCli(dataDir, ['--json', 'create-key', '--tenant', 'Nobody', '--mode', 'test', '--scopes', '*']);
      expect(unknown.code).toBe(1);
      expect(errorJson(unknown).error).toEqual({ code: 'not_found', message: 'Tenant not found: no tenant has the id or name "Nobody".' });

      const usage = await runCli(dataDir, ['list-tenants', '--limit', '0', '--json']);
      expect(usage.code).toBe(2);
      expect(errorJson(usage).error).toEqual({ code: 'invalid_usage', message: '--limit must be an integer from 1 to 200; got "0".' });
    },
    TIMEOUT_MS,
  );

  it(
    'names an unreachable database without its password, as text and as JSON',
    async () => {
      const env = { DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:1/x' };
      const text = await runCli(dataDir, ['list-tenants'], env);
      expect(text.code).toBe(1);
      expect(text.stderr).toBe('error: cannot reach the database at postgres://postgres@127.0.0.1:1/x (password hidden): connect ECONNREFUSED 127.0.0.1:1\n');

      const json = await runCli(dataDir, ['--json', 'list-tenants'], env);
      expect(json.code).toBe(1);
      const { error } = errorJson(json);
      expect(error.code).toBe('database_unreachable');
      expect(error.message).toContain('postgres://postgres@127.0.0.1:1/x');
      expect(json.stderr).not.toContain('secret');
    },
    TIMEOUT_MS,
  );

  it(
    'reports an unknown tenant as an error with exit status 1',
    async () => {
      const run = await runCli(dataDir, ['create-key', '--tenant', '00000000-0000-4000-8000-000000000000', '--mode', 'live', '--scopes', '*']);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^error: Tenant not found/);
      expect(run.stdout).toBe('');
    },
    TIMEOUT_MS,
  );

  it(
    'rejects an unknown command with exit status 2 and shows the usage',
    async () => {
      const run = await runCli(dataDir, ['frobnicate']);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('unknown command "frobnicate"');
      expect(run.stderr).toContain('create-tenant');
    },
    TIMEOUT_MS,
  );

  it(
    'prints the usage for --help',
    async () => {
      const run = await runCli(dataDir, ['--help']);
      expect(run.code).toBe(0);
      for (const text of ['create-tenant', 'list-tenants', 'rename-tenant', 'create-key', 'list-keys', 'revoke-key', '--json', 'DATABASE_URL', 'DATA_DIR']) {
        expect(run.stdout).toContain(text);
      }
    },
    TIMEOUT_MS,
  );

  it(
    'refuses an embedded database locked by another live process and points to the HTTP API',
    async () => {
      const lockedDir = newTempDir();
      fs.writeFileSync(path.join(lockedDir, 'embedded-db.lock'), String(process.pid));
      const run = await runCli(lockedDir, ['create-tenant', '--name', 'Blocked']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('in use');
      expect(run.stderr).toContain('/admin/v1');
      expect(run.stdout).toBe('');
      expect(fs.existsSync(path.join(lockedDir, 'pgdata'))).toBe(false);
    },
    TIMEOUT_MS,
  );
});
