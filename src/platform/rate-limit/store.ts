import type { Redis } from 'ioredis';

export interface WindowCount {
  /** Requests counted in the current window, this one included. */
  count: number;
  /** When the current window ends, in Unix seconds. */
  resetAt: number;
}

/** Counts requests per key in fixed one-minute windows aligned to the clock. */
export interface RateLimitStore {
  hit(keyId: string, nowMs: number): Promise<WindowCount>;
  close(): Promise<void>;
}

const WINDOW_SECONDS = 60;

function windowOf(nowMs: number): { start: number; resetAt: number } {
  const start = Math.floor(nowMs / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;
  return { start, resetAt: start + WINDOW_SECONDS };
}

/** Counts in this process only: right for a single API process. */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #windows = new Map<string, { start: number; count: number }>();

  async hit(keyId: string, nowMs: number): Promise<WindowCount> {
    return this.hitNow(keyId, nowMs);
  }

  hitNow(keyId: string, nowMs: number): WindowCount {
    const { start, resetAt } = windowOf(nowMs);
    const current = this.#windows.get(keyId);
    if (current && current.start === start) {
      current.count += 1;
      return { count: current.count, resetAt };
    }
    this.#windows.set(keyId, { start, count: 1 });
    return { count: 1, resetAt };
  }

  async close(): Promise<void> {}
}

const INCREMENT_WITH_EXPIRY = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

/** Counts in Redis, so every API process sharing it enforces one limit per key. */
export class RedisRateLimitStore implements RateLimitStore {
  constructor(private readonly redis: Redis) {}

  async hit(keyId: string, nowMs: number): Promise<WindowCount> {
    const { start, resetAt } = windowOf(nowMs);
    // Keep the counter a little past its window so late requests on a skewed clock still count.
    const ttlMs = (resetAt - nowMs / 1000 + 5) * 1000;
    const count = (await this.redis.eval(INCREMENT_WITH_EXPIRY, 1, `ratelimit:${keyId}:${start}`, Math.ceil(ttlMs))) as number;
    return { count, resetAt };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
