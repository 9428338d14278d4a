import { ERROR_STATUS, type ErrorCode } from './codes.js';

/** One entry of `error.details`: which input, what kind of problem, in words. */
/** Longest message, or detail path or message, in an error reply. */
export const MAX_ERROR_TEXT = 1000;
/** Most details in an error reply; a request with more problems hears of the first ones. */
export const MAX_ERROR_DETAILS = 100;

export interface ErrorDetail {
  path: string;
  code: string;
  message: string;
  [extra: string]: unknown;
}

/** The only error type business code throws; the error handler turns it into the reply. */
export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }

  /** The name Fastify's own error handlers read, for scopes with a handler of their own (the hosted pages). */
  get statusCode(): number {
    return this.status;
  }
}

export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found.`);
}

/** 400 validation_failed with the given details: the one way business rules refuse input. */
export function validationFailed(details: ErrorDetail[], message = 'The request is not valid; see details.'): AppError {
  return new AppError('validation_failed', message, details);
}

/** 400 validation_failed about one field; its message is also the error's message. */
export function invalidField(path: string, code: string, message: string, extra: Record<string, unknown> = {}): AppError {
  return validationFailed([{ ...extra, path, code, message }], message);
}
