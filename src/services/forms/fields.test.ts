import { describe, expect, it } from 'vitest';
import { cellOf, neutraliseFormula } from './csv.js';
import { validateFieldDefinitions, validateSubmissionData, type FieldDefinition, type FieldInput } from './fields.js';
import { checkPattern } from './pattern-safety.js';

describe('pattern safety', () => {
  it.each([
    ['[A-Z]{2}[0-9]{4}', 1000],
    ['\\d{5}(-\\d{4})?', 1000],
    ['[^@\\s]+@[^@\\s]+', 1000],
    ['(?:\\d{3}-){2}\\d{4}', 1000],
    ['(?=.*\\d)(?=.*[a-z]).{8,}', 1000],
    ['[^@\\s]+@[^@\\s]+\\.[^@\\s]+', 200],
    ['\\p{Lu}\\p{Ll}+', 1000],
    ['(?<area>\\d{3}) \\d{4}', 1000],
  ])('accepts %s (values up to %i characters)', (pattern, length) => {
    expect(checkPattern(pattern, length)).toEqual({ ok: true });
  });

  it.each([
    ['(a+)+$', /nested repetition/],
    ['(a*)*b', /nested repetition/],
    ['(\\w+\\s?)+', /nested repetition/],
    ['(?:a?){25}a{25}', /nested repetition/],
    ['((ab)*c)+', /nested repetition/],
    ['(a|a)+', /contains \|/],
    ['(a|ab)*c', /contains \|/],
    ['(a)\\1', /backreference/],
    ['(?<x>a)\\k<x>', /backreference/],
    ['[unclosed', /not a valid regular expression/],
    ['a{2,1}', /not a valid regular expression/],
    ['x'.repeat(201), /longer than 200/],
  ])('refuses %s', (pattern, reason) => {
    const verdict = checkPattern(pattern, 1000);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok === false && verdict.reason).toMatch(reason);
  });

  it('refuses overlapping open-ended repeats that would take long on long values, naming a max_length that fits', () => {
    const verdict = checkPattern('\\d+\\d+\\d+', 1000);
    expect(verdict).toMatchObject({ ok: false, reason: expect.stringMatching(/max_length of at most \d+/) });
    const fits = verdict.ok === false ? verdict.maxLengthThatFits! : 0;
    expect(checkPattern('\\d+\\d+\\d+', fits)).toEqual({ ok: true });
  });

  it('names a max_length at which overlapping repeats fit the backtracking budget', () => {
    // The budget (MAX_BACKTRACK_STEPS) was sized by timing the worst case, about 30 ms on an idle
    // machine; here only the rule is checked, since a test must not depend on the machine's speed.
    const verdict = checkPattern('\\d*\\d*\\d*', 1000);
    expect(verdict.ok).toBe(false);
    const length = verdict.ok === false ? verdict.maxLengthThatFits! : 0;
    expect(length).toBeGreaterThan(100);
    expect(checkPattern('\\d*\\d*\\d*', length)).toEqual({ ok: true });
    expect(checkPattern('\\d*\\d*\\d*', 2 * length).ok).toBe(false);
  });
});

describe('field definitions', () => {
  const text = (extra: Partial<FieldInput> = {}): FieldInput => ({ key: 'name', label: ' Name ', type: 'text', ...extra });

  it('normalises labels and defaults required to false', () => {
    expect(validateFieldDefinitions([text()])).toEqual({ fields: [{ key: 'name', label: 'Name', type: 'text', required: false }], details: [] });
  });

  it.each<[string, FieldInput[], string, string]>([
    ['options missing on select', [{ key: 'a', label: 'A', type: 'select' }], 'fields[0].options', 'required'],
    ['options on text', [text({ options: [{ value: 'x', label: 'X' }] })], 'fields[0].options', 'invalid'],
    ['duplicate keys', [text(), text()], 'fields[1].key', 'invalid_value'],
    ['reserved key', [text({ key: 'submitted_at' })], 'fields[0].key', 'invalid_value'],
    [
      'duplicate option values',
      [
        {
          key: 'a',
          label: 'A',
          type: 'multiselect',
          options: [
            { value: 'x', label: 'X' },
            { value: 'x', label: 'Y' },
          ],
        },
      ],
      'fields[0].options[1].value',
      'invalid_value',
    ],
    ['min above max', [{ key: 'n', label: 'N', type: 'number', min: 5, max: 1 }], 'fields[0].max', 'out_of_range'],
    ['min on text', [text({ min: 1 })], 'fields[0].min', 'invalid'],
    ['a string bound on number', [{ key: 'n', label: 'N', type: 'number', min: '5' }], 'fields[0].min', 'invalid_type'],
    ['a non-date bound on date', [{ key: 'd', label: 'D', type: 'date', max: '2026-02-30' }], 'fields[0].max', 'invalid_format'],
    ['date min after max', [{ key: 'd', label: 'D', type: 'date', min: '2026-03-01', max: '2026-02-01' }], 'fields[0].max', 'out_of_range'],
    ['a fractional selection count', [{ key: 'm', label: 'M', type: 'multiselect', options: [{ value: 'x', label: 'X' }], max: 1.5 }], 'fields[0].max', 'invalid_type'],
    ['more selections required than options', [{ key: 'm', label: 'M', type: 'multiselect', options: [{ value: 'x', label: 'X' }], min: 2 }], 'fields[0].min', 'out_of_range'],
    ['max_length on number', [{ key: 'n', label: 'N', type: 'number', max_length: 5 }], 'fields[0].max_length', 'invalid'],
    ['max_length above the ceiling', [text({ max_length: 10_001 })], 'fields[0].max_length', 'out_of_range'],
    ['pattern on checkbox', [{ key: 'c', label: 'C', type: 'checkbox', pattern: 'x' }], 'fields[0].pattern', 'invalid'],
    ['catastrophic pattern', [text({ pattern: '(a+)+' })], 'fields[0].pattern', 'invalid_value'],
  ])('refuses %s', (_name, fields, path, code) => {
    const { details } = validateFieldDefinitions(fields);
    expect(details).toContainEqual(expect.objectContaining({ path, code }));
  });
});

describe('submitted values', () => {
  const fields: FieldDefinition[] = [
    { key: 'name', label: 'Name', type: 'text', required: true },
    { key: 'bio', label: 'Bio', type: 'textarea', required: false },
    { key: 'email', label: 'Email', type: 'email', required: false },
    { key: 'age', label: 'Age', type: 'number', required: false, min: 0, max: 130 },
    { key: 'phone', label: 'Phone', type: 'phone', required: false },
    { key: 'site', label: 'Site', type: 'url', required: false },
    { key: 'day', label: 'Day', type: 'date', required: false, min: '2026-01-01', max: '2026-12-31' },
    {
      key: 'plan',
      label: 'Plan',
      type: 'select',
      required: false,
      options: [
        { value: 'a', label: 'A' },
        { value: 'b', label: 'B' },
      ],
    },
    {
      key: 'tags',
      label: 'Tags',
      type: 'multiselect',
      required: false,
      min: 1,
      max: 2,
      options: [
        { value: 'x', label: 'X' },
        { value: 'y', label: 'Y' },
        { value: 'z', label: 'Z' },
      ],
    },
    { key: 'agree', label: 'Agree', type: 'checkbox', required: false },
    { key: 'ref', label: 'Ref', type: 'hidden', required: false },
    { key: 'code', label: 'Code', type: 'text', required: false, pattern: '[A-Z]{2}\\d{2}', max_length: 4 },
  ];

  it('accepts good values, trims email/phone/url/date and drops unanswered optional fields', () => {
    const { values, details } = validateSubmissionData(fields, {
      name: 'Ada',
      bio: '',
      email: ' ada@example.com ',
      age: 36,
      phone: '+44 (20) 7946-0958',
      site: 'https://example.com/a?b=c',
      day: '2026-02-28',
      plan: 'b',
      tags: ['x', 'z'],
      agree: false,
      ref: 'campaign-7',
      code: 'AB12',
    });
    expect(details).toEqual([]);
    expect(values).toEqual({
      name: 'Ada',
      email: 'ada@example.com',
      age: 36,
      phone: '+44 (20) 7946-0958',
      site: 'https://example.com/a?b=c',
      day: '2026-02-28',
      plan: 'b',
      tags: ['x', 'z'],
      agree: false,
      ref: 'campaign-7',
      code: 'AB12',
    });
  });

  it.each<[string, unknown, string]>([
    ['name', 42, 'invalid_type'],
    ['name', 'x'.repeat(1001), 'invalid_length'],
    ['bio', 'x'.repeat(10_001), 'invalid_length'],
    ['email', 'ada@', 'invalid_format'],
    ['email', ['ada@example.com'], 'invalid_type'],
    ['age', '36', 'invalid_type'],
    ['age', Infinity, 'invalid_type'],
    ['age', -1, 'out_of_range'],
    ['age', 131, 'out_of_range'],
    ['phone', 'call me', 'invalid_format'],
    ['phone', '+1', 'invalid_format'],
    ['site', 'ftp://example.com', 'invalid_format'],
    ['site', 'javascript:alert(1)', 'invalid_format'],
    ['site', '/relative', 'invalid_format'],
    ['day', '2026-02-30', 'invalid_format'],
    ['day', '28/02/2026', 'invalid_format'],
    ['day', '2025-12-31', 'out_of_range'],
    ['day', '2027-01-01', 'out_of_range'],
    ['plan', 'c', 'invalid_value'],
    ['plan', ['a'], 'invalid_type'],
    ['tags', 'x', 'invalid_type'],
    ['tags', ['x', 'q'], 'invalid_value'],
    ['tags', ['x', 'x'], 'invalid_value'],
    ['tags', ['x', 'y', 'z'], 'invalid_length'],
    ['agree', 'true', 'invalid_type'],
    ['ref', 7, 'invalid_type'],
    ['code', 'ab12', 'invalid_format'],
    ['code', 'AB123', 'invalid_length'],
  ])('refuses %s = %j with %s', (key, value, code) => {
    const { details } = validateSubmissionData(fields, { name: 'Ada', [key]: value });
    expect(details).toEqual([{ path: `data.${key}`, code, message: expect.stringContaining(`data.${key}`) }]);
  });

  it.each([undefined, null, '', '   ', []])('treats %j as no answer to a required field', (value) => {
    const { details } = validateSubmissionData(fields, value === undefined ? {} : { name: value });
    expect(details).toEqual([{ path: 'data.name', code: 'required', message: 'data.name is required.' }]);
  });

  it('wants a required checkbox checked', () => {
    const required: FieldDefinition[] = [{ key: 'terms', label: 'Terms', type: 'checkbox', required: true }];
    expect(validateSubmissionData(required, { terms: false }).details).toMatchObject([{ path: 'data.terms', code: 'required' }]);
    expect(validateSubmissionData(required, { terms: true }).details).toEqual([]);
  });

  it('gives one detail per field and one per unknown key', () => {
    const { details } = validateSubmissionData(fields, { age: 'old', extra: 1, ['x'.repeat(300)]: 2 });
    expect(details.map((detail) => [detail.path, detail.code])).toEqual([
      ['data.name', 'required'],
      ['data.age', 'invalid_type'],
      ['data.extra', 'unknown_field'],
      [`data.${'x'.repeat(100)}…`, 'unknown_field'],
    ]);
  });

  it('does not take inherited properties for answers', () => {
    expect(validateSubmissionData([{ key: 'constructor', label: 'C', type: 'text', required: true }], {}).details).toMatchObject([{ code: 'required' }]);
  });
});

describe('CSV cells', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ['＝1', "'＝1"],
    ['a=1', 'a=1'],
    ['', ''],
  ])('neutralises %j as %j', (cell, expected) => {
    expect(neutraliseFormula(cell)).toBe(expected);
  });

  it('keeps numbers and booleans plain and joins multiselect answers', () => {
    expect(cellOf(-5)).toBe('-5');
    expect(cellOf(1.5)).toBe('1.5');
    expect(cellOf(true)).toBe('true');
    expect(cellOf(false)).toBe('false');
    expect(cellOf(['a', 'b'])).toBe('a; b');
    expect(cellOf(['-a', 'b'])).toBe("'-a; b");
    expect(cellOf(undefined)).toBe('');
    expect(cellOf(null)).toBe('');
    expect(cellOf({ a: 1 })).toBe('{"a":1}');
  });
});
