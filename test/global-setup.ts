import pg from 'pg';
import type { TestProject } from 'vitest/node';

/** One schema per run, so runs side by side (two developers, two helpers) never collide. */
const TEST_SCHEMA = `platform_test_${process.pid}`;

declare module 'vitest' {
  export interface ProvidedContext {
    /** DATABASE_URL narrowed to a schema the suite owns, or undefined on the embedded database. */
    testDatabaseUrl: string | undefined;
  }
}

/**
 * With DATABASE_URL set, the suite runs against that PostgreSQL server inside a schema of
 * its own, created at the start and dropped at the end, so it never touches other data.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
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

  return async function dropTestSchema() {
    const cleanup = new pg.Client({ connectionString: databaseUrl });
    await cleanup.connect();
    try {
      await cleanup.query(`drop schema if exists ${TEST_SCHEMA} cascade`);
    } finally {
      await cleanup.end();
    }
  };
}
