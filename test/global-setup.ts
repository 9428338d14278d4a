import pg from 'pg';
import type { TestProject } from 'vitest/node';

export const TEST_SCHEMA = 'platform_test';

declare module 'vitest' {
  export interface ProvidedContext {
    /** DATABASE_URL narrowed to a schema the suite owns, or undefined on the embedded database. */
    testDatabaseUrl: string | undefined;
  }
}

/**
 * With DATABASE_URL set, the suite runs against that PostgreSQL server inside a schema of
 * its own, dropped and recreated at the start, so it never touches the database's other data.
 */
export default async function setup(project: TestProject): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL?.trim();
  if (!databaseUrl) {
    project.provide('testDatabaseUrl', undefined);
    return;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${TEST_SCHEMA} cascade`);
    await client.query(`create schema ${TEST_SCHEMA}`);
  } finally {
    await client.end();
  }
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${TEST_SCHEMA}`);
  project.provide('testDatabaseUrl', url.toString());
}
