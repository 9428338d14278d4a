import { sql, type SelectQueryBuilder } from 'kysely';
import type { PageRequest } from '../platform/pagination/index.js';

/**
 * One page of a list and the number of rows on all pages, queried side by side: `filtered`
 * holds the list's conditions, `ordered` the same query with its columns and stable order.
 */
export async function selectPage<DB, TB extends keyof DB, Row>(
  filtered: SelectQueryBuilder<DB, TB, object>,
  ordered: SelectQueryBuilder<DB, TB, Row>,
  page: PageRequest,
): Promise<{ rows: Row[]; total: number }> {
  const [rows, count] = await Promise.all([
    ordered.limit(page.limit).offset(page.offset).execute(),
    filtered.select(sql<string>`count(*)`.as('total')).executeTakeFirstOrThrow(),
  ]);
  // Kysely cannot resolve the selection's type over generic tables; the statement is ours.
  return { rows, total: Number((count as { total: string }).total) };
}
