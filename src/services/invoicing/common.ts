import type { RequestContext } from '../../platform/context.js';
import { AppError, notFound, type ErrorDetail } from '../../platform/errors/app-error.js';
import type { Owner } from './repository.js';

export function owner(ctx: RequestContext): Owner {
  return { tenantId: ctx.tenantId, mode: ctx.mode };
}

const BIGINT_MAX = 9_223_372_036_854_775_807n;
const ID_PATTERN = /^[1-9]\d{0,18}$/;

/**
 * A path id as the database knows it: a positive integer in canonical form (no sign,
 * no leading zeros) within bigint. Anything else names no row, so the caller answers
 * 404 without querying (a malformed value would make PostgreSQL fail).
 */
export function parseId(value: string): string | undefined {
  return ID_PATTERN.test(value) && BigInt(value) <= BIGINT_MAX ? value : undefined;
}

/** The row's id from a path parameter, or 404 naming what was looked for. */
export function requireId(value: string, what: string): string {
  const parsed = parseId(value);
  if (parsed === undefined) throw notFound(what);
  return parsed;
}

/** 400 validation_failed with the given details. */
export function invalid(details: ErrorDetail[], message = 'The request is not valid; see details.'): AppError {
  return new AppError('validation_failed', message, details);
}

/** Trimmed text; blank becomes null; undefined stays undefined (field not sent). */
export function cleanText(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/** JSON ids are numbers; every id the API shows fits in JSON's exact range. */
export function jsonId(value: string): number {
  return Number(value);
}
