import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { AppError } from '../errors/app-error.js';
import type { AuthenticatedKey } from '../auth/key-cache.js';
import { MemoryRateLimitStore, type RateLimitStore, type WindowCount } from './store.js';

/**
 * Counts the request against its key's per-minute limit, sets the X-RateLimit-* headers,
 * and throws 429 with Retry-After when over. If the shared store fails, counting falls
 * back to this process rather than refusing traffic.
 */
export function createRateLimiter(store: RateLimitStore | undefined, log: FastifyBaseLogger) {
  const local = new MemoryRateLimitStore();
  let lastWarningAt = 0;

  const count = async (keyId: string, nowMs: number): Promise<WindowCount> => {
    if (!store) return local.hitNow(keyId, nowMs);
    try {
      return await store.hit(keyId, nowMs);
    } catch (error) {
      if (nowMs - lastWarningAt > 60_000) {
        lastWarningAt = nowMs;
        log.warn({ err: error }, 'shared rate-limit store unavailable; counting per process');
      }
      return local.hitNow(keyId, nowMs);
    }
  };

  return async function enforceRateLimit(key: AuthenticatedKey, reply: FastifyReply, nowMs: number): Promise<void> {
    const { count: used, resetAt } = await count(key.id, nowMs);
    const limit = key.rateLimitPerMinute;
    reply.header('X-RateLimit-Limit', limit);
    reply.header('X-RateLimit-Remaining', Math.max(0, limit - used));
    reply.header('X-RateLimit-Reset', resetAt);
    if (used > limit) {
      const retryAfter = Math.max(1, Math.ceil(resetAt - nowMs / 1000));
      throw new AppError('rate_limited', `Rate limit of ${limit} requests per minute exceeded; retry in ${retryAfter} s.`, [], {
        'Retry-After': String(retryAfter),
      });
    }
  };
}
