const MAX_SLUG_LENGTH = 120;

/** URL slug from free text: lower-case ASCII letters, digits and single hyphens. */
export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/-+$/g, '');
  return slug || 'untitled';
}

/** The pattern a slug sent by a client must match. */
export const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';

/**
 * What every candidate of `firstFreeSlug(base)` starts with: a base at the length limit is cut
 * to make room for its number (`eee…e-2`), so the numbered candidates need not start with it.
 */
export function slugCandidatesPrefix(base: string): string {
  return base.slice(0, MAX_SLUG_LENGTH - 11);
}

/** `base`, or `base-2`, `base-3`, … : the first candidate `isTaken` says is free. */
export async function firstFreeSlug(base: string, isTaken: (slug: string) => Promise<boolean>): Promise<string> {
  if (!(await isTaken(base))) return base;
  for (let n = 2; ; n += 1) {
    const candidate = `${base.slice(0, MAX_SLUG_LENGTH - String(n).length - 1)}-${n}`;
    if (!(await isTaken(candidate))) return candidate;
  }
}
