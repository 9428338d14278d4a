import type { PGlite } from '@electric-sql/pglite';
import { CompiledQuery, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type DatabaseConnection, type Dialect, type Driver, type QueryResult } from 'kysely';

/** How long a caller may wait for the embedded session, and hold it; undefined: no limit. */
export interface EmbeddedSessionLimits {
  waitMs: number | undefined;
  holdMs: number | undefined;
}

/** The embedded session stayed busy for longer than a caller may wait (the pool-exhaustion case of PGlite). */
export class EmbeddedSessionBusyError extends Error {
  override readonly name = 'EmbeddedSessionBusyError';
  readonly code = 'EMBEDDED_SESSION_BUSY';
}

/** This holder kept the embedded session too long: its transaction was rolled back and the session given to the next caller. */
export class EmbeddedSessionRevokedError extends Error {
  override readonly name = 'EmbeddedSessionRevokedError';
  readonly code = 'EMBEDDED_SESSION_REVOKED';
}

export interface PGliteDialect extends Dialect {
  /** Exclusive use of the session without the limits (migrations and scripts at start). */
  withExclusiveSession<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * A Kysely dialect for embedded PGlite.
 *
 * PGlite is one Postgres backend with one session, so "a connection" here is exclusive
 * use of that session: acquiring waits until the previous holder releases it. Without
 * this, a query from one request could land inside another request's open transaction
 * (the published kysely-pglite driver has exactly that problem).
 *
 * Nothing waits forever: a caller that cannot have the session within `waitMs` fails with
 * EmbeddedSessionBusyError, and a holder that keeps it past `holdMs` (a transaction left
 * open while its request awaits something else) has its transaction rolled back and its
 * handle revoked, so its later statements fail, and the session goes to the next caller.
 */
export function pgliteDialect(client: PGlite, limits: EmbeddedSessionLimits = { waitMs: undefined, holdMs: undefined }): PGliteDialect {
  const session = new ExclusiveSession(client, limits);
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PGliteDriver(session),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    async withExclusiveSession(work) {
      const connection = await session.acquire({ waitMs: undefined, holdMs: undefined });
      try {
        return await work();
      } finally {
        session.release(connection);
      }
    },
  };
}

class PGliteDriver implements Driver {
  constructor(readonly session: ExclusiveSession) {}

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    return this.session.acquire();
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.session.release(connection);
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

/** One holder's use of the session; revoked when held too long. */
class Lease implements DatabaseConnection {
  revoked = false;
  holdTimer: NodeJS.Timeout | undefined;

  constructor(readonly client: PGlite) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (this.revoked) {
      throw new EmbeddedSessionRevokedError('This request held the embedded database too long; its transaction was rolled back.');
    }
    const result = await this.client.query<R>(compiled.sql, [...compiled.parameters]);
    return {
      rows: result.rows,
      ...(result.affectedRows !== undefined ? { numAffectedRows: BigInt(result.affectedRows) } : {}),
    };
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming is not supported on the embedded database; page with limit/offset instead.');
  }
}

interface Waiter {
  grant(lease: Lease): void;
  holdMs: number | undefined;
}

class ExclusiveSession {
  #holder: Lease | undefined;
  readonly #waiting: Waiter[] = [];

  constructor(
    readonly client: PGlite,
    readonly limits: EmbeddedSessionLimits,
  ) {}

  acquire(limits: EmbeddedSessionLimits = this.limits): Promise<DatabaseConnection> {
    if (!this.#holder) return Promise.resolve(this.#grant(limits.holdMs));
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter: Waiter = {
        holdMs: limits.holdMs,
        grant: (lease) => {
          clearTimeout(timer);
          resolve(lease);
        },
      };
      if (limits.waitMs !== undefined) {
        timer = setTimeout(() => {
          this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
          reject(new EmbeddedSessionBusyError(`The embedded database stayed busy for ${limits.waitMs} ms.`));
        }, limits.waitMs);
      }
      this.#waiting.push(waiter);
    });
  }

  release(connection: DatabaseConnection): void {
    if (connection !== this.#holder) return; // revoked earlier: the session has moved on
    clearTimeout(this.#holder.holdTimer);
    this.#handOver();
  }

  #grant(holdMs: number | undefined): Lease {
    const lease = new Lease(this.client);
    this.#holder = lease;
    if (holdMs !== undefined) lease.holdTimer = setTimeout(() => void this.#revoke(lease), holdMs);
    return lease;
  }

  async #revoke(lease: Lease): Promise<void> {
    if (lease !== this.#holder) return;
    lease.revoked = true;
    try {
      // PGlite runs statements in order, so this comes after any statement the holder had
      // already sent; the holder can send no more. Outside a transaction it is a no-op.
      await this.client.query('ROLLBACK');
    } catch {
      // The session is handed over in any case.
    }
    if (lease === this.#holder) this.#handOver();
  }

  #handOver(): void {
    const next = this.#waiting.shift();
    if (next) next.grant(this.#grant(next.holdMs));
    else this.#holder = undefined;
  }
}
