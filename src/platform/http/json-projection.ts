/**
 * A reply's plain JSON shape, read off its response schema: the fast path of the response
 * serialiser (`serialization.ts`).
 *
 * fast-json-stringify writes a reply by concatenating one small string per field. That is
 * quick on the CPU but leaves about three times the reply's size in short-lived strings per
 * request, and on list pages the garbage collector paid more for them than the writing cost.
 * A projection instead copies the value into the exact shape the schema allows (known
 * properties in fast-json-stringify's order, instants as ISO text) and hands it to the
 * native `JSON.stringify`, which writes one flat string.
 *
 * The output is byte for byte what fast-json-stringify writes, on the values a projection
 * accepts: plain values of the declared types. Anything else (a number where a string goes, a
 * missing required property, a `toJSON` method) makes the projection give up with
 * `NOT_PLAIN`, and the caller serialises that reply with fast-json-stringify, coercions and
 * errors included. Schemas with keywords it does not model (`$ref`, `allOf`, `oneOf`,
 * `if`, `patternProperties`, tuples, unions other than "X or null") get no projection at all.
 * Tests serialise every reply both ways and compare (`serialization.ts`, cross-check).
 */

export type Projection = (value: unknown) => unknown;

/**
 * Whether `JSON.stringify(value)` already writes what the projection of `value` would: the
 * value has exactly the plain shape (only known properties, in the written order, of the
 * declared types; instants as valid Dates, whose toJSON is toISOString). A reply that passes
 * is written as it is, without the copy; one that does not is projected.
 */
export type ShapeCheck = (value: unknown) => boolean;

interface Compiled {
  project: Projection;
  isWrittenAsIs: ShapeCheck;
}

/** Thrown (one object, never allocated per call) when a value is not the plain shape of its schema. */
const NOT_PLAIN = new Error('The value is not the plain shape of its schema.');

type Schema = Record<string, unknown>;

// fast-json-stringify infers a missing `type` from these keywords (its inferTypeByKeyword).
const OBJECT_KEYWORDS = ['properties', 'required', 'additionalProperties', 'patternProperties', 'maxProperties', 'minProperties', 'dependencies'];
const ARRAY_KEYWORDS = ['items', 'additionalItems', 'maxItems', 'minItems', 'uniqueItems', 'contains'];
const STRING_KEYWORDS = ['maxLength', 'minLength', 'pattern'];
const NUMBER_KEYWORDS = ['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum'];
/** Keywords that change how fast-json-stringify writes a value, beyond those handled here. */
const UNMODELLED_KEYWORDS = ['$ref', 'allOf', 'oneOf', 'if', 'then', 'else', 'not', 'dependencies', 'additionalItems'];

function notPlain(): never {
  throw NOT_PLAIN;
}

const identity: Projection = (value) => value;

/** The projection of `schema`, or undefined when the schema uses something not modelled here. */
export function compileProjection(schema: unknown): Projection | undefined {
  return compileReplyWriter(schema)?.project;
}

/** The projection of `schema` and its shape check, or undefined when the schema uses something not modelled here. */
export function compileReplyWriter(schema: unknown): Compiled | undefined {
  try {
    return projectionOf(schema);
  } catch (error) {
    if (error === NOT_PLAIN) return undefined;
    throw error;
  }
}

const always = () => true;
const IDENTITY: Compiled = { project: identity, isWrittenAsIs: always };

function projectionOf(schema: unknown): Compiled {
  if (schema === true) return IDENTITY;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) notPlain();
  const node = schema as Schema;
  for (const keyword of UNMODELLED_KEYWORDS) if (keyword in node) notPlain();
  if (node.anyOf !== undefined) return unionProjection(node);
  const inner = bareProjection(node);
  return node.nullable === true ? orNull(inner) : inner;
}

function orNull(inner: Compiled): Compiled {
  return {
    project: (value) => (value === null ? null : inner.project(value)),
    isWrittenAsIs: (value) => value === null || inner.isWrittenAsIs(value),
  };
}

/**
 * `anyOf` as the schemas here use it: a choice of plain values (literals, strings, numbers,
 * booleans, null), written as the value itself when it matches one of them; or `[X, null]`.
 * Either way with nothing beside it that shapes the output.
 */
function unionProjection(node: Schema): Compiled {
  const members = node.anyOf;
  if (!Array.isArray(members) || members.length < 2) notPlain();
  if (Object.keys(node).some((key) => key !== 'anyOf' && !isAnnotation(key))) notPlain();
  const matchers = members.map(scalarMatcher);
  if (matchers.every((matcher) => matcher !== undefined)) {
    const matchesOne = (value: unknown) => matchers.some((matches) => matches(value));
    return { project: (value) => (matchesOne(value) ? value : notPlain()), isWrittenAsIs: matchesOne };
  }
  const isNull = (member: unknown) => typeof member === 'object' && member !== null && (member as Schema).type === 'null';
  if (members.length !== 2) notPlain();
  const other: unknown = isNull(members[0]) ? members[1] : isNull(members[1]) ? members[0] : notPlain();
  if (isNull(other) || (other as Schema).nullable === true) notPlain();
  return orNull(projectionOf(other));
}

type Matcher = (value: unknown) => boolean;

/** Whether a value is valid against a scalar member of a union, judged without a validator; undefined if not that simple. */
function scalarMatcher(member: unknown): Matcher | undefined {
  if (typeof member !== 'object' || member === null) return undefined;
  const node = member as Schema;
  if (node.anyOf !== undefined) {
    if (Object.keys(node).some((key) => key !== 'anyOf' && !isAnnotation(key)) || !Array.isArray(node.anyOf)) return undefined;
    const inner = node.anyOf.map(scalarMatcher);
    return inner.every((matcher) => matcher !== undefined) ? (value) => inner.some((matches) => matches(value)) : undefined;
  }
  const shaping = Object.keys(node).filter((key) => !isAnnotation(key) && key !== 'type' && key !== 'const' && key !== 'maxLength');
  if (shaping.length > 0) return undefined;
  if (node.const !== undefined) {
    const constant = node.const;
    return typeof constant === 'object' && constant !== null ? undefined : (value) => value === constant;
  }
  switch (node.type) {
    case 'null':
      return (value) => value === null;
    case 'string': {
      // JSON Schema counts code points, never more than UTF-16 units: a string within the limit here is within it there.
      const max = typeof node.maxLength === 'number' ? node.maxLength : Infinity;
      return (value) => typeof value === 'string' && value.length <= max;
    }
    case 'number':
      return node.maxLength === undefined ? (value) => typeof value === 'number' && Number.isFinite(value) : undefined;
    case 'integer':
      return node.maxLength === undefined ? (value) => Number.isInteger(value) : undefined;
    case 'boolean':
      return node.maxLength === undefined ? (value) => typeof value === 'boolean' : undefined;
    default:
      return undefined;
  }
}

function isAnnotation(key: string): boolean {
  return key === 'description' || key === 'title' || key === 'examples' || key === 'example' || key === '$id' || key === 'deprecated' || key === 'readOnly' || key === 'writeOnly';
}

function inferredType(node: Schema): unknown {
  if (node.type !== undefined) return node.type;
  if (OBJECT_KEYWORDS.some((keyword) => keyword in node)) return 'object';
  if (ARRAY_KEYWORDS.some((keyword) => keyword in node)) return 'array';
  if (STRING_KEYWORDS.some((keyword) => keyword in node)) return 'string';
  if (NUMBER_KEYWORDS.some((keyword) => keyword in node)) return 'number';
  return undefined;
}

function bareProjection(node: Schema): Compiled {
  const type = inferredType(node);
  if (node.const !== undefined) {
    const constant = node.const;
    const nullable = Array.isArray(type) && type.includes('null');
    // The constant is written whatever the value: as it is only when the value is the constant.
    const isConstant = (value: unknown) => value === constant && (typeof constant !== 'object' || constant === null);
    return nullable
      ? { project: (value) => (value === null ? null : constant), isWrittenAsIs: (value) => value === null || isConstant(value) }
      : { project: () => constant, isWrittenAsIs: isConstant };
  }
  if (Array.isArray(type)) {
    // Only "T or null" for a scalar T, which fast-json-stringify checks null first.
    const others = type.filter((member) => member !== 'null');
    if (type.length !== 2 || others.length !== 1 || others[0] === 'object' || others[0] === 'array') notPlain();
    return orNull(singleType(node, others[0]));
  }
  return singleType(node, type);
}

/** A scalar written as it is when `accepts` says so, else not plain. */
function scalar(accepts: (value: unknown) => boolean): Compiled {
  return { project: (value) => (accepts(value) ? value : notPlain()), isWrittenAsIs: accepts };
}

const isString = (value: unknown) => typeof value === 'string';
const isNumber = (value: unknown) => typeof value === 'number' && !Number.isNaN(value);
const isBoolean = (value: unknown) => typeof value === 'boolean';

function singleType(node: Schema, type: unknown): Compiled {
  switch (type) {
    case undefined:
      return IDENTITY; // written with JSON.stringify by fast-json-stringify too
    case 'null':
      return { project: () => null, isWrittenAsIs: (value) => value === null };
    case 'string':
      return stringProjection(node.format);
    case 'integer':
      return scalar(Number.isInteger);
    case 'number':
      return scalar(isNumber);
    case 'boolean':
      return scalar(isBoolean);
    case 'object':
      return objectProjection(node);
    case 'array':
      return arrayProjection(node);
    default:
      return notPlain();
  }
}

function stringProjection(format: unknown): Compiled {
  if (format === 'unsafe') notPlain();
  if (format === 'date-time') {
    return {
      project: (value) => {
        if (typeof value === 'string') return value;
        // toISOString throws on an invalid date; the caller then falls back.
        if (value instanceof Date) return value.toISOString();
        return notPlain();
      },
      // A valid Date's toJSON is its toISOString, so JSON.stringify writes the same text.
      isWrittenAsIs: (value) => typeof value === 'string' || (value instanceof Date && Number.isFinite(value.getTime()) && value.toJSON === Date.prototype.toJSON),
    };
  }
  return scalar(isString);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

function hasPlainPrototype(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

interface PropertyPlan {
  key: string;
  project: Projection;
  isWrittenAsIs: ShapeCheck;
  required: boolean;
  fallback: unknown;
}

/** An array index as a key: objects list such keys first, whatever the order they were added in. */
function isIndexKey(key: string): boolean {
  return /^(0|[1-9][0-9]*)$/.test(key) && Number(key) < 4_294_967_295;
}

function objectProjection(node: Schema): Compiled {
  const properties = (node.properties ?? {}) as Record<string, unknown>;
  const required = Array.isArray(node.required) ? (node.required as string[]) : [];
  const keys = Object.keys(properties);
  const extras = extraPropertiesProjection(node, keys);
  if (required.some((key) => !keys.includes(key))) notPlain();

  if (keys.length === 0 && node.additionalProperties === true && node.patternProperties === undefined) {
    // A free-form object: every own enumerable property, as JSON.stringify writes it.
    return { project: (value) => (value === null ? {} : isPlainObject(value) ? value : notPlain()), isWrittenAsIs: isPlainObject };
  }

  // fast-json-stringify writes the required properties first, each group in schema order.
  const ordered = [...keys.filter((key) => required.includes(key)), ...keys.filter((key) => !required.includes(key))];
  const plans: PropertyPlan[] = ordered.map((key) => {
    if (key === '__proto__' || isIndexKey(key)) notPlain();
    const propertySchema = properties[key];
    const fallback = typeof propertySchema === 'object' && propertySchema !== null ? (propertySchema as Schema).default : undefined;
    const compiled = projectionOf(propertySchema);
    return { key, project: compiled.project, isWrittenAsIs: compiled.isWrittenAsIs, required: required.includes(key), fallback };
  });

  const project: Projection = (value) => {
    if (value === null) return {};
    if (!isPlainObject(value)) return notPlain();
    const out: Record<string, unknown> = {};
    for (const plan of plans) {
      const field = value[plan.key];
      if (field !== undefined) out[plan.key] = plan.project(field);
      else if (plan.fallback !== undefined) out[plan.key] = plan.fallback;
      else if (plan.required) notPlain();
    }
    if (extras) extras(value, out, plans.length > 0);
    return out;
  };

  const known = new Set(ordered);
  const extraIsWrittenAsIs = extraPropertiesCheck(node);
  /**
   * Whether the object's enumerable keys are the plans' keys in order (optional ones may be
   * absent), then any extra keys the schema lets through (written after the known ones), each
   * value written as it is.
   */
  const isWrittenAsIs: ShapeCheck = (value) => {
    // Only object literals: JSON.stringify skips what a prototype holds (getters), the projection reads it.
    if (!isPlainObject(value) || !hasPlainPrototype(value)) return false;
    let next = 0;
    let inExtras = false;
    for (const key in value) {
      const field = value[key];
      if (!known.has(key)) {
        if (!extraIsWrittenAsIs) return false;
        if (!inExtras) {
          for (; next < plans.length; next += 1) if (plans[next]!.required || plans[next]!.fallback !== undefined) return false;
          inExtras = true;
        }
        if (!extraIsWrittenAsIs(key, field)) return false;
        continue;
      }
      if (inExtras) return false;
      while (next < plans.length && plans[next]!.key !== key) {
        const skipped = plans[next]!;
        if (skipped.required || skipped.fallback !== undefined) return false;
        next += 1;
      }
      const plan = plans[next];
      if (plan === undefined) return false;
      if (field === undefined ? plan.required || plan.fallback !== undefined : !plan.isWrittenAsIs(field)) return false;
      next += 1;
    }
    for (; next < plans.length; next += 1) if (plans[next]!.required || plans[next]!.fallback !== undefined) return false;
    return true;
  };

  return { project, isWrittenAsIs };
}

type ExtrasProjection = (value: Record<string, unknown>, out: Record<string, unknown>, afterKnown: boolean) => void;

/** Properties beyond `properties`: those `patternProperties` or `additionalProperties` let through, after the known ones. */
function extraPropertiesProjection(node: Schema, known: readonly string[]): ExtrasProjection | undefined {
  const extras = extraKeySchemas(node);
  if (!extras) return undefined;
  const { patterns, rest } = extras;
  return (value, out, afterKnown) => {
    for (const key of Object.keys(value)) {
      if (known.includes(key)) continue;
      const field = value[key];
      if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
      // Such keys would be listed before the known properties, or set the prototype.
      if (key === '__proto__' || (afterKnown && isIndexKey(key))) notPlain();
      const pattern = patterns.find((candidate) => candidate.test.test(key));
      if (pattern) out[key] = pattern.compiled.project(field);
      else if (rest) out[key] = rest.project(field);
    }
  };
}

/**
 * Whether an extra key and its value are written as they are: a key the projection would keep
 * (`patternProperties` or `additionalProperties`), placed as JSON.stringify places it, with a
 * value of its schema's plain shape; undefined when the schema lets no extra key through.
 */
function extraPropertiesCheck(node: Schema): ((key: string, field: unknown) => boolean) | undefined {
  const extras = extraKeySchemas(node);
  if (!extras) return undefined;
  const { patterns, rest } = extras;
  return (key, field) => {
    // Skipped by both the projection and JSON.stringify.
    if (field === undefined || typeof field === 'function' || typeof field === 'symbol') return true;
    if (key === '__proto__' || isIndexKey(key)) return false;
    const pattern = patterns.find((candidate) => candidate.test.test(key));
    if (pattern) return pattern.compiled.isWrittenAsIs(field);
    return rest ? rest.isWrittenAsIs(field) : false;
  };
}

/**
 * The schemas of the keys an object lets through beyond `properties`: by key pattern
 * (`patternProperties`), then any other (`additionalProperties`); undefined when it lets none.
 */
function extraKeySchemas(node: Schema): { patterns: { test: RegExp; compiled: Compiled }[]; rest: Compiled | undefined } | undefined {
  const additional = node.additionalProperties;
  const patterns = Object.entries((node.patternProperties ?? {}) as Record<string, unknown>).map(([pattern, schema]) => ({
    test: new RegExp(pattern),
    compiled: projectionOf(schema),
  }));
  const rest = additional === undefined || additional === false ? undefined : additional === true ? IDENTITY : projectionOf(additional);
  return patterns.length === 0 && !rest ? undefined : { patterns, rest };
}

function arrayProjection(node: Schema): Compiled {
  const items = node.items ?? {};
  if (Array.isArray(items)) notPlain();
  const item = projectionOf(items);
  return {
    project: (value) => {
      if (value === null) return [];
      if (!Array.isArray(value)) return notPlain();
      const out = new Array<unknown>(value.length);
      for (let index = 0; index < value.length; index += 1) {
        const element: unknown = value[index];
        if (element === undefined) notPlain();
        out[index] = item.project(element);
      }
      return out;
    },
    isWrittenAsIs: (value) => {
      if (!Array.isArray(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
      for (let index = 0; index < value.length; index += 1) {
        const element: unknown = value[index];
        if (element === undefined || !item.isWrittenAsIs(element)) return false;
      }
      return true;
    },
  };
}
