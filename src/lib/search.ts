/** A LIKE/ILIKE pattern matching `term` anywhere, with the wildcards in `term` taken literally. */
export function containsPattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}
