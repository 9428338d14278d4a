import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest, preParsingHookHandler } from 'fastify';
import { AppError } from '../errors/app-error.js';

const BYTE_ORDER_MARK = 0xfeff;

/**
 * The one JSON body parser. It reads raw bytes so that invalid UTF-8 is refused instead of
 * being decoded into replacement characters (which would silently store something other
 * than what the caller sent). Prototype keys are refused later, with the other unsafe
 * input, by the input guard (`input-guard.ts`). Fastify still enforces the 1 MiB limit
 * (413) while reading, and other content types still get 415.
 */
export function installJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request: FastifyRequest, raw: Buffer, done) => {
    try {
      done(null, parseJsonBody(request, raw));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

function parseJsonBody(request: FastifyRequest, raw: Buffer): unknown {
  if (raw.length === 0) {
    // An empty body is no body, unless the operation needs one.
    if (request.routeOptions.config?.bodyPolicy === 'required') {
      throw new AppError('invalid_json', 'Content-Type is application/json but the body is empty.');
    }
    return undefined;
  }
  if (!isUtf8(raw)) throw new AppError('invalid_json', 'The body is not valid UTF-8.');
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === BYTE_ORDER_MARK) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('invalid_json', 'The body is not valid JSON.');
  }
}

/**
 * Operations whose body may be omitted are often called without a Content-Type; a body
 * sent that way (typically `{}`) is read as JSON rather than refused with 415.
 */
export const readUntypedBodyAsJson: preParsingHookHandler = (request, _reply, payload, done) => {
  const headers = request.raw.headers;
  const hasBody = headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
  if (hasBody && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  done(null, payload);
};
