import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { EXPORT_BATCH_SIZE } from './service.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/forms';

type Form = { id: string; slug: string };

async function createForm(key: string, body: Record<string, unknown>): Promise<Form> {
  const response = await call(platform.app, 'POST', `${BASE}/forms`, { key, body: { name: 'Export me', status: 'published', ...body } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

async function submit(key: string, form: Form, data: Record<string, unknown>): Promise<{ id: string; submitted_at: string }> {
  const response = await call(platform.app, 'POST', `${BASE}/forms/${form.slug}/submit`, { key, body: { data } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

async function exportCsv(key: string, form: Form) {
  const response = await call(platform.app, 'GET', `${BASE}/forms/${form.id}/submissions.csv`, { key });
  expect(response.statusCode, response.body.slice(0, 300)).toBe(200);
  return response;
}

/** Parsed back with a real CSV parser, strictly (no relaxed quoting). */
function records(body: string): string[][] {
  return parse(body, { relax_quotes: false, relax_column_count: false, skip_empty_lines: false });
}

describe('CSV export', () => {
  it('quotes per RFC 4180 and neutralises formulas, as a real CSV parser reads it back', async () => {
    const key = await (await platform.newTenant()).key();
    const form = await createForm(key, {
      name: 'Event sign-up',
      fields: [
        { key: 'note', label: 'Note', type: 'text' },
        { key: 'bio', label: 'Bio', type: 'textarea' },
        { key: 'amount', label: 'Amount', type: 'number' },
        {
          key: 'tags',
          label: 'Tags',
          type: 'multiselect',
          options: [
            { value: '=a', label: 'A' },
            { value: 'b, c', label: 'B' },
            { value: 'd', label: 'D' },
          ],
        },
        { key: 'ok', label: 'OK', type: 'checkbox' },
        { key: 'ref', label: 'Ref', type: 'hidden' },
        { key: 'day', label: 'Day', type: 'date' },
      ],
    });
    const rows: Array<[Record<string, unknown>, string[]]> = [
      [
        { note: 'Hello, "world"', bio: 'line1\nline2\r\nline3\rline4', amount: -5, tags: ['d', 'b, c'], ok: true, ref: 'plain', day: '2026-03-01' },
        ['Hello, "world"', 'line1\nline2\r\nline3\rline4', '-5', 'd; b, c', 'true', 'plain', '2026-03-01'],
      ],
      [
        { note: '=HYPERLINK("http://evil.example","click")', bio: '+1+2', amount: 3.25, tags: ['=a'], ok: false, ref: '-campaign' },
        ['\'=HYPERLINK("http://evil.example","click")', "'+1+2", '3.25', "'=a", 'false', "'-campaign", ''],
      ],
      [{ note: '@SUM(A1:A9)', bio: '\t=1+1', ref: '\r=cmd|x' }, ["'@SUM(A1:A9)", "'\t=1+1", '', '', '', "'\r=cmd|x", '']],
      [{ note: 'Zoë 日本語 😀', bio: ' =not at start' }, ['Zoë 日本語 😀', ' =not at start', '', '', '', '', '']],
    ];
    const stored: Array<{ id: string; submitted_at: string }> = [];
    for (const [data] of rows) {
      platform.clock.advance(5);
      stored.push(await submit(key, form, data));
    }
    // One read, so the read column shows both values.
    await call(platform.app, 'GET', `${BASE}/forms/${form.id}/submissions/${stored[1]!.id}`, { key });

    const response = await exportCsv(key, form);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe('attachment; filename="event-sign-up-submissions.csv"');
    expect(response.headers['x-ratelimit-limit']).toBeDefined();
    expect(response.body.startsWith('id,submitted_at,read,note,bio,amount,tags,ok,ref,day\r\n')).toBe(true);
    expect(response.body.endsWith('\r\n')).toBe(true);

    const parsed = records(response.body);
    expect(parsed[0]).toEqual(['id', 'submitted_at', 'read', 'note', 'bio', 'amount', 'tags', 'ok', 'ref', 'day']);
    expect(parsed.slice(1)).toEqual(rows.map(([, cells], index) => [stored[index]!.id, stored[index]!.submitted_at, index === 1 ? 'true' : 'false', ...cells]));
  });

  it('streams every row exactly once, oldest first, across keyset batches with tied and sub-millisecond timestamps', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const form = await createForm(key, { fields: [{ key: 'n', label: 'N', type: 'text' }] });
    const other = await createForm(key, { name: 'Other', fields: [{ key: 'n', label: 'N', type: 'text' }] });
    const count = Math.floor(EXPORT_BATCH_SIZE * 2.5);
    // Rows share milliseconds in threes, and some carry microseconds, so the keyset cursor
    // must compare exact timestamps and break ties on the id.
    for (const [formId, rows] of [
      [form.id, count],
      [other.id, 50],
    ] as const) {
      await sql`
        insert into forms_submissions (id, tenant_id, mode, form_id, data, metadata, read, submitted_at)
        select gen_random_uuid(), ${tenant.id}, 'test', ${formId}, jsonb_build_object('n', 'row ' || g), '{}', g % 2 = 0,
               timestamptz '2026-01-01 00:00:00+00' + (g / 3) * interval '1 millisecond' + (g % 4) * interval '1 microsecond'
        from generate_series(1, ${rows}::int) as g`.execute(platform.database.db);
    }
    const expected = await sql<{ id: string }>`select id from forms_submissions where form_id = ${form.id} order by submitted_at, id`.execute(platform.database.db);

    const parsed = records((await exportCsv(key, form)).body);
    expect(parsed).toHaveLength(count + 1);
    const ids = parsed.slice(1).map((record) => record[0]);
    expect(new Set(ids).size).toBe(count);
    expect(ids).toEqual(expected.rows.map((row) => row.id));
    expect(parsed.slice(1).every((record) => /^row \d+$/.test(record[3]!) && (record[2] === 'true' || record[2] === 'false'))).toBe(true);
  });

  it('uses the current fields: a removed field drops out, a new one is empty, stored values show as they are', async () => {
    const key = await (await platform.newTenant()).key();
    const form = await createForm(key, {
      fields: [
        { key: 'a', label: 'A', type: 'text' },
        { key: 'b', label: 'B', type: 'number' },
      ],
    });
    const before = await submit(key, form, { a: 'kept', b: -7 });
    const patched = await call(platform.app, 'PATCH', `${BASE}/forms/${form.id}`, {
      key,
      body: {
        fields: [
          { key: 'c', label: 'C', type: 'checkbox' },
          { key: 'b', label: 'B as text', type: 'text' },
        ],
      },
    });
    expect(patched.statusCode).toBe(200);
    platform.clock.advance(5);
    const after = await submit(key, form, { c: true, b: '-7' });
    const parsed = records((await exportCsv(key, form)).body);
    expect(parsed).toEqual([
      ['id', 'submitted_at', 'read', 'c', 'b'],
      [before.id, before.submitted_at, 'false', '', '-7'],
      [after.id, after.submitted_at, 'false', 'true', "'-7"],
    ]);
  });

  it('exports only the header row for a form without submissions, and answers HEAD without a body', async () => {
    const key = await (await platform.newTenant()).key();
    const form = await createForm(key, { slug: 'empty', fields: [{ key: 'q', label: 'Q', type: 'text' }] });
    expect((await exportCsv(key, form)).body).toBe('id,submitted_at,read,q\r\n');
    const head = await call(platform.app, 'HEAD', `${BASE}/forms/${form.id}/submissions.csv`, { key });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(head.headers['content-disposition']).toBe('attachment; filename="empty-submissions.csv"');
    expect(head.body).toBe('');
  });

  it('answers an unknown or malformed form id with 404 in the JSON error shape', async () => {
    const key = await (await platform.newTenant()).key();
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const response = await call(platform.app, 'GET', `${BASE}/forms/${id}/submissions.csv`, { key });
      expectError(response, 404, 'not_found');
      expect(response.headers['content-type']).toContain('application/json');
    }
  });
});
