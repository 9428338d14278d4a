import { Ajv, type Options, type ValidateFunction } from 'ajv';
import { default as addFormatsModule } from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { normalizeCurrency } from '../../lib/currency.js';
import { UUID_PATTERN } from '../../lib/ids.js';
import { CURRENCY_FORMAT, INT64_ID_FORMAT, isInt64Id } from './schemas.js';

// ajv-formats is CommonJS: under NodeNext its function is the `default` of the module object.
const addFormats = addFormatsModule.default;

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, removeAdditional: false, ...options });
  addFormats(ajv);
  ajv.addFormat(CURRENCY_FORMAT, { type: 'string', validate: (code: string) => normalizeCurrency(code) !== undefined });
  ajv.addFormat(INT64_ID_FORMAT, { type: 'string', validate: isInt64Id });
  // ajv-formats' uuid also takes a `urn:uuid:` prefix, which PostgreSQL's uuid type refuses.
  ajv.addFormat('uuid', UUID_PATTERN);
  return ajv;
}

/**
 * JSON bodies are validated as sent: no type coercion, so `null` or `"12"` never
 * silently become `""` or `12`. Query strings, path params and headers arrive as
 * text, so there numbers and booleans are coerced.
 */
export function installValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv({ coerceTypes: false });
  const textAjv = makeAjv({ coerceTypes: 'array' });
  // JSON is the only body the public API takes; anything else is answered 415.
  app.removeContentTypeParser('text/plain');
  const compiled = new Map<string, ValidateFunction>();
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    // Routes repeat the same schemas (ids in paths, list queries); one validator serves them all.
    const key = `${ajv === bodyAjv ? 'body' : 'text'}:${JSON.stringify(schema)}`;
    let validate = compiled.get(key);
    if (!validate) compiled.set(key, (validate = ajv.compile(schema)));
    return validate;
  });
}
