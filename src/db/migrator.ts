import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Database, Session } from './database.js';

/** A folder of `NNNN_description.sql` files owned by one part of the platform. */
export interface MigrationSource {
  owner: string;
  directory: URL;
}

export const platformMigrations: MigrationSource = { owner: 'platform', directory: new URL('./migrations/', import.meta.url) };

const MIGRATION_LOCK_ID = 7_240_311;

interface Migration {
  name: string;
  sql: string;
}

/**
 * Applies every migration not yet recorded, each in its own transaction, platform first
 * and then each service in the order given. An advisory lock makes several processes
 * starting at once apply them exactly once. Returns the names applied now.
 */
export async function migrate(database: Database, sources: MigrationSource[]): Promise<string[]> {
  const migrations = sources.flatMap(readMigrations);
  return database.withSession(async (session) => {
    await session.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    try {
      await session.exec(`create table if not exists schema_migrations (
        name text primary key,
        applied_at timestamptz not null default now()
      )`);
      const done = new Set((await session.query<{ name: string }>('select name from schema_migrations')).map((row) => row.name));
      const appliedNow: string[] = [];
      for (const migration of migrations) {
        if (done.has(migration.name)) continue;
        await apply(session, migration);
        appliedNow.push(migration.name);
      }
      return appliedNow;
    } finally {
      await session.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    }
  });
}

function readMigrations(source: MigrationSource): Migration[] {
  const directory = fileURLToPath(source.directory);
  if (!fs.existsSync(directory)) return [];
  return fs
    .readdirSync(directory)
    .filter((file) => /^\d{4}_[a-z0-9_-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ name: `${source.owner}/${file}`, sql: fs.readFileSync(new URL(file, source.directory), 'utf8') }));
}

async function apply(session: Session, migration: Migration): Promise<void> {
  await session.exec('begin');
  try {
    await session.exec(migration.sql);
    await session.query('insert into schema_migrations (name) values ($1)', [migration.name]);
    await session.exec('commit');
  } catch (error) {
    await session.exec('rollback');
    throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`);
  }
}
