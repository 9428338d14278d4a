import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { hashApiKey, looksLikeApiKey } from './api-keys.js';
import type { AuthenticatedKey, KeyCache } from './key-cache.js';
import { grantsScope } from './scopes.js';

const BEARER = /^Bearer +(\S+)\s*$/i;

/** Resolves the request's `Authorization: Bearer <API_KEY>` to a live key, or throws 401. */
export async function authenticate(request: FastifyRequest, cache: KeyCache): Promise<AuthenticatedKey> {
  const header = request.headers.authorization;
  if (!header) throw unauthorized('Send your API key as Authorization: Bearer <API_KEY>.');
  const token = BEARER.exec(header)?.[1];
  // Anything but an sk_test_/sk_live_ key (a customer-auth session token, say) is refused here.
  if (!token || !looksLikeApiKey(token)) throw unauthorized('The Authorization header does not hold an API key.');
  const key = await cache.resolve(hashApiKey(token));
  if (!key) throw unauthorized('The API key is unknown or has been revoked.');
  return key;
}

export function authorize(key: AuthenticatedKey, scope: string): void {
  if (!grantsScope(key.scopes, scope)) {
    throw new AppError('insufficient_scope', `This API key lacks the scope ${scope}.`, [{ path: 'scope', code: 'missing_scope', message: `Requires scope ${scope}.`, scope }]);
  }
}

function unauthorized(message: string): AppError {
  return new AppError('unauthorized', message);
}
