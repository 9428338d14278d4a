import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';
import { ManualClock } from './clock.js';
import { normalizeCurrency } from './currency.js';
import { containsPattern } from './search.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('normalizeCurrency', () => {
  it('accepts ISO 4217 codes in any case and returns them upper-case', () => {
    expect(normalizeCurrency('usd')).toBe('USD');
    expect(normalizeCurrency(' Eur ')).toBe('EUR');
    expect(normalizeCurrency('JPY')).toBe('JPY');
  });

  it.each(['XYZ', 'US', 'USDD', '', '12$'])('rejects %j', (code) => {
    expect(normalizeCurrency(code)).toBeUndefined();
  });
});

describe('ManualClock', () => {
  it('advances, freezes and resumes without jumping back', () => {
    const clock = new ManualClock();
    clock.freeze(new Date('2026-01-01T00:00:00.000Z'));
    clock.advance(1500);
    expect(clock.now().toISOString()).toBe('2026-01-01T00:00:01.500Z');
    clock.resume();
    expect(clock.now().getTime()).toBeGreaterThanOrEqual(Date.parse('2026-01-01T00:00:01.500Z'));
    expect(clock.now().getTime()).toBeLessThan(Date.parse('2026-01-01T00:00:02.500Z'));
  });
});

describe('containsPattern', () => {
  it('escapes LIKE wildcards', () => {
    expect(containsPattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });
});

describe('slugs', () => {
  it('makes URL slugs from free text', async () => {
    const { slugify } = await import('./slug.js');
    expect(slugify('  Hello, Wörld! 2026 ')).toBe('hello-world-2026');
    expect(slugify('Crème brûlée -- recipe')).toBe('creme-brulee-recipe');
    expect(slugify('!!!')).toBe('untitled');
    expect(slugify('x'.repeat(300))).toHaveLength(120);
  });

  it('finds the first free numbered variant', async () => {
    const { firstFreeSlug } = await import('./slug.js');
    const taken = new Set(['post', 'post-2']);
    expect(await firstFreeSlug('post', async (slug) => taken.has(slug))).toBe('post-3');
    expect(await firstFreeSlug('fresh', async (slug) => taken.has(slug))).toBe('fresh');
  });
});
