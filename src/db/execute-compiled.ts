import { createQueryId, type CompiledQuery, type Kysely } from 'kysely';
import { currentRequestTransaction } from './request-transaction.js';

/** Runs one statement on any free pooled connection and resolves with its rows. */
export type StatementRunner = (sql: string, parameters: readonly unknown[]) => Promise<unknown[]>;

const directRunners = new WeakMap<object, StatementRunner>();

/**
 * Lets compiled statements on `db` (the pool-wide instance, never a transaction, which is
 * another object) skip Kysely's executor and run on the pool directly: prepared queries and
 * owned-table statements and lists (db/owned.ts) go through `executeCompiled`.
 *
 * Kysely's executor keeps several async frames of its own suspended while a statement waits
 * for a pooled connection and for its result. Under load that wait spans young-generation
 * collections, V8 moves the frames to the old generation, and the rows that later pass
 * through them stay reachable from old objects until the next full collection. GC traces of
 * the list benchmark showed about 28 KB of rows a request promoted and a full collection
 * every half second, with a pool of 10 or of 60 alike; through pg-pool's callback API almost
 * nothing was promoted and server CPU per request fell from 0.8-0.9 ms to 0.5-0.6 ms.
 *
 * Inside a request transaction (`request-transaction.ts`) statements take Kysely's way, which
 * lends them the transaction's connection.
 */
export function runCompiledQueriesDirectly<DB>(db: Kysely<DB>, runner: StatementRunner): void {
  directRunners.set(db, runner);
}

/**
 * Runs a compiled statement (`query` is its Kysely operation node) with `parameters` on `db` (a
 * transaction's connection if `db` is one) and resolves with its rows. Not an async function:
 * on the direct path the runner's own promise is returned, with no frame of ours waiting on it.
 */
export function executeCompiled<Row, DB>(db: Kysely<DB>, compiled: Pick<CompiledQuery<Row>, 'sql' | 'query'>, parameters: readonly unknown[]): Promise<Row[]> {
  const direct = directRunners.get(db);
  if (direct && !currentRequestTransaction()) return direct(compiled.sql, parameters) as Promise<Row[]>;
  return db.executeQuery<Row>({ sql: compiled.sql, query: compiled.query, queryId: createQueryId(), parameters }).then((result) => result.rows);
}
