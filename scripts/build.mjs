/**
 * `npm run build` (also run by `npm start`, as its prestart): compiles src/ to dist/ for plain node.
 *
 * Each src/**\/*.ts file (tests and test helpers left out) is transpiled on its own with esbuild
 * (no bundling, no type-check: `npm run typecheck` does that) to the same place under dist/, and
 * the files the code reads relative to import.meta.url (every migrations/*.sql, customer-auth's
 * common-passwords.txt) are copied beside it. A final check resolves every
 * `new URL('…', import.meta.url)` in the output and fails the build if one points at nothing.
 *
 * The new tree is written to a staging folder and swapped in for dist/ with two renames, so a
 * stale file never survives a build and a server started from dist/ meanwhile (or a second
 * `npm start` building at the same moment) never sees a half-written or half-deleted tree.
 *
 * Also exports startCommand(): the node flags and entry of package.json's `start` script, so
 * the export benchmark and the process tests start the server exactly as `npm start` does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');

/** Source files that are not part of the server: vitest files and the helpers only they import. */
function isTestSource(name) {
  return name.endsWith('.test.ts') || name === 'test-helpers.ts';
}

/**
 * Files the code reads at run time relative to import.meta.url, copied as they are: every
 * `migrations/*.sql` (src/db and each service) and the listed others. A new kind of asset goes
 * here; the reference check at the end of build() fails the build until it does.
 */
const OTHER_ASSETS = ['services/customer-auth/common-passwords.txt'];
function isAsset(relative) {
  const parts = relative.split(path.sep);
  return (parts.at(-2) === 'migrations' && relative.endsWith('.sql')) || OTHER_ASSETS.includes(parts.join('/'));
}

function listFiles(directory) {
  const files = [];
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue; // editors' temporary and backup files
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) files.push(...listFiles(full));
    else if (entry.isFile()) files.push(full);
  }
  return files;
}

/** Every `new URL('<relative>', import.meta.url)` in the compiled files must resolve to a file or folder. */
function checkAssetReferences(outDir, compiled) {
  const pattern = /new URL\(\s*(['"`])([^'"`]+)\1\s*,\s*import\.meta\.url\s*\)/g;
  const missing = [];
  for (const file of compiled) {
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(pattern)) {
      const target = fileURLToPath(new URL(match[2], pathToFileURL(file)));
      if (!fs.existsSync(target)) missing.push(`${path.relative(outDir, file)} reads ${match[2]} -> ${path.relative(outDir, target)}`);
    }
  }
  if (missing.length > 0) throw new Error(`the build is missing files the code reads:\n  ${missing.join('\n  ')}`);
}

/**
 * Builds src/ into dist/ (replacing it). Returns what it did; throws on a compile error or a
 * missing asset, leaving the previous dist/ in place.
 */
export async function build({ quiet = true } = {}) {
  const started = performance.now();
  const staging = path.join(ROOT, `.dist-${process.pid}-${Date.now()}`);
  try {
    const sources = [];
    const assets = [];
    for (const file of listFiles(SRC)) {
      const name = path.basename(file);
      if (name.endsWith('.ts')) {
        if (!isTestSource(name) && !name.endsWith('.d.ts')) sources.push(file);
      } else if (isAsset(path.relative(SRC, file))) {
        assets.push(file);
      }
    }
    await esbuild.build({
      entryPoints: sources,
      outdir: staging,
      outbase: SRC,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      bundle: false,
      sourcemap: true,
      logLevel: quiet ? 'silent' : 'warning',
    });
    for (const file of assets) {
      const target = path.join(staging, path.relative(SRC, file));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.copyFileSync(file, target);
    }
    const compiled = sources.map((file) => path.join(staging, path.relative(SRC, file)).replace(/\.ts$/, '.js'));
    checkAssetReferences(staging, compiled);
    swapIn(staging);
    return { outDir: DIST, sources: sources.length, assets: assets.map((file) => path.relative(SRC, file)), ms: performance.now() - started };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** Replaces dist/ with the staging folder: dist/ is missing only between two renames. */
function swapIn(staging) {
  for (let attempt = 0; ; attempt += 1) {
    const old = `${staging}-old`;
    try {
      fs.renameSync(DIST, old);
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
    try {
      fs.renameSync(staging, DIST);
      return;
    } catch (error) {
      // Another build swapped its dist/ in between our two renames: move that one aside too.
      if (!['ENOTEMPTY', 'EEXIST'].includes(error.code) || attempt >= 5) throw error;
    } finally {
      fs.rmSync(old, { recursive: true, force: true });
    }
  }
}

/**
 * The `start` script of package.json, `exec node <flags> <entry>`, split into the node flags and
 * the entry, for the benchmark and the tests. (`exec` makes the shell npm runs the script in
 * become node, so the SIGTERM npm forwards reaches the server.) Throws if the script no longer
 * has that shape, so a change there cannot silently leave them measuring something else.
 */
export function startCommand() {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const script = String(manifest.scripts?.start ?? '');
  const words = script.trim().split(/\s+/);
  if (words[0] === 'exec') words.shift();
  const entry = words.at(-1);
  const flags = words.slice(1, -1);
  if (words[0] !== 'node' || !entry?.endsWith('.js') || flags.some((flag) => !/^--[a-z0-9-]+(=[^\s'"$`]+)?$/.test(flag))) {
    throw new Error(`package.json's start script should read "exec node --flag=value ... dist/server.js"; it reads "${script}"`);
  }
  return { flags, entry, script };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  build({ quiet: false }).then(
    (result) => {
      process.stdout.write(`built ${path.relative(ROOT, result.outDir)}/: ${result.sources} modules, ${result.assets.length} assets, ${(result.ms / 1000).toFixed(1)} s\n`);
    },
    (error) => {
      process.stderr.write(`build failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
