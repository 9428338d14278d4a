/** Whether `error` is PostgreSQL's unique_violation (23505) on `constraint`; pg and PGlite both report these fields. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const fields = error as { code?: unknown; constraint?: unknown } | null;
  return typeof fields === 'object' && fields !== null && fields.code === '23505' && fields.constraint === constraint;
}

const BUSY_CODES = new Set([
  '57014', // query_canceled: statement_timeout
  '55P03', // lock_not_available: lock_timeout
  '25P03', // idle_in_transaction_session_timeout
  'EMBEDDED_SESSION_BUSY',
  'EMBEDDED_SESSION_REVOKED',
]);

/** What pg and pg-pool say, without a code, when no connection came in time or the session was ended. */
const BUSY_MESSAGES = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'Connection terminated unexpectedly',
  'Client has encountered a connection error and is not queryable',
]);

/**
 * Whether `error` means the database could not serve the request in time, so the request can
 * be retried: no pooled connection free within the wait, `statement_timeout`, `lock_timeout`,
 * a session ended for idling in a transaction, or the embedded session busy or taken back
 * (src/db/pglite-dialect.ts).
 */
export function isDatabaseBusy(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (typeof code === 'string' && BUSY_CODES.has(code)) || (typeof message === 'string' && BUSY_MESSAGES.has(message));
}
