import type { Mode } from '../../db/types.js';

/** What a request learns about the key it presented. */
export interface AuthenticatedKey {
  id: string;
  tenantId: string;
  mode: Mode;
  scopes: readonly string[];
  rateLimitPerMinute: number;
}

export interface KeyCacheOptions {
  /** Finds a key by the hash of its secret; undefined when unknown or revoked. */
  load: (keyHash: string) => Promise<AuthenticatedKey | undefined>;
  ttlMs?: number;
  /** Unknown hashes are remembered briefly so a flood of bad keys does not become a flood of queries. */
  negativeTtlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  key: AuthenticatedKey | undefined;
  expiresAt: number;
}

/**
 * Keys by secret hash, so a warm request authenticates without a database round trip.
 * Revocation evicts at once on this process; other processes learn of it from the
 * revocation watch, and the TTL bounds staleness even if that watch stalls.
 */
export class KeyCache {
  readonly #entries = new Map<string, Entry>();
  readonly #hashByKeyId = new Map<string, string>();
  readonly #inFlight = new Map<string, Promise<AuthenticatedKey | undefined>>();
  readonly #load: KeyCacheOptions['load'];
  readonly #ttlMs: number;
  readonly #negativeTtlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: KeyCacheOptions) {
    this.#load = options.load;
    this.#ttlMs = options.ttlMs ?? 60_000;
    this.#negativeTtlMs = options.negativeTtlMs ?? 5_000;
    this.#maxEntries = options.maxEntries ?? 50_000;
    this.#now = options.now ?? Date.now;
  }

  async resolve(keyHash: string): Promise<AuthenticatedKey | undefined> {
    const cached = this.#entries.get(keyHash);
    if (cached && cached.expiresAt > this.#now()) return cached.key;

    const pending = this.#inFlight.get(keyHash);
    if (pending) return pending;

    const loading = this.#load(keyHash)
      .then((key) => {
        this.#remember(keyHash, key);
        return key;
      })
      .finally(() => this.#inFlight.delete(keyHash));
    this.#inFlight.set(keyHash, loading);
    return loading;
  }

  evictKey(keyId: string): void {
    const hash = this.#hashByKeyId.get(keyId);
    if (hash === undefined) return;
    this.#entries.delete(hash);
    this.#hashByKeyId.delete(keyId);
  }

  #remember(keyHash: string, key: AuthenticatedKey | undefined): void {
    if (this.#entries.size >= this.#maxEntries) {
      // Maps iterate in insertion order: dropping the first entry drops the oldest.
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(keyHash, { key, expiresAt: this.#now() + (key ? this.#ttlMs : this.#negativeTtlMs) });
    if (key) this.#hashByKeyId.set(key.id, keyHash);
  }
}

/**
 * Polls for keys revoked recently and evicts them, so a DELETE served by another
 * process takes effect here within about one interval. The look-back window is wide
 * so that clock differences between processes cannot hide a revocation.
 */
export function watchRevocations(options: {
  cache: KeyCache;
  findRevokedSince: (since: Date) => Promise<string[]>;
  intervalMs?: number;
  lookBackMs?: number;
  onError?: (error: unknown) => void;
}): { stop(): void } {
  const intervalMs = options.intervalMs ?? 1_000;
  const lookBackMs = options.lookBackMs ?? 10 * 60_000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const tick = async () => {
    try {
      for (const keyId of await options.findRevokedSince(new Date(Date.now() - lookBackMs))) options.cache.evictKey(keyId);
    } catch (error) {
      options.onError?.(error);
    }
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs).unref();
  };
  // tick catches its own errors (reported to onError), so its promise is not awaited.
  timer = setTimeout(() => void tick(), intervalMs).unref();

  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
