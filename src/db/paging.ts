import { sql, type CompiledQuery, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { PageRequest } from '../platform/pagination/index.js';
import { executeCompiled } from './execute-compiled.js';
import type { PreparedQuery } from './prepared.js';

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
  return pageWithTotal(
    executeCompiled(db, ordered.limit(page.limit).offset(page.offset).compile()),
    // Kysely cannot resolve the selection's type over generic tables; the statement is ours.
    executeCompiled(db, filtered.select(sql<string>`count(*)`.as('total')).compile() as CompiledQuery<CountRow>),
  );
}

/** The same for lists whose page and count statements are prepared (see db/prepared.ts). */
export function selectPreparedPage<Values extends Record<string, unknown>, Row>(
  db: Kysely<any>,
  pageQuery: PreparedQuery<Values, Row>,
  countQuery: PreparedQuery<Values, CountRow>,
  values: Values,
): Promise<{ rows: Row[]; total: number }> {
  return pageWithTotal(pageQuery.execute(db, values), countQuery.execute(db, values));
}

type CountRow = { total: string };

async function pageWithTotal<Row>(rows: Promise<Row[]>, count: Promise<CountRow[]>): Promise<{ rows: Row[]; total: number }> {
  const [page, counted] = await Promise.all([rows, count]);
  return { rows: page, total: Number(counted[0]?.total ?? 0) };
}
