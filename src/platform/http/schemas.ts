import { Type, type Static, type TSchema } from 'typebox';

/** The one error body; referenced by every operation's error responses. */
export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable machine-readable code, e.g. validation_failed.' }),
      message: Type.String({ description: 'Human-readable explanation.' }),
      details: Type.Array(
        Type.Object(
          {
            path: Type.String({ description: 'Field the problem is about, e.g. line_items[0].amount.' }),
            code: Type.String({ description: 'Kind of problem, e.g. required, invalid_type, unknown_field.' }),
            message: Type.String(),
          },
          { additionalProperties: true },
        ),
      ),
    }),
  },
  {
    $id: 'ErrorResponse',
    title: 'ErrorResponse',
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

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds.', examples: ['2026-11-21T09:30:00.000Z'] });

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

export const Uuid = Type.String({ format: 'uuid', examples: ['3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c'] });

/**
 * `T | null`. For a single primitive type this is `type: [T, 'null']` rather than an
 * `anyOf`: the response serialiser then needs a type check instead of running a
 * validator per value, which matters on every row of every list.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string' && type !== 'object' && type !== 'array' && !('anyOf' in schema)) {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
  }
  return Type.Union([schema, Type.Null()]);
}

export function DataEnvelope<T extends TSchema>(item: T) {
  return Type.Object({ data: item });
}

/** Path parameters named `id`: any string, so a malformed id is a 404, not a 400. */
export const IdParams = Type.Object({ id: Type.String() }, { additionalProperties: false });
