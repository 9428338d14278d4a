import type { FieldDefinition } from './fields.js';

/**
 * The CSV layout of the export: `id,submitted_at,read`, then one column per field key in
 * form order; RFC 4180 quoting (commas, quotes, CR/LF) with CRLF line ends; cells that a
 * spreadsheet would run as a formula are neutralised with a leading apostrophe.
 */

/** How multiselect answers are joined into one cell. */
export const MULTI_VALUE_SEPARATOR = '; ';

// OWASP's list (= + - @ tab CR), plus LF and the full-width = + - @ that some spreadsheets also accept.
const FORMULA_START = /^[=+\-@\t\r\n\uFF1D\uFF0B\uFF0D\uFF20]/;

/** Prefixes an apostrophe to a text cell a spreadsheet would treat as a formula. */
export function neutraliseFormula(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

/**
 * One answer as a cell. JSON numbers stay plain (a spreadsheet reads -5 as a number and it
 * cannot carry a formula); every text cell, including joined multiselect values, is neutralised.
 * Answers stored before a field changed type are shown as faithfully as their JSON allows.
 */
export function cellOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return neutraliseFormula(value);
  if (Array.isArray(value)) return neutraliseFormula(value.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))).join(MULTI_VALUE_SEPARATOR));
  return neutraliseFormula(JSON.stringify(value));
}

/**
 * One RFC 4180 field: quoted when it holds a comma, a double quote, CR or LF, with quotes
 * doubled. (csv-stringify, for comparison, leaves a lone CR or LF unquoted when the record
 * delimiter is CRLF, which breaks readers; the rule is short enough to own.)
 */
export function quoteField(cell: string): string {
  return /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}

export function headerRow(fields: FieldDefinition[]): string {
  return ['id', 'submitted_at', 'read', ...fields.map((field) => field.key)].map(quoteField).join(',') + '\r\n';
}

export interface CsvSubmission {
  id: string;
  /** ISO 8601 with milliseconds. */
  submitted_at: string;
  read: boolean;
  data: Record<string, unknown>;
}

/** One submission as a CSV record, CRLF-terminated. */
export function csvRow(fields: FieldDefinition[], submission: CsvSubmission): string {
  let line = `${submission.id},${submission.submitted_at},${submission.read ? 'true' : 'false'}`;
  for (const field of fields) {
    line += `,${quoteField(cellOf(Object.hasOwn(submission.data, field.key) ? submission.data[field.key] : undefined))}`;
  }
  return `${line}\r\n`;
}
