// `npm run lint`: ESLint with typescript-eslint's type-aware rules, then Prettier's check (run by .ci/run).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      '.dist-*/**',
      'node_modules/**',
      'data/**',
      '.bench/**',
      'coverage/**',
      'test/contract/.generated/**',
      'clients/typescript/src/schema.ts',
      '**/*.mjs',
      '**/*.d.mts',
      'eslint.config.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Fastify hooks and handlers, and interfaces with async members, are async without awaiting.
      '@typescript-eslint/require-await': 'off',
      // The input guard and the card-data checks match control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests, the per-service test helpers they import, and benchmarks read replies with `response.json()`, which is `any` by design.
    files: ['test/**', '**/*.test.ts', 'src/**/test-helpers.ts', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
    },
  },
);
