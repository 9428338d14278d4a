import fc from 'fast-check';
import fastJsonStringify from 'fast-json-stringify';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { compileProjection, compileReplyWriter } from '../../src/platform/http/json-projection.js';
import { sharedSerializerFactory } from '../../src/platform/http/serialization.js';
import { Nullable, Timestamp, Uuid } from '../../src/platform/http/schemas.js';
import { ListEnvelope } from '../../src/platform/pagination/index.js';

/** The app's serialiser for one schema, as Fastify would compile it for a route (it may answer bytes). */
function bytesSerializerFor(schema: unknown, crossCheck = false): (data: unknown) => string | Buffer {
  return sharedSerializerFactory({ crossCheck })({}, {})({ schema, method: 'GET', url: '/', httpStatus: '200' }) as (data: unknown) => string | Buffer;
}

/** The same serialiser, its answer as text. */
function serializerFor(schema: unknown, crossCheck = false): (data: unknown) => string {
  const serialize = bytesSerializerFor(schema, crossCheck);
  return (data) => serialize(data).toString();
}

/** fast-json-stringify's answer, or the error it throws. */
function reference(schema: unknown, data: unknown): string | Error {
  try {
    return fastJsonStringify(schema as never)(data);
  } catch (error) {
    return error as Error;
  }
}

const Row = Type.Object({
  id: Uuid,
  count: Type.Integer(),
  ratio: Type.Number(),
  flag: Type.Boolean(),
  status: Type.Union([Type.Literal('open'), Type.Literal('closed')]),
  note: Nullable(Type.String({ maxLength: 50 })),
  at: Timestamp,
  maybe_at: Nullable(Timestamp),
  tags: Type.Array(Type.String()),
  bag: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }),
  custom: Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    patternProperties: { '^.*$': { anyOf: [{ type: 'string', maxLength: 20 }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }] } },
  }),
  nested: Nullable(Type.Object({ line1: Nullable(Type.String()), city: Type.Optional(Type.String()) }, { additionalProperties: false })),
  later: Type.Optional(Type.String()),
});
const Page = ListEnvelope(Type.Object(Row.properties, { additionalProperties: false }));

/** Values of Row's fields up to `bag`, in its order, which every test's rows share (the fields after it differ by test). */
const leadingRowFields = {
  id: fc.uuid(),
  count: fc.integer(),
  ratio: fc.oneof(fc.double({ noNaN: true }), fc.integer()),
  flag: fc.boolean(),
  status: fc.constantFrom('open', 'closed'),
  note: fc.option(fc.string({ maxLength: 50 }), { nil: null }),
  at: fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2999-12-31T00:00:00Z'), noInvalidDate: true }),
  maybe_at: fc.option(fc.date({ noInvalidDate: true }), { nil: null }),
  tags: fc.array(fc.string({ unit: 'grapheme' })),
  bag: fc.dictionary(fc.string(), fc.jsonValue()),
};
const nestedValue = fc.option(fc.record({ line1: fc.option(fc.string(), { nil: null }), city: fc.string() }, { requiredKeys: ['line1'] }), { nil: null });

const plainRow = fc.record({
  ...leadingRowFields,
  custom: fc.dictionary(fc.string(), fc.oneof(fc.string({ maxLength: 25 }), fc.double(), fc.boolean(), fc.constant(null))),
  nested: nestedValue,
  later: fc.option(fc.string(), { nil: undefined }),
  extra: fc.option(fc.string(), { nil: undefined }),
});

describe('reply serialisation: the projection fast path', () => {
  it('writes exactly what fast-json-stringify writes, on plain pages and on values it must hand back', () => {
    const serialize = serializerFor(Page);
    // Values off the plain path too: numbers for strings, strings for integers, missing required fields.
    const oddValue = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.integer(),
      fc.string(),
      fc.constant(new Date(Number.NaN)),
      fc.constant([1]),
      fc.constant({ toJSON: () => 'x' }),
    );
    const oddRow = fc.tuple(plainRow, fc.constantFrom(...Object.keys(Row.properties)), oddValue).map(([row, key, value]) => ({ ...row, [key]: value }));
    fc.assert(
      fc.property(fc.array(fc.oneof(plainRow, oddRow), { maxLength: 5 }), fc.nat(), (rows, total) => {
        const page = { data: rows, meta: { limit: 50, offset: 0, total, has_more: false } };
        const expected = reference(Page, page);
        if (expected instanceof Error) expect(() => serialize(page)).toThrow();
        else expect(serialize(page)).toBe(expected);
      }),
      { numRuns: 400 },
    );
  });

  it('writes a reply already in its exact shape as it is, byte for byte what fast-json-stringify writes', () => {
    // Rows of Page built in the written order with only known keys: the path that skips the copy.
    const ShapedPage = Page;
    const writer = compileReplyWriter(ShapedPage)!;
    const serialize = serializerFor(ShapedPage);
    const shapedRow = fc.record(
      {
        ...leadingRowFields,
        custom: fc.dictionary(
          fc.string().filter((key) => key !== '__proto__' && !/^(0|[1-9][0-9]*)$/.test(key)),
          fc.oneof(fc.string({ maxLength: 20 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)),
        ),
        nested: nestedValue,
        later: fc.string(),
      },
      { requiredKeys: ['id', 'count', 'ratio', 'flag', 'status', 'note', 'at', 'maybe_at', 'tags', 'bag', 'custom', 'nested'] },
    );
    fc.assert(
      fc.property(fc.array(shapedRow, { maxLength: 5 }), fc.nat(), (rows, total) => {
        const page = { data: rows, meta: { limit: 50, offset: 0, total, has_more: false } };
        expect(writer.isWrittenAsIs(page)).toBe(true);
        expect(serialize(page)).toBe(reference(ShapedPage, page));
      }),
      { numRuns: 300 },
    );
    const row = {
      id: '6f1c1d54-1f43-4a8e-9c3e-6a9c1c2f4b11',
      count: 1,
      ratio: 0.5,
      flag: true,
      status: 'open',
      note: null,
      at: new Date(0),
      maybe_at: null,
      tags: [],
      bag: {},
      custom: { a: 'x' },
      nested: null,
    };
    const page = (data: unknown[]) => ({ data, meta: { limit: 50, offset: 0, total: 1, has_more: false } });
    expect(writer.isWrittenAsIs(page([row]))).toBe(true);
    // Written as UTF-8 bytes, once: Fastify then neither measures nor sends a string.
    const withText = page([{ ...row, note: 'naïve – 日本 😀' }]);
    const bytes = bytesSerializerFor(ShapedPage)(withText);
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.toString('utf8')).toBe(reference(ShapedPage, withText));
    // Anything else is copied into the shape first: an unknown key, another order, an invalid date, a class instance, a const that is not its value.
    const { count, ...withoutCount } = row;
    for (const odd of [
      { ...row, extra: 1 },
      { count, ...withoutCount },
      { ...row, custom: { a: 'longer than twenty characters' } },
      { ...row, custom: { 7: 'index key' } },
      { ...row, at: new Date(Number.NaN) },
      Object.assign(Object.create({ inherited: 1 }), row) as object,
    ]) {
      expect(writer.isWrittenAsIs(page([odd]))).toBe(false);
      const expected = reference(ShapedPage, page([odd]));
      if (expected instanceof Error) expect(() => serialize(page([odd]))).toThrow();
      else expect(serialize(page([odd]))).toBe(expected);
    }
  });

  it('keeps the required properties first, as fast-json-stringify orders them, and drops unknown ones', () => {
    const schema = Type.Object({ a: Type.Optional(Type.String()), b: Type.String(), c: Type.Optional(Type.Integer()), d: Type.Integer() }, { additionalProperties: false });
    const serialize = serializerFor(schema);
    expect(serialize({ a: 'x', b: 'y', c: 1, d: 2, e: 'dropped' })).toBe('{"b":"y","d":2,"a":"x","c":1}');
    expect(serialize({ a: 'x', b: 'y', c: 1, d: 2 })).toBe(reference(schema, { a: 'x', b: 'y', c: 1, d: 2 }));
  });

  it('hands a key-like-an-index or __proto__ key in an open object to fast-json-stringify (objects reorder or swallow them)', () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: true };
    const serialize = serializerFor(schema);
    const withIndexKey = { name: 'n', 7: 'seven' };
    expect(serialize(withIndexKey)).toBe(reference(schema, withIndexKey));
    const withProto = JSON.parse('{"name":"n","__proto__":{"x":1}}') as unknown;
    expect(serialize(withProto)).toBe(reference(schema, withProto));
  });

  it('gives every reply schema of the app a projection except the shared error reply', () => {
    expect(compileProjection(Page)).toBeDefined();
    expect(compileProjection({ $ref: 'ErrorResponse#' })).toBeUndefined();
    expect(compileProjection({ type: 'object', allOf: [] })).toBeUndefined();
  });

  it('fails loudly under cross-check when the projection and fast-json-stringify disagree', () => {
    // A schema whose `default` fast-json-stringify writes raw: a projection that forgot it would differ.
    const schema = { type: 'object', properties: { a: { type: 'string', default: 'fallback' } } };
    expect(serializerFor(schema, true)({})).toBe('{"a":"fallback"}');
  });
});
