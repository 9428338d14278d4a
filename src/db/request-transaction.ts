import { AsyncLocalStorage } from 'node:async_hooks';
import { CompiledQuery, Kysely, type DatabaseConnection, type Dialect, type Driver, type QueryCompiler, type QueryResult, type TransactionSettings } from 'kysely';

/**
 * Request transactions: one database transaction that a piece of work (an HTTP request)
 * runs in as a whole, although the code it calls was written against the pool-wide Kysely
 * instance and opens transactions of its own.
 *
 * While `transaction.run(work)` is in progress, every query `work` makes through a Kysely
 * instance opened with `openKysely` runs on the transaction's connection:
 * - a transaction (`db.transaction().execute(...)`) becomes a savepoint, released on success
 *   and rolled back on error, exactly as the transaction would have been committed or not;
 * - a single statement outside such a transaction runs inside a savepoint of its own, so a
 *   failing statement (a unique violation the caller catches, say) is undone alone and does
 *   not abort the whole transaction, as it would not have affected others in autocommit;
 * - uses of the connection take turns: two transactions started side by side (Promise.all)
 *   run one after the other, as they do on the embedded database's single session.
 * Nothing is durable until the owner commits the request transaction.
 *
 * Code outside `run` (background jobs, timers started elsewhere) is unaffected, and so is
 * work that outlives the transaction: once it is committed or rolled back, its queries go
 * to the pool again.
 */

const current = new AsyncLocalStorage<RequestTransaction>();
let openTransactions = 0;

/**
 * The request transaction the calling code runs in, if one is open. Costs one
 * `getStore()`; while no request transaction is open anywhere, the store is disabled
 * (see `stopPropagatingWhenIdle`), so that is a property read.
 */
export function currentRequestTransaction(): RequestTransaction | undefined {
  const transaction = current.getStore();
  return transaction?.isOpen ? transaction : undefined;
}

const drivers = new WeakMap<object, RequestTransactionDriver>();

/** A Kysely instance whose queries join the current request transaction, if any. */
export function openKysely<Tables>(dialect: Dialect): Kysely<Tables> {
  const driver = new RequestTransactionDriver(dialect.createDriver());
  const db = new Kysely<Tables>({
    dialect: {
      createAdapter: () => dialect.createAdapter(),
      createDriver: () => driver,
      createIntrospector: (introspected) => dialect.createIntrospector(introspected),
      createQueryCompiler: () => dialect.createQueryCompiler(),
    },
  });
  drivers.set(db, driver);
  return db;
}

/** Takes a connection of `db` (waiting for one as any query does) and begins a transaction on it. */
export function beginRequestTransaction<DB>(db: Kysely<DB>): Promise<RequestTransaction> {
  const driver = drivers.get(db);
  if (!driver) throw new Error('Request transactions need a Kysely instance created by openKysely().');
  return driver.beginRequestTransaction();
}

export class RequestTransaction {
  readonly #connection: SharedConnection;
  readonly #end: (commit: boolean) => Promise<void>;
  readonly #turns = new Turns();
  #open = true;

  constructor(connection: DatabaseConnection, end: (commit: boolean) => Promise<void>) {
    this.#connection = new SharedConnection(connection, this);
    this.#end = end;
    openTransactions += 1;
  }

  /** False once commit or rollback has begun. */
  get isOpen(): boolean {
    return this.#open;
  }

  /** Runs `work`, and everything it starts, with the database's queries on this transaction. */
  run<T>(work: () => T): T {
    return current.run(this, work);
  }

  /** Runs one statement of the transaction's owner directly (no savepoint: a failure aborts the transaction). */
  async execute<Row>(query: CompiledQuery<Row>): Promise<QueryResult<Row>> {
    await this.#turns.take();
    try {
      if (!this.#open) throw new Error('The request transaction is already finished.');
      return await this.#connection.raw.executeQuery(query);
    } finally {
      this.#turns.pass();
    }
  }

  /** Commits; refuses if the transaction is already finished (it may have been rolled back). */
  async commit(): Promise<void> {
    if (!this.#open) throw new Error('The request transaction is already finished.');
    return this.#finish(true);
  }

  /** Rolls back; does nothing if the transaction is already finished. */
  rollback(): Promise<void> {
    return this.#finish(false);
  }

  /** The connection for a query of the work in `run`, after the queries before it; undefined once finished. */
  async lend(): Promise<SharedConnection | undefined> {
    if (!this.#open) return undefined;
    await this.#turns.take();
    if (this.#open) return this.#connection;
    this.#turns.pass();
    return undefined;
  }

  giveBack(): void {
    this.#turns.pass();
  }

  async #finish(commit: boolean): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    openTransactions -= 1;
    stopPropagatingWhenIdle();
    // Let a statement still running finish first; later ones go to the pool.
    await this.#turns.take();
    try {
      await this.#end(commit);
    } finally {
      this.#turns.pass();
    }
  }
}

/**
 * While the store is enabled, Node (20) runs a hook for every promise the process creates,
 * about 50 ns each, on every request. Disabled while no request transaction is open, so
 * requests without one pay nothing; the next `run` enables it again. A store left on an
 * old async resource is a finished transaction, which `currentRequestTransaction` ignores.
 */
function stopPropagatingWhenIdle(): void {
  if (openTransactions === 0) current.disable();
}

/** Exclusive use of the transaction's connection, first come first served. */
class Turns {
  #busy = false;
  readonly #waiting: Array<() => void> = [];

  take(): Promise<void> {
    if (!this.#busy) {
      this.#busy = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  pass(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#busy = false;
  }
}

const STATEMENT_SAVEPOINT = CompiledQuery.raw('savepoint request_statement');
const RELEASE_STATEMENT_SAVEPOINT = CompiledQuery.raw('release savepoint request_statement');
const UNDO_STATEMENT = CompiledQuery.raw('rollback to savepoint request_statement');
const TRANSACTION_SAVEPOINT = CompiledQuery.raw('savepoint request_nested_transaction');
const RELEASE_TRANSACTION_SAVEPOINT = CompiledQuery.raw('release savepoint request_nested_transaction');
const UNDO_TRANSACTION = CompiledQuery.raw('rollback to savepoint request_nested_transaction');

/** The request transaction's connection as Kysely sees it when it lends it to a query or a transaction. */
class SharedConnection implements DatabaseConnection {
  /** In a transaction of the work (a savepoint): its statements run as they are. */
  #inNestedTransaction = false;

  constructor(
    readonly raw: DatabaseConnection,
    readonly owner: RequestTransaction,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#inNestedTransaction) return this.raw.executeQuery<R>(query);
    await this.raw.executeQuery(STATEMENT_SAVEPOINT);
    let result: QueryResult<R>;
    try {
      result = await this.raw.executeQuery<R>(query);
    } catch (error) {
      await this.#undoStatement();
      throw error;
    }
    await this.raw.executeQuery(RELEASE_STATEMENT_SAVEPOINT);
    return result;
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    if (this.#inNestedTransaction) {
      yield* this.raw.streamQuery<R>(query, chunkSize);
      return;
    }
    await this.raw.executeQuery(STATEMENT_SAVEPOINT);
    let failed = false;
    try {
      yield* this.raw.streamQuery<R>(query, chunkSize);
    } catch (error) {
      failed = true;
      await this.#undoStatement();
      throw error;
    } finally {
      if (!failed) await this.raw.executeQuery(RELEASE_STATEMENT_SAVEPOINT);
    }
  }

  async beginNestedTransaction(settings: TransactionSettings): Promise<void> {
    if (settings.isolationLevel || settings.accessMode) {
      // A savepoint cannot change them; silently ignoring them would weaken what the caller asked for.
      throw new Error('A transaction with an isolation level or access mode cannot run inside a request transaction.');
    }
    await this.raw.executeQuery(TRANSACTION_SAVEPOINT);
    this.#inNestedTransaction = true;
  }

  async commitNestedTransaction(): Promise<void> {
    this.#inNestedTransaction = false;
    await this.raw.executeQuery(RELEASE_TRANSACTION_SAVEPOINT);
  }

  async rollbackNestedTransaction(): Promise<void> {
    this.#inNestedTransaction = false;
    await this.raw.executeQuery(UNDO_TRANSACTION);
    await this.raw.executeQuery(RELEASE_TRANSACTION_SAVEPOINT);
  }

  /**
   * The caller sees the statement's own error. Should the undo fail too (a lost connection),
   * the transaction stays aborted and every later statement of it fails, so it cannot commit.
   */
  async #undoStatement(): Promise<void> {
    try {
      await this.raw.executeQuery(UNDO_STATEMENT);
      await this.raw.executeQuery(RELEASE_STATEMENT_SAVEPOINT);
    } catch {
      // see above
    }
  }
}

/**
 * Wraps a dialect's driver: a query made inside `RequestTransaction.run` borrows the request
 * transaction's connection instead of acquiring one, and its transactions become savepoints.
 * Everything else goes to the wrapped driver unchanged, after one `getStore()`.
 */
class RequestTransactionDriver implements Driver {
  readonly #inner: Driver;
  #initialized: Promise<void> | undefined;

  constructor(inner: Driver) {
    this.#inner = inner;
  }

  init(): Promise<void> {
    this.#initialized ??= this.#inner.init().catch((error: unknown) => {
      this.#initialized = undefined;
      throw error;
    });
    return this.#initialized;
  }

  async beginRequestTransaction(): Promise<RequestTransaction> {
    await this.init();
    const connection = await this.#inner.acquireConnection();
    try {
      await this.#inner.beginTransaction(connection, {});
    } catch (error) {
      await this.#inner.releaseConnection(connection);
      throw error;
    }
    return new RequestTransaction(connection, async (commit) => {
      try {
        await (commit ? this.#inner.commitTransaction(connection) : this.#inner.rollbackTransaction(connection));
      } finally {
        await this.#inner.releaseConnection(connection);
      }
    });
  }

  // Not async: outside request transactions no promise or async frame is added to the wrapped driver's.
  acquireConnection(): Promise<DatabaseConnection> {
    const transaction = currentRequestTransaction();
    if (!transaction) return this.#inner.acquireConnection();
    return transaction.lend().then((shared) => shared ?? this.#inner.acquireConnection());
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    if (!(connection instanceof SharedConnection)) return this.#inner.releaseConnection(connection);
    connection.owner.giveBack();
    return Promise.resolve();
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (connection instanceof SharedConnection) return connection.beginNestedTransaction(settings);
    return this.#inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof SharedConnection) return connection.commitNestedTransaction();
    return this.#inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof SharedConnection) return connection.rollbackNestedTransaction();
    return this.#inner.rollbackTransaction(connection);
  }

  // Savepoints of a controlled transaction are statements of that transaction either way.
  savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    return this.#savepointCommand('savepoint', connection, name, compileQuery);
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    return this.#savepointCommand('rollbackToSavepoint', connection, name, compileQuery);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    return this.#savepointCommand('releaseSavepoint', connection, name, compileQuery);
  }

  #savepointCommand(
    command: 'savepoint' | 'rollbackToSavepoint' | 'releaseSavepoint',
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    const run = this.#inner[command]?.bind(this.#inner);
    if (!run) throw new Error(`The \`${command}\` method is not supported by this driver`);
    return run(connection, name, compileQuery);
  }

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }
}
