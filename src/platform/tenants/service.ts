import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Mode } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import { toIso } from '../../lib/timestamps.js';
import { generateApiKey } from '../auth/api-keys.js';
import { isValidScope } from '../auth/scopes.js';
import { AppError, notFound } from '../errors/app-error.js';
import * as repository from './repository.js';
import type { ApiKeyRow } from './repository.js';

export const DEFAULT_RATE_LIMIT_PER_MINUTE = 60;

export interface Tenant {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKey {
  id: string;
  tenant_id: string;
  mode: Mode;
  name: string | null;
  key_prefix: string;
  scopes: string[];
  rate_limit_per_minute: number;
  created_at: string;
  revoked_at: string | null;
}

export interface CreateApiKeyInput {
  mode: Mode;
  scopes: string[];
  rate_limit_per_minute?: number;
  name?: string | null;
}

export interface TenantAdminDeps {
  db: Db;
  clock: Clock;
}

/** Operator actions on tenants and their keys, shared by the admin API, the CLI and first start. */
export function createTenantAdmin({ db, clock }: TenantAdminDeps) {
  return {
    async createTenant(name: string): Promise<Tenant> {
      const tenant = await repository.insertTenant(db, { id: newId(), name: name.trim(), created_at: clock.now() });
      return { ...tenant, created_at: toIso(tenant.created_at) };
    },

    /** Returns the key record and its secret; the secret is never available again. */
    async createApiKey(tenantId: string, input: CreateApiKeyInput): Promise<{ key: ApiKey; secret: string }> {
      if (!isUuid(tenantId) || !(await repository.findTenant(db, tenantId))) throw notFound('Tenant');
      const badScopes = input.scopes.filter((scope) => !isValidScope(scope));
      if (badScopes.length > 0) {
        throw new AppError(
          'validation_failed',
          'Unknown scopes; use *, service.<service>.* or service.<service>.<area>.',
          badScopes.map((scope) => ({ path: `scopes[${input.scopes.indexOf(scope)}]`, code: 'invalid_value', message: `"${scope}" is not a valid scope.` })),
        );
      }
      const generated = generateApiKey(input.mode);
      const row = await repository.insertApiKey(db, {
        id: newId(),
        tenant_id: tenantId,
        mode: input.mode,
        name: input.name ?? null,
        key_prefix: generated.prefix,
        key_hash: generated.hash,
        scopes: [...new Set(input.scopes)],
        rate_limit_per_minute: input.rate_limit_per_minute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
        created_at: clock.now(),
        revoked_at: null,
      });
      return { key: presentApiKey(row), secret: generated.secret };
    },

    async listApiKeys(tenantId: string, page: { limit: number; offset: number }) {
      if (!isUuid(tenantId) || !(await repository.findTenant(db, tenantId))) throw notFound('Tenant');
      const { rows, total } = await repository.listApiKeys(db, tenantId, page);
      return { rows: rows.map(presentApiKey), total };
    },

    async revokeApiKey(keyId: string): Promise<ApiKey> {
      const row = isUuid(keyId) ? await repository.revokeApiKey(db, keyId, clock.now()) : undefined;
      if (!row) throw notFound('API key');
      return presentApiKey(row);
    },
  };
}

export type TenantAdmin = ReturnType<typeof createTenantAdmin>;

const BOOTSTRAP_LOCK_ID = 7_240_312;

/**
 * On an empty database, creates the `default` tenant and a test key with every scope.
 * Returns the secret exactly once; later starts (and racing processes) get undefined.
 */
export async function bootstrapDefaultTenant({ db, clock }: TenantAdminDeps): Promise<{ tenant: Tenant; secret: string } | undefined> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK_ID})`.execute(trx);
    if ((await repository.countTenants(trx)) > 0) return undefined;
    const admin = createTenantAdmin({ db: trx, clock });
    const tenant = await admin.createTenant('default');
    const { secret } = await admin.createApiKey(tenant.id, { mode: 'test', scopes: ['*'], name: 'first key' });
    return { tenant, secret };
  });
}

function presentApiKey(row: ApiKeyRow): ApiKey {
  return { ...row, created_at: toIso(row.created_at), revoked_at: toIso(row.revoked_at) };
}
