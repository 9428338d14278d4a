import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // dist/ is `npm run build` output (the process tests build it); never collect tests from it.
    exclude: [...configDefaults.exclude, 'dist/**', '.dist-*/**'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // A worker runs its files one after another in one process: modules are imported once and
    // the embedded database's WebAssembly is compiled once per worker, not once per file (each
    // file still opens its own database and app). About a fifth of the suite's time.
    isolate: false,
    // Each file opens its own embedded database (~200 MB); two at a time suits a 2-core machine.
    // On PostgreSQL each worker has a schema of its own (test/global-setup.ts), so a file that
    // moves its clock ahead and runs due jobs never runs another worker's jobs.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
