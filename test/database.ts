import { inject } from 'vitest';
import { MAX_TEST_WORKERS } from './test-schemas.js';

/**
 * DATABASE_URL of the run narrowed to this worker's own schema (created by the global setup),
 * or undefined on the embedded database.
 */
export function testDatabaseUrl(): string | undefined {
  const url = inject('testDatabaseUrl');
  if (!url) return undefined;
  const worker = Number(process.env.VITEST_POOL_ID ?? '1');
  if (!Number.isInteger(worker) || worker < 1 || worker > MAX_TEST_WORKERS) throw new Error(`No test schema for worker ${process.env.VITEST_POOL_ID}.`);
  const parsed = new URL(url);
  const firstSchema = /search_path=(\S+)/.exec(parsed.searchParams.get('options') ?? '')?.[1] ?? '';
  parsed.searchParams.set('options', `-c search_path=${firstSchema.replace(/_\d+$/, `_${worker}`)}`);
  return parsed.toString();
}
