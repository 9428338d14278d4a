import type { FastifyRequest } from 'fastify';
import type { RequestContext } from '../context.js';

/** The service-layer view of an authenticated request. */
export function requestContext(request: FastifyRequest): RequestContext {
  const auth = request.auth;
  if (!auth) throw new Error(`Route ${request.routeOptions.url} reads the caller but declares no scope.`);
  return {
    tenantId: auth.tenantId,
    mode: auth.mode,
    keyId: auth.id,
    scopes: auth.scopes,
    requestId: request.id,
    now: request.startedAt,
  };
}
