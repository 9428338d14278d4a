/** Enough schemas for any worker count the suite uses (vitest.config.ts sets maxWorkers). */
export const MAX_TEST_WORKERS = 8;
export const TEST_SCHEMA_PREFIX = 'platform_test_';
