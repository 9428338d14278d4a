import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

/**
 * Fastify's response serialiser factory (fast-json-stringify), compiling each distinct schema
 * once for the whole app. Every route declares the same error responses and many share their
 * success schema; compiled per route and status they were hundreds of identical functions,
 * megabytes of heap that stay for the life of the process.
 */
export function sharedSerializerFactory(): SerializerFactory {
  const compileWith = SerializerSelector();
  const compiled = new Map<string, Serializer>();
  return (externalSchemas, options) => {
    const compile = compileWith(externalSchemas, options);
    const context = JSON.stringify(Object.keys((externalSchemas as object | undefined) ?? {}).sort());
    return (route) => {
      const key = `${context}:${JSON.stringify(route.schema)}`;
      let serialize = compiled.get(key);
      if (!serialize) compiled.set(key, (serialize = compile(route)));
      return serialize;
    };
  };
}
