/** Whether `error` is PostgreSQL's unique_violation (23505) on `constraint`; pg and PGlite both report these fields. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const fields = error as { code?: unknown; constraint?: unknown } | null;
  return typeof fields === 'object' && fields !== null && fields.code === '23505' && fields.constraint === constraint;
}
