/** Which rows of a list to return: `limit` rows after skipping `offset`. */
export interface PageRequest {
  limit: number;
  offset: number;
}

type CountRow = { total: string };

/** Awaits a page and its `count(*)` side by side: the rows and the number of rows on all pages. */
export async function pageWithTotal<Row>(rows: Promise<Row[]>, count: Promise<CountRow[]>): Promise<{ rows: Row[]; total: number }> {
  const [page, counted] = await Promise.all([rows, count]);
  return { rows: page, total: Number(counted[0]?.total ?? 0) };
}
