import type { Db } from '../../db/database.js';
import type { ApiKeysTable, Mode, TenantsTable } from '../../db/types.js';

export type ApiKeyRow = Omit<ApiKeysTable, 'key_hash'>;

const API_KEY_COLUMNS = ['id', 'tenant_id', 'mode', 'name', 'key_prefix', 'scopes', 'rate_limit_per_minute', 'created_at', 'revoked_at'] as const;

export function insertTenant(db: Db, tenant: TenantsTable): Promise<TenantsTable> {
  return db.insertInto('tenants').values(tenant).returning(['id', 'name', 'created_at']).executeTakeFirstOrThrow();
}

export function findTenant(db: Db, id: string): Promise<TenantsTable | undefined> {
  return db.selectFrom('tenants').select(['id', 'name', 'created_at']).where('id', '=', id).executeTakeFirst();
}

export interface TenantSummaryRow extends TenantsTable {
  /** API keys not revoked. */
  key_count: number;
}

/** Tenants with the count of their active keys, for operators looking for one. */
function selectTenantSummaries(db: Db) {
  return db
    .selectFrom('tenants')
    .select(['tenants.id', 'tenants.name', 'tenants.created_at'])
    .select((eb) =>
      eb
        .selectFrom('api_keys')
        .select(eb.fn.countAll<string>().as('count'))
        .whereRef('api_keys.tenant_id', '=', 'tenants.id')
        .where('api_keys.revoked_at', 'is', null)
        .as('key_count'),
    );
}

function toSummary(row: { id: string; name: string; created_at: Date; key_count: string | null }): TenantSummaryRow {
  return { ...row, key_count: Number(row.key_count ?? 0) };
}

export async function listTenantSummaries(db: Db, page: { limit: number; offset: number }): Promise<{ rows: TenantSummaryRow[]; total: number }> {
  const [rows, total] = await Promise.all([
    selectTenantSummaries(db).orderBy('tenants.created_at', 'desc').orderBy('tenants.id', 'desc').limit(page.limit).offset(page.offset).execute(),
    countTenants(db),
  ]);
  return { rows: rows.map(toSummary), total };
}

export async function findTenantSummary(db: Db, id: string): Promise<TenantSummaryRow | undefined> {
  const row = await selectTenantSummaries(db).where('tenants.id', '=', id).executeTakeFirst();
  return row && toSummary(row);
}

/** Every tenant with exactly this name (names are not unique), oldest first. */
export async function findTenantSummariesByName(db: Db, name: string): Promise<TenantSummaryRow[]> {
  const rows = await selectTenantSummaries(db).where('tenants.name', '=', name).orderBy('tenants.created_at').orderBy('tenants.id').execute();
  return rows.map(toSummary);
}

export async function renameTenant(db: Db, id: string, name: string): Promise<boolean> {
  const result = await db.updateTable('tenants').set({ name }).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function countTenants(db: Db): Promise<number> {
  const row = await db
    .selectFrom('tenants')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export function insertApiKey(db: Db, key: ApiKeysTable): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(key).returning(API_KEY_COLUMNS).executeTakeFirstOrThrow();
}

export async function listApiKeys(db: Db, tenantId: string, page: { limit: number; offset: number }) {
  const [rows, total] = await Promise.all([
    db
      .selectFrom('api_keys')
      .select(API_KEY_COLUMNS)
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.count) };
}

/** Marks the key revoked (once); returns the row whether it was revoked now or before. */
export async function revokeApiKey(db: Db, id: string, at: Date): Promise<ApiKeyRow | undefined> {
  await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  return db.selectFrom('api_keys').select(API_KEY_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** What authentication needs to know about a key, found by the hash of its secret. */
export function findApiKeyByHash(db: Db, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').select(API_KEY_COLUMNS).where('key_hash', '=', keyHash).executeTakeFirst();
}

export async function findKeysRevokedSince(db: Db, since: Date): Promise<string[]> {
  const rows = await db.selectFrom('api_keys').select('id').where('revoked_at', '>', since).execute();
  return rows.map((row) => row.id);
}

export type { Mode };
