import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../errors/app-error.js';
import { ErrorRef } from './schemas.js';
import { sendError } from '../errors/handler.js';
import type { Draining } from './draining.js';

const Status = Type.Object({ status: Type.String({ maxLength: 32 }) }, { additionalProperties: false });

/**
 * Probes without authentication: /healthz says the process runs, /readyz that it takes new
 * work (not shutting down) and the database answers.
 */
export function healthRoutes({ ping, draining }: { ping: () => Promise<void>; draining: Draining }) {
  return async function registerHealthRoutes(app: FastifyInstance): Promise<void> {
    app.get('/healthz', {
      schema: { operationId: 'healthz', summary: 'Liveness: the process is running', tags: ['Operations'], security: [], response: { 200: Status } },
      handler: async () => ({ status: 'ok' }),
    });

    app.get('/readyz', {
      schema: {
        operationId: 'readyz',
        summary: 'Readiness: not shutting down, and the database answers',
        tags: ['Operations'],
        security: [],
        response: { 200: Status, 503: { ...ErrorRef, description: 'Not ready: shutting down, or the database does not answer (service_unavailable).' } },
      },
      handler: async (request, reply) => {
        // Expected during every deploy: answered without an error log line.
        if (draining.active) return sendError(reply, new AppError('service_unavailable', 'The server is shutting down.', [], { 'Retry-After': '1' }));
        try {
          await ping();
        } catch (error) {
          request.log.warn({ err: error }, 'readiness check failed');
          throw new AppError('service_unavailable', 'The database is not reachable.');
        }
        return { status: 'ready' };
      },
    });
  };
}
