/** Constants and messages shared by the load generator (run.ts) and the target servers (servers.ts). */

export const TARGETS = ['full', 'baseline', 'hello'] as const;
export type Target = (typeof TARGETS)[number];

/** Every target serves this path, so the load generator sends identical requests to each. */
export const LIST_PATH = '/api/v1/services/crm/contacts';
export const LIST_QUERY = '?limit=50';

/** The app's database pool size (src/db/database.ts); the baseline uses the same. */
export const POOL_SIZE = 10;

/** Where the bench keeps its tables, so it never touches other data. */
export const BENCH_SCHEMA = 'platform_bench';

// The two statements the app's list endpoint runs (Kysely binds limit and offset as well).
export const LIST_SQL =
  'select id, name, email, phone, company_id, created_at, updated_at from crm_contacts ' +
  'where tenant_id = $1 and mode = $2 order by created_at desc, id desc limit $3 offset $4';
export const COUNT_SQL = 'select count(*) as total from crm_contacts where tenant_id = $1 and mode = $2';

export type ChildMessage = { type: 'ready'; port: number } | { type: 'error'; message: string };
export type ParentMessage = { type: 'stop' };
