/** Trimmed text; blank becomes null; undefined stays undefined (a field that was not sent). */
export function cleanText(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}
