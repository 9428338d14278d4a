import { describe, expect, it, vi } from 'vitest';
import { generateApiKey, hashApiKey, looksLikeApiKey } from './api-keys.js';
import { KeyCache, type AuthenticatedKey } from './key-cache.js';
import { grantsScope, isValidScope } from './scopes.js';

describe('scopes', () => {
  it.each([
    ['*', 'service.crm.view', true],
    ['service.crm.*', 'service.crm.view', true],
    ['service.forms.*', 'service.forms.submissions.manage', true],
    ['service.crm.view', 'service.crm.view', true],
    ['service.crm.manage', 'service.crm.view', false],
    ['service.forms.*', 'service.crm.view', false],
    ['service.form.*', 'service.forms.view', false],
    ['service.payments.links.*', 'service.payments.links.read', true],
    ['service.payments.links.*', 'service.payments.checkout.create', false],
  ])('%s grants %s: %s', (held, needed, expected) => {
    expect(grantsScope([held], needed)).toBe(expected);
  });

  it.each(['*', 'service.crm.view', 'service.crm.*', 'service.payments.checkout.create', 'service.customer-auth.manage'])('accepts %s', (scope) => {
    expect(isValidScope(scope)).toBe(true);
  });

  it.each(['', 'service', 'service.crm', 'service.unknown.view', 'crm.view', 'service.crm.View', 'service.crm.view.', 'service.*', '**'])('rejects %j', (scope) => {
    expect(isValidScope(scope)).toBe(false);
  });
});

describe('API key secrets', () => {
  it('are sk_<mode>_ plus 32 base62 characters, different every time', () => {
    const one = generateApiKey('test');
    const two = generateApiKey('live');
    expect(one.secret).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(two.secret).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    expect(one.secret).not.toBe(generateApiKey('test').secret);
    expect(one.prefix).toBe(one.secret.slice(0, 12));
    expect(one.hash).toBe(hashApiKey(one.secret));
    expect(one.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('recognises only the API key format', () => {
    expect(looksLikeApiKey(generateApiKey('test').secret)).toBe(true);
    expect(looksLikeApiKey('sk_test_short')).toBe(false);
    expect(looksLikeApiKey(`sk_prod_${'a'.repeat(32)}`)).toBe(false);
    expect(looksLikeApiKey(`sk_test_${'a'.repeat(32)}x`)).toBe(false);
  });
});

describe('KeyCache', () => {
  const key: AuthenticatedKey = { id: 'k1', tenantId: 't1', mode: 'test', scopes: ['*'], rateLimitPerMinute: 60 };

  it('loads once while fresh, and coalesces concurrent misses', async () => {
    const load = vi.fn(async () => key);
    const cache = new KeyCache({ load });
    await Promise.all([cache.resolve('h'), cache.resolve('h'), cache.resolve('h')]);
    await cache.resolve('h');
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('reloads after the TTL and after eviction', async () => {
    let now = 0;
    const load = vi.fn(async () => key);
    const cache = new KeyCache({ load, ttlMs: 1000, now: () => now });
    await cache.resolve('h');
    now = 1001;
    await cache.resolve('h');
    expect(load).toHaveBeenCalledTimes(2);
    cache.evictKey('k1');
    await cache.resolve('h');
    expect(load).toHaveBeenCalledTimes(3);
  });

  it('remembers unknown hashes only briefly', async () => {
    let now = 0;
    const load = vi.fn(async () => undefined);
    const cache = new KeyCache({ load, negativeTtlMs: 100, now: () => now });
    expect(await cache.resolve('nope')).toBeUndefined();
    expect(await cache.resolve('nope')).toBeUndefined();
    expect(load).toHaveBeenCalledTimes(1);
    now = 101;
    await cache.resolve('nope');
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('stays bounded', async () => {
    const load = vi.fn(async () => undefined);
    const bounded = new KeyCache({ load, maxEntries: 2 });
    await bounded.resolve('a');
    await bounded.resolve('b');
    await bounded.resolve('c'); // drops a
    await bounded.resolve('a');
    expect(load).toHaveBeenCalledTimes(4);
  });
});
