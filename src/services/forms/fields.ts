import type { ErrorDetail } from '../../platform/errors/app-error.js';
import { checkPattern } from './pattern-safety.js';

/**
 * The rules of form fields: which settings each type takes (checked when a form is saved)
 * and what a submitted value of each type must look like (checked on every submission).
 * Pure functions; the service turns their details into a 400 validation_failed.
 */

export const FIELD_TYPES = ['text', 'textarea', 'email', 'number', 'phone', 'url', 'date', 'select', 'multiselect', 'checkbox', 'hidden'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const MAX_FIELDS = 100;
export const FIELD_KEY_PATTERN = '^[a-z][a-z0-9_]{0,63}$';
/** The CSV export's own columns come first; a field may not take their names. */
export const RESERVED_FIELD_KEYS: readonly string[] = ['id', 'submitted_at', 'read'];

export interface FieldOption {
  value: string;
  label: string;
}

/** A field as stored and returned: optional settings are absent when not set. */
export interface FieldDefinition {
  key: string;
  label: string;
  type: FieldType;
  required: boolean;
  options?: FieldOption[];
  min?: number | string;
  max?: number | string;
  max_length?: number;
  pattern?: string;
}

/** A field as sent on create/PATCH (before defaults). */
export interface FieldInput {
  key: string;
  label: string;
  type: FieldType;
  required?: boolean;
  options?: FieldOption[];
  min?: number | string;
  max?: number | string;
  max_length?: number;
  pattern?: string;
}

/** Text kinds: string values with a length limit (default and ceiling) and an optional pattern. */
export const STRING_LIMITS: Partial<Record<FieldType, { default: number; ceiling: number }>> = {
  text: { default: 1_000, ceiling: 10_000 },
  textarea: { default: 10_000, ceiling: 100_000 },
  hidden: { default: 1_000, ceiling: 10_000 },
  email: { default: 320, ceiling: 320 },
  phone: { default: 40, ceiling: 40 },
  url: { default: 2_048, ceiling: 2_048 },
};
const BOUNDED_TYPES: readonly FieldType[] = ['number', 'date', 'multiselect'];
const OPTION_TYPES: readonly FieldType[] = ['select', 'multiselect'];

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
// The same email check the rest of the API uses (ajv-formats' "email").
const EMAIL_PATTERN = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;
// Lenient, as the CRM's phone: digits with an optional leading +, spaces, dots, dashes, slashes, brackets.
const PHONE_PATTERN = /^\+?[0-9 ()./-]+$/;
const MIN_PHONE_DIGITS = 3;

/** Checks field definitions; returns them normalised (trimmed labels, `required` set) and the problems found. */
export function validateFieldDefinitions(inputs: FieldInput[]): { fields: FieldDefinition[]; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  const seenKeys = new Set<string>();
  const fields = inputs.map((input, index): FieldDefinition => {
    const at = (name: string) => `fields[${index}].${name}`;
    const problem = (name: string, code: string, message: string) => details.push({ path: at(name), code, message: `${at(name)} ${message}` });
    const { type } = input;

    if (RESERVED_FIELD_KEYS.includes(input.key)) problem('key', 'invalid_value', `"${input.key}" is reserved for the CSV export's own columns.`);
    else if (seenKeys.has(input.key)) problem('key', 'invalid_value', `"${input.key}" is used by an earlier field; keys must be unique.`);
    seenKeys.add(input.key);

    if (OPTION_TYPES.includes(type)) {
      if (input.options === undefined) problem('options', 'required', `is required for ${type} fields.`);
      else {
        const values = new Set<string>();
        input.options.forEach((option, optionIndex) => {
          if (values.has(option.value)) {
            details.push({
              path: `${at('options')}[${optionIndex}].value`,
              code: 'invalid_value',
              message: `${at('options')}[${optionIndex}].value "${option.value}" is used by an earlier option; values must be unique.`,
            });
          }
          values.add(option.value);
        });
      }
    } else if (input.options !== undefined) {
      problem('options', 'invalid', `applies only to select and multiselect fields.`);
    }

    const limits = STRING_LIMITS[type];
    if (input.max_length !== undefined) {
      if (!limits) problem('max_length', 'invalid', 'applies only to text, textarea, email, phone, url and hidden fields.');
      else if (input.max_length > limits.ceiling) problem('max_length', 'out_of_range', `must be at most ${limits.ceiling} for ${type} fields.`);
    }
    if (input.pattern !== undefined) {
      if (!limits) problem('pattern', 'invalid', 'applies only to text, textarea, email, phone, url and hidden fields.');
      else {
        const verdict = checkPattern(input.pattern, Math.min(input.max_length ?? limits.default, limits.ceiling));
        if (!verdict.ok) problem('pattern', 'invalid_value', verdict.reason + '.');
      }
    }

    for (const bound of ['min', 'max'] as const) {
      const value = input[bound];
      if (value === undefined) continue;
      if (!BOUNDED_TYPES.includes(type)) problem(bound, 'invalid', 'applies only to number, date and multiselect fields.');
      else if (type === 'number' && (typeof value !== 'number' || !Number.isFinite(value))) problem(bound, 'invalid_type', 'must be a number for number fields.');
      else if (type === 'date' && (typeof value !== 'string' || !isDate(value))) problem(bound, 'invalid_format', 'must be a date (YYYY-MM-DD) for date fields.');
      else if (type === 'multiselect' && (typeof value !== 'number' || !Number.isInteger(value) || value < 0)) {
        problem(bound, 'invalid_type', 'must be a whole number of selections (0 or more) for multiselect fields.');
      }
    }
    if (!details.some((detail) => detail.path === at('min') || detail.path === at('max')) && input.min !== undefined && input.max !== undefined) {
      if ((input.min as number) > (input.max as number)) problem('max', 'out_of_range', 'must not be less than min.');
    }
    if (type === 'multiselect' && input.options && typeof input.min === 'number' && input.min > input.options.length) {
      problem('min', 'out_of_range', `asks for more selections than there are options (${input.options.length}).`);
    }

    const field: FieldDefinition = { key: input.key, label: input.label.trim(), type, required: input.required ?? false };
    if (input.options !== undefined) field.options = input.options.map((option) => ({ value: option.value, label: option.label.trim() }));
    if (input.min !== undefined) field.min = input.min;
    if (input.max !== undefined) field.max = input.max;
    if (input.max_length !== undefined) field.max_length = input.max_length;
    if (input.pattern !== undefined) field.pattern = input.pattern;
    return field;
  });
  return { fields, details };
}

const MAX_PATH_KEY_LENGTH = 100;

/**
 * Checks submitted values against the fields: one detail per field at most (the first
 * problem), then one per unknown key. Returns the values to store: answers only,
 * with surrounding spaces trimmed for email, phone, url and date.
 */
export function validateSubmissionData(fields: FieldDefinition[], data: Record<string, unknown>): { values: Record<string, unknown>; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  const values: Record<string, unknown> = {};
  const known = new Set<string>();

  for (const field of fields) {
    known.add(field.key);
    const path = `data.${field.key}`;
    const raw = Object.hasOwn(data, field.key) ? data[field.key] : undefined;
    if (isMissing(raw) || (field.type === 'checkbox' && field.required && raw === false)) {
      if (field.required) {
        details.push({ path, code: 'required', message: field.type === 'checkbox' ? `${path} must be checked.` : `${path} is required.` });
      }
      continue;
    }
    const outcome = checkValue(field, raw);
    if ('problem' in outcome) details.push({ path, code: outcome.problem, message: `${path} ${outcome.message}` });
    else values[field.key] = outcome.value;
  }

  for (const key of Object.keys(data)) {
    if (known.has(key)) continue;
    const shown = key.length > MAX_PATH_KEY_LENGTH ? `${key.slice(0, MAX_PATH_KEY_LENGTH)}…` : key;
    details.push({ path: `data.${shown}`, code: 'unknown_field', message: `data.${shown} is not a field of this form.` });
  }
  return { values, details };
}

/** Missing, null, an empty (or all-space) string and an empty array are "no answer". */
function isMissing(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);
}

type Checked = { value: unknown } | { problem: string; message: string };

function checkValue(field: FieldDefinition, raw: unknown): Checked {
  switch (field.type) {
    case 'text':
    case 'textarea':
    case 'hidden':
      return typeof raw === 'string' ? checkString(field, raw) : wrongType('a string');
    case 'email': {
      if (typeof raw !== 'string') return wrongType('a string');
      const value = raw.trim();
      return checkString(field, value, () => EMAIL_PATTERN.test(value), 'a valid email address');
    }
    case 'phone': {
      if (typeof raw !== 'string') return wrongType('a string');
      const value = raw.trim();
      const digits = value.replace(/\D/g, '').length;
      return checkString(field, value, () => PHONE_PATTERN.test(value) && digits >= MIN_PHONE_DIGITS, 'a phone number (digits, optionally + ( ) . / - and spaces)');
    }
    case 'url': {
      if (typeof raw !== 'string') return wrongType('a string');
      const value = raw.trim();
      return checkString(field, value, () => isHttpUrl(value), 'an absolute http or https URL');
    }
    case 'number': {
      if (typeof raw !== 'number' || !Number.isFinite(raw)) return wrongType('a number');
      if (typeof field.min === 'number' && raw < field.min) return { problem: 'out_of_range', message: `must be at least ${field.min}.` };
      if (typeof field.max === 'number' && raw > field.max) return { problem: 'out_of_range', message: `must be at most ${field.max}.` };
      return { value: raw };
    }
    case 'date': {
      if (typeof raw !== 'string') return wrongType('a date string (YYYY-MM-DD)');
      const value = raw.trim();
      if (!isDate(value)) return { problem: 'invalid_format', message: 'must be a date as YYYY-MM-DD.' };
      if (typeof field.min === 'string' && value < field.min) return { problem: 'out_of_range', message: `must be on or after ${field.min}.` };
      if (typeof field.max === 'string' && value > field.max) return { problem: 'out_of_range', message: `must be on or before ${field.max}.` };
      return { value };
    }
    case 'select': {
      if (typeof raw !== 'string') return wrongType('a string (one option value)');
      if (!optionValues(field).has(raw)) return { problem: 'invalid_value', message: `must be one of: ${listOptions(field)}.` };
      return { value: raw };
    }
    case 'multiselect': {
      if (!Array.isArray(raw) || raw.some((item) => typeof item !== 'string')) return wrongType('an array of option values (strings)');
      const allowed = optionValues(field);
      const chosen = raw as string[];
      if (chosen.some((item) => !allowed.has(item))) return { problem: 'invalid_value', message: `may contain only: ${listOptions(field)}.` };
      if (new Set(chosen).size !== chosen.length) return { problem: 'invalid_value', message: 'must not repeat a value.' };
      if (typeof field.min === 'number' && chosen.length < field.min) return { problem: 'invalid_length', message: `needs at least ${field.min} selections.` };
      if (typeof field.max === 'number' && chosen.length > field.max) return { problem: 'invalid_length', message: `allows at most ${field.max} selections.` };
      return { value: chosen };
    }
    case 'checkbox':
      return typeof raw === 'boolean' ? { value: raw } : wrongType('true or false');
  }
}

function checkString(field: FieldDefinition, value: string, isWellFormed?: () => boolean, wellFormed?: string): Checked {
  const limit = maxLengthOf(field);
  if (value.length > limit) return { problem: 'invalid_length', message: `must be at most ${limit} characters.` };
  if (isWellFormed && !isWellFormed()) return { problem: 'invalid_format', message: `must be ${wellFormed}.` };
  if (field.pattern !== undefined && !compiledPattern(field.pattern).test(value)) {
    return { problem: 'invalid_format', message: 'does not match the format this form asks for.' };
  }
  return { value };
}

function maxLengthOf(field: FieldDefinition): number {
  const limits = STRING_LIMITS[field.type]!;
  return Math.min(field.max_length ?? limits.default, limits.ceiling);
}

function wrongType(expected: string): Checked {
  return { problem: 'invalid_type', message: `must be ${expected}.` };
}

function optionValues(field: FieldDefinition): Set<string> {
  return new Set((field.options ?? []).map((option) => option.value));
}

function listOptions(field: FieldDefinition): string {
  const values = (field.options ?? []).map((option) => option.value);
  const shown = values.slice(0, 20).join(', ');
  return values.length > 20 ? `${shown}, … (${values.length} options)` : shown;
}

export function isDate(value: string): boolean {
  const match = DATE_PATTERN.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function isHttpUrl(value: string): boolean {
  if (/\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const patternCache = new Map<string, RegExp>();
const PATTERN_CACHE_SIZE = 500;

/** The whole value must match, as with HTML's pattern attribute. */
function compiledPattern(pattern: string): RegExp {
  let compiled = patternCache.get(pattern);
  if (!compiled) {
    if (patternCache.size >= PATTERN_CACHE_SIZE) patternCache.clear();
    compiled = new RegExp(`^(?:${pattern})$`, 'u');
    patternCache.set(pattern, compiled);
  }
  return compiled;
}
