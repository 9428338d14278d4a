import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startContractProxy } from './contract-proxy.js';

/** One schema per run, so runs side by side (two developers, two helpers) never collide. */
const TEST_SCHEMA = `platform_test_${process.pid}`;

declare module 'vitest' {
  export interface ProvidedContext {
    /** DATABASE_URL narrowed to a schema the suite owns, or undefined on the embedded database. */
    testDatabaseUrl: string | undefined;
    /** Prism's validation proxy for the run (CONTRACT_PROXY=prism), or undefined. */
    contractProxy: { url: string; reportDir: string } | undefined;
  }
}

/**
 * With DATABASE_URL set, the suite runs against that PostgreSQL server inside a schema of
 * its own, created at the start and dropped at the end, so it never touches other data.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stopProxy = await provideContractProxy(project);
  const dropSchema = await provideDatabase(project);
  return async function teardown() {
    await dropSchema?.();
    await stopProxy?.();
  };
}

async function provideContractProxy(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (process.env.CONTRACT_PROXY !== 'prism') {
    project.provide('contractProxy', undefined);
    return undefined;
  }
  const proxy = await startContractProxy();
  project.provide('contractProxy', { url: proxy.url, reportDir: proxy.reportDir });
  return async () => {
    const summary = await proxy.stop();
    console.log(
      `\nPrism validation proxy: ${summary.requests} requests, ${summary.responseViolations} response violations, ` +
        `${summary.acceptedRequestViolations} violations on accepted requests, ${summary.refusedRequestViolations} on refused requests ` +
        `(tests that send bad input on purpose), ${summary.unresolvedAnswered} undocumented routes answered`,
    );
    for (const example of summary.examples) console.log(`  ${example}`);
    if (summary.responseViolations + summary.acceptedRequestViolations + summary.unresolvedAnswered > 0) process.exitCode = 1;
  };
}

async function provideDatabase(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const databaseUrl = process.env.DATABASE_URL?.trim();
  if (!databaseUrl) {
    project.provide('testDatabaseUrl', undefined);
    return undefined;
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
