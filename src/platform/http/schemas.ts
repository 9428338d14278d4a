import { MAX_ERROR_DETAILS, MAX_ERROR_TEXT } from '../errors/app-error.js';
import { Type, type Static, type TProperties, type TSchema, type TUnsafe } from 'typebox';

/** The one error body; referenced by every operation's error responses. */
export const ErrorResponse = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.String({ maxLength: 64, description: 'Stable machine-readable code, e.g. validation_failed.' }),
        message: Type.String({ maxLength: MAX_ERROR_TEXT, description: 'Human-readable explanation.' }),
        details: Type.Array(
          Type.Object(
            {
              path: Type.String({ maxLength: MAX_ERROR_TEXT, description: 'Field the problem is about, e.g. line_items[0].amount.' }),
              code: Type.String({ maxLength: 64, description: 'Kind of problem, e.g. required, invalid_type, unknown_field.' }),
              message: Type.String({ maxLength: MAX_ERROR_TEXT }),
            },
            { additionalProperties: true, description: 'Some codes add fields of their own, e.g. scope on missing_scope.' },
          ),
          { maxItems: MAX_ERROR_DETAILS },
        ),
      },
      { additionalProperties: false },
    ),
  },
  {
    $id: 'ErrorResponse',
    title: 'ErrorResponse',
    additionalProperties: false,
    examples: [
      {
        error: {
          code: 'validation_failed',
          message: 'The request is not valid; see details.',
          details: [{ path: 'email', code: 'invalid_format', message: 'email is not a valid email.' }],
        },
      },
    ],
  },
);

export const ErrorRef = Type.Unsafe<unknown>({ $ref: 'ErrorResponse#' });

/**
 * An error status of a route, described by the codes it answers with (`slug_taken: ...`): the
 * OpenAPI document shows an example body for every code the description names.
 */
export function ErrorReply(description: string) {
  return { ...ErrorRef, description };
}

/**
 * A timestamp in a reply: ISO 8601 UTC with milliseconds. Presenters hand over the Date as the
 * database returned it and the response serialiser writes it in that format (faster than
 * `toISOString()` plus escaping the text, on every row of every list); a string is written as is.
 */
export function TimestampField(description: string) {
  return Type.Unsafe<string | Date>(Type.String({ format: 'date-time', maxLength: 24, description, examples: ['2026-11-21T09:30:00.000Z'] }));
}

export const Timestamp = TimestampField('ISO 8601 UTC with milliseconds.');

export const CURRENCY_FORMAT = 'iso-4217';

/**
 * An ISO 4217 code in any case (an unknown code fails validation with 400); services
 * store and return it upper-case with `normalizeCurrency`.
 */
export const CurrencyCode = Type.String({
  format: CURRENCY_FORMAT,
  minLength: 3,
  maxLength: 3,
  description: 'ISO 4217 currency code, any case; returned upper-case.',
  examples: ['USD'],
});

/** Pattern of a one-line name or title: no control characters (tab, line feed and DEL included), not blank. */
export const ONE_LINE_NOT_BLANK = '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$';

export const Uuid = Type.String({ format: 'uuid', maxLength: 36, examples: ['3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c'] });

/** Ajv format of integer ids: canonical decimal (no sign, no leading zero) within PostgreSQL's bigint. */
export const INT64_ID_FORMAT = 'int64-id';
const INT64_MAX = 9_223_372_036_854_775_807n;

export function isInt64Id(value: string): boolean {
  return /^[1-9][0-9]{0,18}$/.test(value) && BigInt(value) <= INT64_MAX;
}

/**
 * `T | null`. For a single primitive type this is `type: [T, 'null']` rather than an
 * `anyOf`: the response serialiser then needs a type check instead of running a
 * validator per value, which matters on every row of every list.
 */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string' && type !== 'object' && type !== 'array' && !('anyOf' in schema)) {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
  }
  return Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()]));
}

export function DataEnvelope<T extends TSchema>(item: T) {
  return Type.Object({ data: item }, { additionalProperties: false });
}

/*
 * Path parameters. A value of the wrong shape names no resource: the error handler answers a
 * path that fails its schema with 404 not_found, as it answers an unknown id, so routes and
 * services never check id shapes themselves.
 */

/** A UUID in a path (lower or upper case). */
export const UuidParam = Type.String({ format: 'uuid', maxLength: 36, examples: ['3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c'] });

/** An integer id in a path, as a decimal string within bigint. */
export const IntegerIdParam = Type.String({ format: INT64_ID_FORMAT, pattern: '^[1-9][0-9]{0,18}$', maxLength: 19, examples: ['42'] });

/** Path parameters of a route: the schema of each, nothing else. */
export function PathParams<T extends TProperties>(params: T) {
  return Type.Object(params, { additionalProperties: false });
}

/** `{id}` as a UUID, the platform's id scheme. */
export const IdParams = PathParams({ id: UuidParam });

/** `{id}` as an integer (services whose spec types ids as integers). */
export const IntegerIdParams = PathParams({ id: IntegerIdParam });
