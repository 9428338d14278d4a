import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

function relative(file: string): string {
  return path.relative(SRC, file);
}

/** Module specifiers a file imports (static imports and re-exports). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s+['"]([^'"]+)['"]/g)].map((match) => match[1]!);
}

const serviceFiles = sourceFiles(path.join(SRC, 'services'));
/** Code that runs in production (test helpers and fakes only run under tests). */
const productionServiceFiles = serviceFiles.filter((file) => !/(^|\/)(test-helpers|fake-[\w-]+)\.ts$/.test(relative(file)));

describe('tenant scoping', () => {
  it('service code reaches its tables only through owned tables (src/db/owned.ts), which add the tenant and mode', () => {
    const offences = productionServiceFiles.flatMap((file) => {
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      return lines.flatMap((line, index) =>
        /\.(selectFrom|updateTable|deleteFrom|insertInto|replaceInto|mergeInto)\(|['"`]tenant_id['"`]/.test(line) && !/tables\.ts$/.test(file)
          ? [`${relative(file)}:${index + 1}: ${line.trim()}`]
          : [],
      );
    });
    expect(offences).toEqual([]);
  });
});

describe('module boundaries', () => {
  it('src/db does not import the platform layer', () => {
    const offences = sourceFiles(path.join(SRC, 'db')).flatMap((file) =>
      importsOf(file)
        .filter((specifier) => specifier.includes('/platform/'))
        .map((specifier) => `${relative(file)} imports ${specifier}`),
    );
    expect(offences).toEqual([]);
  });

  it('src/lib imports neither the platform layer, nor a service, nor Fastify', () => {
    const offences = sourceFiles(path.join(SRC, 'lib')).flatMap((file) =>
      importsOf(file)
        .filter((specifier) => specifier.includes('/platform/') || specifier.includes('/services/') || specifier.startsWith('fastify'))
        .map((specifier) => `${relative(file)} imports ${specifier}`),
    );
    expect(offences).toEqual([]);
  });

  it('a service imports no other service; it calls others through the registry', () => {
    const offences = serviceFiles.flatMap((file) => {
      const own = relative(file).split(path.sep)[1];
      return importsOf(file)
        .map((specifier) => path.relative(SRC, path.resolve(path.dirname(file), specifier)))
        .filter((target) => target.startsWith(`services${path.sep}`) && target.split(path.sep).length > 2)
        .filter((target) => target.split(path.sep)[1] !== own)
        .map((target) => `${relative(file)} imports ${target}`);
    });
    expect(offences).toEqual([]);
  });

  it('the service registry and module contract import no concrete service', () => {
    for (const file of ['services/registry.ts', 'services/module.ts']) {
      const concrete = importsOf(path.join(SRC, file)).filter((specifier) => /^\.\/[\w-]+\//.test(specifier));
      expect(concrete, file).toEqual([]);
    }
  });
});
