import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildServer } from './server-process.js';

describe('npm run build', () => {
  it('ships the server only: no tests, test helpers or fakes of outside services in dist/', async () => {
    const { outDir } = await buildServer();
    const files = fs.readdirSync(outDir, { recursive: true, encoding: 'utf8' }).map((file) => file.split(path.sep).join('/'));
    expect(files).toContain('server.js');
    expect(files.filter((file) => /\.test\.|test-helpers|fake/i.test(file))).toEqual([]);
  });
});
