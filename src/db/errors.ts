/** Whether `error` is PostgreSQL's unique_violation (23505) on `constraint`; pg and PGlite both report these fields. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const fields = error as { code?: unknown; constraint?: unknown } | null;
  return typeof fields === 'object' && fields !== null && fields.code === '23505' && fields.constraint === constraint;
}

/**
 * Whether `error` means the database could not serve the request in time, so the request can
 * simply be retried: no pooled connection free within the wait (pg-pool reports it only by its
 * message), a connect timeout, `statement_timeout` or a cancel (57014), `lock_timeout` (55P03),
 * or the embedded session busy or taken back (src/db/pglite-dialect.ts).
 */
export function isDatabaseBusy(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === '57014' || code === '55P03' || code === 'EMBEDDED_SESSION_BUSY' || code === 'EMBEDDED_SESSION_REVOKED') return true;
  return message === 'timeout exceeded when trying to connect' || message === 'Connection terminated due to connection timeout';
}
