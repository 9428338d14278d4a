import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Mode } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import { toIso } from '../../lib/timestamps.js';
import { generateApiKey } from '../auth/api-keys.js';
import { isValidScope } from '../auth/scopes.js';
import { AppError, invalidField, notFound } from '../errors/app-error.js';
import * as repository from './repository.js';
import type { ApiKeyRow, TenantSummaryRow } from './repository.js';

export const DEFAULT_RATE_LIMIT_PER_MINUTE = 60;
export const MAX_TENANT_NAME_LENGTH = 200;

export interface Tenant {
  id: string;
  name: string;
  created_at: string;
  /** API keys not revoked (a tenant whose keys are all revoked shows 0). */
  key_count: number;
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
  async function getTenant(id: string): Promise<Tenant> {
    const row = isUuid(id) ? await repository.findTenantSummary(db, id) : undefined;
    if (!row) throw notFound('Tenant');
    return presentTenant(row);
  }

  return {
    async createTenant(name: string): Promise<Tenant> {
      const tenant = await repository.insertTenant(db, { id: newId(), name: tenantName(name), created_at: clock.now() });
      return presentTenant({ ...tenant, key_count: 0 });
    },

    /** Newest first, each with the count of its active keys. */
    async listTenants(page: { limit: number; offset: number }): Promise<{ rows: Tenant[]; total: number }> {
      const { rows, total } = await repository.listTenantSummaries(db, page);
      return { rows: rows.map(presentTenant), total };
    },

    getTenant,

    async renameTenant(id: string, name: string): Promise<Tenant> {
      const cleanName = tenantName(name);
      if (!isUuid(id) || !(await repository.renameTenant(db, id, cleanName))) throw notFound('Tenant');
      return getTenant(id);
    },

    /**
     * The tenant an operator means: a UUID is an id, anything else an exact name (trimmed).
     * Names are not unique; when several tenants share it the error lists their ids.
     */
    async findTenant(idOrName: string): Promise<Tenant> {
      const wanted = idOrName.trim();
      if (isUuid(wanted)) return getTenant(wanted);
      const matches = await repository.findTenantSummariesByName(db, wanted);
      if (matches.length === 0) throw new AppError('not_found', `Tenant not found: no tenant has the id or name "${wanted}".`);
      if (matches.length > 1) {
        throw new AppError(
          'conflict',
          `${matches.length} tenants are named "${wanted}"; pass one of their ids instead: ${matches.map((tenant) => tenant.id).join(', ')}.`,
          matches.map((tenant) => ({ path: 'tenant', code: 'ambiguous', message: `Tenant ${tenant.id}, created ${toIso(tenant.created_at)}.`, tenant_id: tenant.id })),
        );
      }
      return presentTenant(matches[0]!);
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

/**
 * Trimmed, 1-200 characters (code points, as the schema's maxLength counts them), one line without
 * control characters: the name shown in lists, on hosted pages and in TOTP apps.
 */
function tenantName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw invalidField('name', 'required', 'name must not be blank.');
  if ([...trimmed].length > MAX_TENANT_NAME_LENGTH) throw invalidField('name', 'invalid_length', `name must be at most ${MAX_TENANT_NAME_LENGTH} characters.`);
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw invalidField('name', 'invalid_characters', 'name must be one line without control characters.');
  return trimmed;
}

function presentTenant(row: TenantSummaryRow): Tenant {
  return { ...row, created_at: toIso(row.created_at) };
}

function presentApiKey(row: ApiKeyRow): ApiKey {
  return { ...row, created_at: toIso(row.created_at), revoked_at: toIso(row.revoked_at) };
}
