import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';

/**
 * A Kysely dialect for embedded PGlite.
 *
 * PGlite is one Postgres backend with one session, so "a connection" here is exclusive
 * use of that session: acquiring waits until the previous holder releases it. Without
 * this, a query from one request could land inside another request's open transaction
 * (the published kysely-pglite driver has exactly that problem).
 */
export function pgliteDialect(client: PGlite): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PGliteDriver(client),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}

class PGliteDriver implements Driver {
  readonly #session: ExclusiveSession;

  constructor(client: PGlite) {
    this.#session = new ExclusiveSession(client);
  }

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    return this.#session.acquire();
  }

  async releaseConnection(): Promise<void> {
    this.#session.release();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('BEGIN'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('COMMIT'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('ROLLBACK'));
  }

  async destroy(): Promise<void> {
    // The owner of the PGlite instance closes it.
  }
}

class ExclusiveSession {
  readonly #connection: DatabaseConnection;
  #busy = false;
  readonly #waiting: Array<(connection: DatabaseConnection) => void> = [];

  constructor(client: PGlite) {
    this.#connection = {
      async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
        const result = await client.query<R>(compiled.sql, [...compiled.parameters]);
        return {
          rows: result.rows,
          ...(result.affectedRows !== undefined ? { numAffectedRows: BigInt(result.affectedRows) } : {}),
        };
      },
      streamQuery() {
        throw new Error('Streaming is not supported on the embedded database; page with limit/offset instead.');
      },
    };
  }

  acquire(): Promise<DatabaseConnection> {
    if (!this.#busy) {
      this.#busy = true;
      return Promise.resolve(this.#connection);
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next(this.#connection);
    else this.#busy = false;
  }
}
