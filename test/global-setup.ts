import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { build } from '../scripts/build.mjs';
import { startContractProxy } from './contract-proxy.js';
import { MAX_TEST_WORKERS, TEST_SCHEMA_PREFIX } from './test-schemas.js';

/** Schemas of a run: one per test worker, so runs side by side (two developers, two helpers) never collide, and neither do the workers of one run (a file that moves its clock ahead and runs due jobs sees only its own worker's rows). */
function workerSchemas(): string[] {
  return Array.from({ length: MAX_TEST_WORKERS }, (_, index) => `${TEST_SCHEMA_PREFIX}${process.pid}_${index + 1}`);
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** DATABASE_URL narrowed to the suite's first schema, or undefined on the embedded database; read it with testDatabaseUrl() (test/database.ts), which picks the worker's own schema. */
    testDatabaseUrl: string | undefined;
    /** Prism's validation proxy for the run (CONTRACT_PROXY=prism), or undefined. */
    contractProxy: { url: string; reportDir: string; documentPath: string } | undefined;
    /** dist/ as the run's global setup built it, once for every worker (test/processes/server-process.ts). */
    serverBuild: { outDir: string } | undefined;
  }
}

/**
 * With DATABASE_URL set, the suite runs against that PostgreSQL server inside a schema of
 * its own, created at the start and dropped at the end, so it never touches other data.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The process tests start the compiled server; one build before any worker starts, so no
  // worker swaps dist/ under a server another worker is starting.
  const { outDir } = await build();
  project.provide('serverBuild', { outDir });
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
  project.provide('contractProxy', { url: proxy.url, reportDir: proxy.reportDir, documentPath: proxy.documentPath });
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
    for (const schema of workerSchemas()) {
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.query(`create schema ${schema}`);
    }
  } finally {
    await client.end();
  }
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${workerSchemas()[0]}`);
  project.provide('testDatabaseUrl', url.toString());

  return async function dropTestSchema() {
    const cleanup = new pg.Client({ connectionString: databaseUrl });
    await cleanup.connect();
    try {
      for (const schema of workerSchemas()) await cleanup.query(`drop schema if exists ${schema} cascade`);
    } finally {
      await cleanup.end();
    }
  };
}
