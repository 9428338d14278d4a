/**
 * Crash points for crash tests: with `FAULT_INJECTION=<point>[,<point>]` (honoured only with
 * NODE_ENV=test, see the config) the process kills itself with SIGKILL when it reaches such a
 * point, as a power cut or the OOM killer would, with no cleanup of any kind.
 */
export const FAULT_POINTS = [
  /** The request's writes and its idempotency record are in the transaction, not yet committed. */
  'idempotency:after-write',
  /** Committed, the reply not yet sent. */
  'idempotency:after-commit',
] as const;

export type FaultPoint = (typeof FAULT_POINTS)[number];

export type FaultInjector = (point: FaultPoint) => void;

export function faultInjector(points: readonly FaultPoint[]): FaultInjector {
  if (points.length === 0) return () => {};
  return (point) => {
    if (points.includes(point)) process.kill(process.pid, 'SIGKILL');
  };
}
