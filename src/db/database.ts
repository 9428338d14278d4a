import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { DatabaseTimeouts } from '../config/index.js';
import { UnreachableError } from '../lib/connection-errors.js';
import { pgliteDialect } from './pglite-dialect.js';
import { runCompiledQueriesDirectly } from './execute-compiled.js';
import { openKysely } from './request-transaction.js';
import { pgTypes } from './timestamptz.js';
import type { PlatformTables } from './types.js';

export type Db = Kysely<PlatformTables>;

/** A service's view of the database: its own tables only, the platform's are not visible. */
export function serviceDb<Tables>(db: Db): Kysely<Tables> {
  return db as unknown as Kysely<Tables>;
}

/** One dedicated database session: scripts (several statements) and single queries. */
export interface Session {
  exec(script: string): Promise<void>;
  query<Row>(statement: string, params?: unknown[]): Promise<Row[]>;
}

export interface Database {
  db: Db;
  backend: 'pglite' | 'postgres';
  /** Hands a callback exclusive use of one session for scripts (migrations, locks). */
  withSession<T>(work: (session: Session) => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** The embedded database's WebAssembly memory, in bytes: it lives in this process and grows with the data. Absent on PostgreSQL. */
  embeddedMemoryBytes?(): number;
}

export interface DatabaseOptions {
  databaseUrl: string | undefined;
  /** Where the embedded database keeps its files; undefined keeps it in memory (tests). */
  dataDir: string | undefined;
  poolSize?: number;
  /** Undefined: no limits (scripts such as the admin CLI). */
  timeouts?: DatabaseTimeouts;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options.poolSize ?? 10, options.timeouts) : openEmbedded(options.dataDir, options.timeouts);
}

/** How long the first connection at start may take before the server or CLI gives up on the database. */
const FIRST_CONNECT_TIMEOUT_MS = 10_000;

async function openPostgres(connectionString: string, poolSize: number, timeouts: DatabaseTimeouts | undefined): Promise<Database> {
  await checkReachable(connectionString);
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    types: pgTypes,
    // Server-side limits of every pooled session, sent at connect (0 keeps the server's setting),
    // and how long a query waits for a free connection before failing (503 to the client).
    ...(timeouts && {
      statement_timeout: timeouts.statementTimeoutMs,
      lock_timeout: timeouts.lockTimeoutMs,
      idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
      connectionTimeoutMillis: timeouts.connectionWaitMs,
    }),
  });
  // An idle client losing its server connection must not crash the process.
  pool.on('error', () => {});
  // Nor a client in use: the server ends a session idle in a transaction past its timeout (or
  // restarts), pg then emits 'error' on the checked-out client, and without a listener that is
  // an uncaught exception. Its next query fails instead, and the pool drops it on release.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = openKysely<PlatformTables>(new PostgresDialect({ pool }));
  runCompiledQueriesDirectly(
    db,
    (statement, parameters) => new Promise((resolve, reject) => pool.query(statement, parameters as unknown[], (error, result) => (error ? reject(error) : resolve(result.rows)))),
  );
  return {
    db,
    backend: 'postgres',
    async withSession(work) {
      const client = await pool.connect();
      try {
        return await work({
          async exec(script) {
            await client.query(script);
          },
          async query<Row>(statement: string, params: unknown[] = []) {
            return (await client.query(statement, params)).rows as Row[];
          },
        });
      } finally {
        client.release();
      }
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

/** Connects once, so an unreachable server fails the start with an UnreachableError rather than inside the first query. */
async function checkReachable(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: FIRST_CONNECT_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    throw new UnreachableError('the database', connectionString, error);
  } finally {
    await client.end().catch(() => {});
  }
}

async function openEmbedded(dataDir: string | undefined, timeouts: DatabaseTimeouts | undefined): Promise<Database> {
  let releaseLock = () => {};
  let pgdata: string | undefined;
  if (dataDir) {
    fs.mkdirSync(dataDir, { recursive: true });
    releaseLock = lockDataDir(dataDir);
    pgdata = path.join(dataDir, 'pgdata');
  }
  const client = pgdata ? new PGlite(pgdata) : await newInMemoryCluster();
  await client.waitReady;
  const dialect = pgliteDialect(client, { waitMs: timeouts?.connectionWaitMs, holdMs: timeouts?.embeddedHoldTimeoutMs });
  const db = openKysely<PlatformTables>(dialect);
  return {
    db,
    backend: 'pglite',
    embeddedMemoryBytes: () => (client as unknown as { mod?: { HEAPU8?: Uint8Array } }).mod?.HEAPU8?.length ?? 0,
    async withSession(work) {
      // Borrow the one session, without the request limits, so no request query can interleave.
      return dialect.withExclusiveSession(() =>
        work({
          async exec(script) {
            await client.exec(script);
          },
          async query<Row>(statement: string, params: unknown[] = []) {
            return (await client.query<Row>(statement, params)).rows;
          },
        }),
      );
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
      await client.close();
      releaseLock();
    },
  };
}

/**
 * An in-memory database (tests open one per file) starts from an image of a freshly
 * initialised cluster taken once per process: loading it takes about half the time of
 * initialising a cluster again.
 */
let freshClusterImage: Promise<Blob> | undefined;

async function newInMemoryCluster(): Promise<PGlite> {
  if (!freshClusterImage) {
    const first = new PGlite();
    freshClusterImage = first.waitReady.then(() => first.dumpDataDir('none'));
    freshClusterImage.catch(() => (freshClusterImage = undefined));
    await freshClusterImage.catch(() => {});
    return first;
  }
  return new PGlite({ loadDataDir: await freshClusterImage });
}

/**
 * The embedded database is one process's files: a second process opening them would
 * corrupt them. A lock file with the owner's pid keeps a second server or the admin CLI out.
 */
function lockDataDir(dataDir: string): () => void {
  const lockPath = path.join(dataDir, 'embedded-db.lock');
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(fs.readFileSync(lockPath, 'utf8'));
      if (Number.isInteger(owner) && owner !== process.pid && isProcessAlive(owner)) {
        throw new EmbeddedDatabaseBusyError(dataDir, owner);
      }
      fs.rmSync(lockPath, { force: true }); // left behind by a process that died
    }
  }
  throw new EmbeddedDatabaseBusyError(dataDir, undefined);
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class EmbeddedDatabaseBusyError extends Error {
  constructor(dataDir: string, ownerPid: number | undefined) {
    super(
      `The embedded database in ${dataDir} is in use by another process${ownerPid ? ` (pid ${ownerPid})` : ''}. ` +
        'Stop that process first, or run against PostgreSQL with DATABASE_URL so several processes can share it.',
    );
  }
}
