import { sql, type CompiledQuery, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { PageRequest } from '../platform/pagination/index.js';
import { executeCompiled } from './prepared.js';

/**
 * One page of a list and the number of rows on all pages, queried side by side on `db` (the
 * instance the queries were built from): `filtered` holds the list's conditions, `ordered`
 * the same query with its columns and stable order. Both run through `executeCompiled`, so
 * on PostgreSQL they skip Kysely's executor (see runCompiledQueriesDirectly).
 */
export async function selectPage<DB, TB extends keyof DB, Row>(
  db: Kysely<any>,
  filtered: SelectQueryBuilder<DB, TB, object>,
  ordered: SelectQueryBuilder<DB, TB, Row>,
  page: PageRequest,
): Promise<{ rows: Row[]; total: number }> {
  const [rows, count] = await Promise.all([
    executeCompiled(db, ordered.limit(page.limit).offset(page.offset).compile()),
    // Kysely cannot resolve the selection's type over generic tables; the statement is ours.
    executeCompiled(db, filtered.select(sql<string>`count(*)`.as('total')).compile() as CompiledQuery<{ total: string }>),
  ]);
  return { rows: rows as Row[], total: Number(count[0]?.total ?? 0) };
}
