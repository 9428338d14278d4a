/** Constants and messages shared by the load generator (run.ts) and the target servers (servers.ts). */

export const TARGETS = ['full', 'baseline', 'hello'] as const;
export type Target = (typeof TARGETS)[number];

/** The app's database pool size (src/db/database.ts); the baseline uses the same. */
export const POOL_SIZE = 10;

/** Where the bench keeps its tables, so it never touches other data. */
export const BENCH_SCHEMA = 'platform_bench';

/** The path (b) serves. */
export const HELLO_PATH = '/hello';

/** One statement the app ran for a request, with its values (dates as ISO text). */
export interface RecordedStatement {
  sql: string;
  values: unknown[];
}

/**
 * What the app's database work for one endpoint is, as recorded from the app itself: groups
 * of statements run one group after the other, the statements of a group side by side.
 */
export interface EndpointPlan {
  name: string;
  /** The request path with its query, as the load generator sends it. */
  url: string;
  groups: RecordedStatement[][];
}

export type ChildMessage = { type: 'ready'; port: number } | { type: 'error'; message: string };
export type ParentMessage = { type: 'stop' };
