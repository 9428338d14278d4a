import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';

/** Checks `Authorization: Bearer <ADMIN_TOKEN>` in constant time (digests make the lengths equal). */
export function createAdminTokenCheck(adminToken: string) {
  const expected = createHash('sha256').update(adminToken).digest();
  return function checkAdminToken(request: FastifyRequest): void {
    const token = /^Bearer +(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
    const presented = createHash('sha256').update(token).digest();
    if (!token || !timingSafeEqual(presented, expected)) {
      throw new AppError('unauthorized', 'Send the operator token as Authorization: Bearer <ADMIN_TOKEN>.');
    }
  };
}
