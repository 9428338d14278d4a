import { Type } from 'typebox';
import { AppError } from './errors/app-error.js';

/** Optional PATCH body field: the `updated_at` the client last read. */
export const ExpectedUpdatedAt = Type.Optional(
  Type.String({
    format: 'date-time',
    maxLength: 64,
    description: 'The updated_at you last read; if the row changed since, the update is refused with 409 stale_update.',
  }),
);

/** Optimistic concurrency: refuses the write when the row changed after the client read it. */
export function assertFresh(expectedUpdatedAt: string | undefined, currentUpdatedAt: Date): void {
  if (expectedUpdatedAt === undefined) return;
  if (Date.parse(expectedUpdatedAt) === currentUpdatedAt.getTime()) return;
  const current = currentUpdatedAt.toISOString();
  throw new AppError('stale_update', 'The resource changed since you read it; fetch it again and reapply your change.', [
    { path: 'expected_updated_at', code: 'stale', message: `The current updated_at is ${current}.`, current_updated_at: current },
  ]);
}

/**
 * The updated_at for a write: now, but always later than the previous value, so two
 * writes within one millisecond still get different versions.
 */
export function nextUpdatedAt(previous: Date, now: Date): Date {
  return now.getTime() > previous.getTime() ? now : new Date(previous.getTime() + 1);
}
