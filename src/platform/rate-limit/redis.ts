import { Redis } from 'ioredis';
import { UnreachableError } from '../../lib/connection-errors.js';

/**
 * Connects to REDIS_URL at start and fails with an UnreachableError when it cannot: a
 * misconfigured URL is found at once, not later as silently per-process rate limits. Once
 * connected, a lost connection is retried in the background and the rate limiter falls back
 * per process meanwhile (src/platform/rate-limit/enforce.ts).
 */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 500, connectTimeout: 10_000 });
  // connect() only rejects with "Connection is closed."; the error event says why.
  let firstError: unknown;
  redis.on('error', (error: unknown) => {
    firstError ??= error;
  });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new UnreachableError('Redis', url, firstError ?? error);
  }
  return redis;
}
