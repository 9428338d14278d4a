import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { compileReplyWriter } from './json-projection.js';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

export interface SerializerOptions {
  /**
   * Also write every reply with fast-json-stringify and fail on any difference (tests): the
   * projection's promise of byte-identical output, checked on every reply the suite sees.
   */
  crossCheck?: boolean;
}

/**
 * Fastify's response serialiser factory, compiling each distinct schema once for the whole
 * app. Every route declares the same error responses and many share their success schema;
 * compiled per route and status they were hundreds of identical functions, megabytes of heap
 * that stay for the life of the process.
 *
 * A reply whose schema has a projection (`json-projection.ts`) is written by `JSON.stringify`:
 * as it is when it already has the plain shape exactly, else copied into that shape first; any
 * value the projection does not take as plain, and any schema without one, goes through
 * fast-json-stringify as before.
 */
export function sharedSerializerFactory(options: SerializerOptions = {}): SerializerFactory {
  const compileWith = SerializerSelector();
  const compiled = new Map<string, Serializer>();
  return (externalSchemas, fjsOptions) => {
    const compile = compileWith(externalSchemas, fjsOptions);
    const context = JSON.stringify(Object.keys((externalSchemas as object | undefined) ?? {}).sort());
    return (route) => {
      const key = `${context}:${JSON.stringify(route.schema)}`;
      let serialize = compiled.get(key);
      if (!serialize) compiled.set(key, (serialize = withProjection(() => compile(route), route.schema, options)));
      return serialize;
    };
  };
}

/**
 * Under cross-check (tests), the schemas of replies that were copied into their shape rather
 * than written as they are, by title: a test keeps every GET of the app on the fast path.
 */
export const copiedReplySchemas = new Set<string>();

function withProjection(compileFastJsonStringify: () => Serializer, schema: unknown, options: SerializerOptions): Serializer {
  const writer = compileReplyWriter(schema);
  if (!writer) return compileFastJsonStringify();
  let compiled: Serializer | undefined;
  const fastJsonStringify: Serializer = (data) => (compiled ??= compileFastJsonStringify())(data);
  const label = options.crossCheck ? titleOf(schema) : '';
  const serialize = (data: unknown): string | Buffer => {
    let plain: unknown;
    try {
      // Most replies are built in their schema's exact shape: written as they are, no copy.
      if (writer.isWrittenAsIs(data)) {
        plain = data;
      } else {
        if (options.crossCheck) copiedReplySchemas.add(label);
        plain = writer.project(data);
      }
    } catch {
      return fastJsonStringify(data);
    }
    // As bytes: JSON.stringify gives a rope of parts, which Fastify's Content-Length and the
    // socket write each flattened into a copy on the heap; encoded once here, neither copies.
    return Buffer.from(JSON.stringify(plain));
  };
  // Fastify takes whatever the serialiser returns as the payload; a Buffer is sent as it is.
  return (options.crossCheck ? crossChecked(serialize, fastJsonStringify) : serialize) as Serializer;
}

/** A reply schema's title, or that of the `data` it wraps (an envelope has none of its own). */
function titleOf(schema: unknown): string {
  const node = schema as { title?: string; properties?: { data?: { title?: string; items?: { title?: string } } } } | undefined;
  return node?.title ?? node?.properties?.data?.title ?? node?.properties?.data?.items?.title ?? JSON.stringify(schema).slice(0, 80);
}

function crossChecked(serialize: (data: unknown) => string | Buffer, fastJsonStringify: Serializer): (data: unknown) => string | Buffer {
  return (data: unknown) => {
    const bytes = serialize(data);
    const written = bytes.toString();
    const expected = fastJsonStringify(data);
    if (written !== expected) {
      throw new Error(`Reply projection differs from fast-json-stringify:\n  projected: ${written.slice(0, 2000)}\n  expected:  ${expected.slice(0, 2000)}`);
    }
    return bytes;
  };
}
