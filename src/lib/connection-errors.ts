/**
 * A database or Redis the process cannot reach at start. Its message is one line for an
 * operator: which URL (never its password) and what failed, e.g.
 * `cannot reach the database at postgres://app@db:5432/app (password hidden): connect ECONNREFUSED 10.0.0.5:5432`.
 */
export class UnreachableError extends Error {
  constructor(
    readonly what: 'the database' | 'Redis',
    url: string,
    cause: unknown,
  ) {
    super(`cannot reach ${what} at ${describeUrl(url)}: ${describeFailure(cause)}`, { cause });
    this.name = 'UnreachableError';
  }
}

/** The URL without its password (in the authority or as a `password` query parameter), saying so when one was removed. */
export function describeUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return '(an unparsable URL)';
  }
  const hadPassword = url.password !== '' || url.searchParams.has('password');
  url.password = '';
  url.searchParams.delete('password');
  return hadPassword ? `${url.toString()} (password hidden)` : url.toString();
}

/**
 * What a failed connection reports, in one line. A host name resolving to several addresses
 * fails with an AggregateError whose own message is empty; its parts say what happened.
 */
export function describeFailure(cause: unknown): string {
  if (cause instanceof AggregateError && cause.errors.length > 0) {
    return [...new Set(cause.errors.map(describeFailure))].join('; ');
  }
  if (cause instanceof Error) {
    const text = cause.message || (cause as NodeJS.ErrnoException).code || cause.name;
    return text.replace(/\s*\n\s*/g, ' ').trim();
  }
  return String(cause);
}
