/** Types for scripts/build.mjs (plain node ESM, so `npm start` needs no TypeScript loader). */

export declare const ROOT: string;

export interface BuildResult {
  /** Absolute path of dist/. */
  outDir: string;
  /** Number of TypeScript modules compiled. */
  sources: number;
  /** Files copied as they are, relative to src/ (migrations, word lists). */
  assets: string[];
  ms: number;
}

/** Compiles src/ into dist/ (replacing it). */
export declare function build(options?: { quiet?: boolean }): Promise<BuildResult>;

/** package.json's start script, `node <flags> <entry>`, split up. */
export declare function startCommand(): { flags: string[]; entry: string; script: string };
