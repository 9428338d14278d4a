import type { ColumnType, Generated } from 'kysely';

export type Mode = 'test' | 'live';

export interface TenantsTable {
  id: string;
  name: string;
  created_at: Date;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  name: string | null;
  key_prefix: string;
  key_hash: string;
  scopes: string[];
  rate_limit_per_minute: number;
  created_at: Date;
  revoked_at: Date | null;
}

export interface IdempotencyKeysTable {
  tenant_id: string;
  mode: Mode;
  idempotency_key: string;
  method: string;
  path: string;
  body_hash: string;
  response_status: number;
  response_body: Uint8Array;
  response_content_type: string;
  created_at: Date;
  expires_at: Date;
}

export interface JobsTable {
  id: Generated<string>;
  kind: string;
  tenant_id: string | null;
  mode: Mode | null;
  payload: ColumnType<Record<string, unknown>, string, string>;
  run_at: Date;
  status: Generated<'queued' | 'running' | 'succeeded' | 'failed'>;
  attempts: Generated<number>;
  max_attempts: Generated<number>;
  locked_by: string | null;
  locked_until: Date | null;
  last_error: string | null;
  dedupe_key: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

export interface EventsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  type: string;
  created_at: Date;
  object_json: string;
  dispatched: Generated<boolean>;
}

/** Tables owned by the shared platform layer. Services add their own with `db.withTables<...>()`. */
export interface PlatformTables {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  jobs: JobsTable;
  events: EventsTable;
}
