import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/forms';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const CONTACT_FIELDS = [
  { key: 'name', label: 'Your name', type: 'text', required: true },
  { key: 'email', label: 'Email', type: 'email', required: true },
  {
    key: 'topic',
    label: 'Topic',
    type: 'select',
    options: [
      { value: 'sales', label: 'Sales' },
      { value: 'support', label: 'Support' },
    ],
  },
  { key: 'message', label: 'Message', type: 'textarea' },
];
const GOOD_ANSWERS = { name: 'Ada', email: 'ada@example.com', topic: 'sales', message: 'Hello' };

type Form = { id: string; slug: string; status: string; updated_at: string; submission_count: number; unread_count: number; [key: string]: unknown };
type Submission = { id: string; read: boolean; read_at: string | null; [key: string]: unknown };

async function newKey(scopes?: string[]) {
  return (await platform.newTenant()).key(scopes ? { scopes } : {});
}

async function createForm(key: string, body: Record<string, unknown> = {}): Promise<Form> {
  const response = await call(platform.app, 'POST', `${BASE}/forms`, { key, body: { name: 'Contact us', status: 'published', fields: CONTACT_FIELDS, ...body } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

async function submit(key: string, form: { slug: string }, data: Record<string, unknown> = GOOD_ANSWERS, extra: Record<string, unknown> = {}): Promise<Submission> {
  const response = await call(platform.app, 'POST', `${BASE}/forms/${form.slug}/submit`, { key, body: { data, ...extra } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

async function getForm(key: string, id: string): Promise<Form> {
  const response = await call(platform.app, 'GET', `${BASE}/forms/${id}`, { key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

describe('forms', () => {
  it('creates a draft by default with a slug from the name, readable by id and by slug', async () => {
    const key = await newKey();
    const response = await call(platform.app, 'POST', `${BASE}/forms`, {
      key,
      body: { name: '  Crème Brûlée Survey ', description: 'Tell us', fields: CONTACT_FIELDS, success_message: 'Thanks!', redirect_url: 'https://example.com/thanks' },
    });
    expect(response.statusCode, response.body).toBe(201);
    const form = response.json().data;
    expect(form).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Crème Brûlée Survey',
      slug: 'creme-brulee-survey',
      description: 'Tell us',
      status: 'draft',
      fields: [
        { key: 'name', label: 'Your name', type: 'text', required: true },
        { key: 'email', label: 'Email', type: 'email', required: true },
        {
          key: 'topic',
          label: 'Topic',
          type: 'select',
          required: false,
          options: [
            { value: 'sales', label: 'Sales' },
            { value: 'support', label: 'Support' },
          ],
        },
        { key: 'message', label: 'Message', type: 'textarea', required: false },
      ],
      success_message: 'Thanks!',
      redirect_url: 'https://example.com/thanks',
      submission_count: 0,
      unread_count: 0,
      created_at: expect.stringMatching(ISO),
      updated_at: form.created_at,
    });
    expect(await getForm(key, form.id)).toEqual(form);
    const bySlug = await call(platform.app, 'GET', `${BASE}/forms/by-slug/creme-brulee-survey`, { key });
    expect(bySlug.statusCode).toBe(200);
    expect(bySlug.json().data).toEqual(form);
    expectError(await call(platform.app, 'GET', `${BASE}/forms/by-slug/nothing-here`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/forms/by-slug/Not%20A%20Slug`, { key }), 404, 'not_found');
  });

  it('numbers derived slugs, refuses a taken explicit slug, and keeps slugs per tenant and mode', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    expect((await createForm(key, { name: 'Contact' })).slug).toBe('contact');
    expect((await createForm(key, { name: 'Contact!' })).slug).toBe('contact-2');
    expect((await createForm(key, { name: 'Contact', slug: 'contact-us' })).slug).toBe('contact-us');
    expect((await createForm(key, { name: 'Contact' })).slug).toBe('contact-3');

    const taken = expectError(await call(platform.app, 'POST', `${BASE}/forms`, { key, body: { name: 'Other', slug: 'contact' } }), 409, 'slug_taken');
    expect(taken.details[0]).toMatchObject({ path: 'slug' });

    expect((await createForm(await tenant.key({ mode: 'live' }), { name: 'Contact' })).slug).toBe('contact');
    expect((await createForm(await newKey(), { slug: 'contact' })).slug).toBe('contact');
  });

  it('moves between draft, published and closed, and keeps the slug when the name changes', async () => {
    const key = await newKey();
    const form = await createForm(key, { status: undefined });
    expect(form.status).toBe('draft');
    let previous = form.updated_at;
    for (const status of ['published', 'closed', 'draft', 'closed', 'published', 'draft']) {
      platform.clock.advance(5);
      const response = await call(platform.app, 'PATCH', `${BASE}/forms/${form.id}`, { key, body: { status } });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().data.status).toBe(status);
      expect(Date.parse(response.json().data.updated_at)).toBeGreaterThan(Date.parse(previous));
      previous = response.json().data.updated_at;
    }
    const renamed = await call(platform.app, 'PATCH', `${BASE}/forms/${form.id}`, { key, body: { name: 'Something else', description: null } });
    expect(renamed.json().data).toMatchObject({ name: 'Something else', slug: form.slug, description: null });
  });

  it('changes the slug unless another form has it, and refuses stale writes', async () => {
    const key = await newKey();
    const form = await createForm(key, { name: 'One' });
    await createForm(key, { name: 'Two' });
    expectError(await call(platform.app, 'PATCH', `${BASE}/forms/${form.id}`, { key, body: { slug: 'two' } }), 409, 'slug_taken');
    const same = await call(platform.app, 'PATCH', `${BASE}/forms/${form.id}`, { key, body: { slug: 'one' } });
    expect(same.statusCode).toBe(200);
    const moved = await call(platform.app, 'PATCH', `${BASE}/forms/${form.id}`, { key, body: { slug: 'first', expected_updated_at: same.json().data.updated_at } });
    expect(moved.json().data.slug).toBe('first');
    expect((await call(platform.app, 'GET', `${BASE}/forms/by-slug/first`, { key })).statusCode).toBe(200);
    expectError(await call(platform.app, 'GET', `${BASE}/forms/by-slug/one`, { key }), 404, 'not_found');
    const stale = expectError(
      await call(platform.app, 'PATCH', `${BASE}/forms/${form.id}`, { key, body: { name: 'X', expected_updated_at: form.updated_at } }),
      409,
      'stale_update',
    );
    expect(stale.details[0]).toMatchObject({ path: 'expected_updated_at', current_updated_at: moved.json().data.updated_at });
  });

  it('replaces the fields on PATCH; stored submissions keep their answers', async () => {
    const key = await newKey();
    const form = await createForm(key);
    const before = await submit(key, form);
    const fields = [{ key: 'rating', label: 'Rating', type: 'number', required: true, min: 1, max: 5 }];
    const response = await call(platform.app, 'PATCH', `${BASE}/forms/${form.id}`, { key, body: { fields } });
    expect(response.json().data.fields).toEqual([{ ...fields[0] }]);
    expectError(await call(platform.app, 'POST', `${BASE}/forms/${form.slug}/submit`, { key, body: { data: GOOD_ANSWERS } }), 400, 'validation_failed');
    await submit(key, form, { rating: 4 });
    const old = await call(platform.app, 'GET', `${BASE}/forms/${form.id}/submissions/${before.id}`, { key });
    expect(old.json().data.data).toEqual(GOOD_ANSWERS);
  });

  it('lists forms newest first with counts, filtered by status and search', async () => {
    const key = await newKey();
    const draft = await createForm(key, { name: 'Job application', status: 'draft' });
    platform.clock.advance(5);
    const published = await createForm(key, { name: 'Newsletter signup' });
    await submit(key, published);
    await submit(key, published);
    const second = await submit(key, published);
    await call(platform.app, 'GET', `${BASE}/forms/${published.id}/submissions/${second.id}`, { key });

    const all = await call(platform.app, 'GET', `${BASE}/forms`, { key });
    expect(all.json().meta).toEqual({ limit: 50, offset: 0, total: 2, has_more: false });
    expect(all.json().data.map((form: Form) => [form.id, form.submission_count, form.unread_count])).toEqual([
      [published.id, 3, 2],
      [draft.id, 0, 0],
    ]);
    const ids = async (query: string) => (await call(platform.app, 'GET', `${BASE}/forms?${query}`, { key })).json().data.map((form: Form) => form.id);
    expect(await ids('status=draft')).toEqual([draft.id]);
    expect(await ids('search=NEWS')).toEqual([published.id]);
    expect(await ids('search=job-app')).toEqual([draft.id]);
    expect(await ids('search=%25')).toEqual([]);
    expect(await ids('limit=1&offset=1')).toEqual([draft.id]);
    expectError(await call(platform.app, 'GET', `${BASE}/forms?status=archived`, { key }), 400, 'validation_failed');
    expectError(await call(platform.app, 'GET', `${BASE}/forms?limit=0`, { key }), 400, 'validation_failed');
    expectError(await call(platform.app, 'GET', `${BASE}/forms?colour=red`, { key }), 400, 'validation_failed');
  });

  it('deletes a form with its submissions, leaving other forms alone', async () => {
    const key = await newKey();
    const form = await createForm(key);
    const other = await createForm(key, { name: 'Other' });
    await submit(key, form);
    await submit(key, form);
    await submit(key, other);

    const response = await call(platform.app, 'DELETE', `${BASE}/forms/${form.id}`, { key });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ data: { id: form.id, deleted: true } });
    expectError(await call(platform.app, 'GET', `${BASE}/forms/${form.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/forms/${form.id}/submissions`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'DELETE', `${BASE}/forms/${form.id}`, { key }), 404, 'not_found');
    const left = await sql<{
      form_id: string;
      n: string;
    }>`select form_id, count(*) as n from forms_submissions where form_id in (${form.id}, ${other.id}) group by form_id`.execute(platform.database.db);
    expect(left.rows.map((row) => [row.form_id, Number(row.n)])).toEqual([[other.id, 1]]);
    expect((await getForm(key, other.id)).submission_count).toBe(1);
  });

  it('refuses bad field definitions with a detail at the field', async () => {
    const key = await newKey();
    const cases: Array<[unknown[], string, string]> = [
      [[{ key: 'pick', label: 'Pick', type: 'select' }], 'fields[0].options', 'required'],
      [
        [
          { key: 'a', label: 'A', type: 'text' },
          { key: 'b', label: 'B', type: 'text', options: [{ value: 'x', label: 'X' }] },
        ],
        'fields[1].options',
        'invalid',
      ],
      [[{ key: 'pick', label: 'Pick', type: 'select', options: [] }], 'fields[0].options', 'invalid_length'],
      [
        [
          { key: 'a', label: 'A', type: 'text' },
          { key: 'a', label: 'A again', type: 'email' },
        ],
        'fields[1].key',
        'invalid_value',
      ],
      [[{ key: 'id', label: 'Id', type: 'text' }], 'fields[0].key', 'invalid_value'],
      [[{ key: 'Bad Key', label: 'A', type: 'text' }], 'fields[0].key', 'invalid_format'],
      [[{ key: 'a', label: 'A', type: 'colour' }], 'fields[0].type', 'invalid_value'],
      [[{ key: 'a', label: '   ', type: 'text' }], 'fields[0].label', 'invalid_format'],
      [[{ key: 'a', label: 'A', type: 'text', placeholder: 'x' }], 'fields[0].placeholder', 'unknown_field'],
      [[{ key: 'n', label: 'N', type: 'number', min: 10, max: 1 }], 'fields[0].max', 'out_of_range'],
      [[{ key: 'n', label: 'N', type: 'number', min: '1' }], 'fields[0].min', 'invalid_type'],
      [[{ key: 'n', label: 'N', type: 'text', max: 3 }], 'fields[0].max', 'invalid'],
      [[{ key: 'd', label: 'D', type: 'date', min: 'tomorrow' }], 'fields[0].min', 'invalid_format'],
      [[{ key: 'n', label: 'N', type: 'number', max_length: 3 }], 'fields[0].max_length', 'invalid'],
      [[{ key: 't', label: 'T', type: 'text', max_length: 0 }], 'fields[0].max_length', 'out_of_range'],
      [[{ key: 't', label: 'T', type: 'text', pattern: '(' }], 'fields[0].pattern', 'invalid_value'],
      [[{ key: 't', label: 'T', type: 'text', pattern: '(x+x+)+y' }], 'fields[0].pattern', 'invalid_value'],
      [[{ key: 't', label: 'T', type: 'date', pattern: '\\d+' }], 'fields[0].pattern', 'invalid'],
      [Array.from({ length: 101 }, (_, index) => ({ key: `f${index}`, label: 'F', type: 'text' })), 'fields', 'invalid_length'],
    ];
    for (const [fields, path, code] of cases) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/forms`, { key, body: { name: 'Bad', fields } }), 400, 'validation_failed');
      expect(error.details, JSON.stringify(fields).slice(0, 200)).toContainEqual(expect.objectContaining({ path, code }));
    }
    const form = await createForm(key);
    const patched = expectError(
      await call(platform.app, 'PATCH', `${BASE}/forms/${form.id}`, {
        key,
        body: {
          fields: [
            {
              key: 'm',
              label: 'M',
              type: 'multiselect',
              options: [
                { value: 'a', label: 'A' },
                { value: 'a', label: 'B' },
              ],
            },
          ],
        },
      }),
      400,
      'validation_failed',
    );
    expect(patched.details).toEqual([expect.objectContaining({ path: 'fields[0].options[1].value', code: 'invalid_value' })]);
    expect((await getForm(key, form.id)).fields).toHaveLength(CONTACT_FIELDS.length);
  });

  it('refuses hostile form input with 4xx, never 5xx', async () => {
    const key = await newKey();
    const form = await createForm(key);
    const bodies: unknown[] = [
      {},
      { name: null },
      { name: 'x'.repeat(201) },
      { name: 'A', status: 'archived' },
      { name: 'A', slug: 'Not A Slug' },
      { name: 'A', slug: '' },
      { name: 'A', fields: 'name,email' },
      { name: 'A', fields: [null] },
      { name: 'A', redirect_url: 'javascript:alert(1)' },
      { name: 'A', redirect_url: '/relative' },
      { name: 'A', submission_count: 5 },
    ];
    for (const body of bodies) {
      const response = await call(platform.app, 'POST', `${BASE}/forms`, { key, body, invalid: true });
      expect(response.statusCode, `${JSON.stringify(body)} -> ${response.body}`).toBe(400);
    }
    const infinite = await call(platform.app, 'POST', `${BASE}/forms`, { key, body: '{"name":"A","fields":[{"key":"n","label":"N","type":"number","min":1e400}]}' });
    expectError(infinite, 400, 'validation_failed');
    for (const body of [{ status: null }, { fields: null }, { name: '' }, { id: form.id }, { expected_updated_at: 'yesterday' }]) {
      expectError(await call(platform.app, 'PATCH', `${BASE}/forms/${form.id}`, { key, body }), 400, 'validation_failed');
    }
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000', "1' or '1'='1"]) {
      expectError(await call(platform.app, 'GET', `${BASE}/forms/${encodeURIComponent(id)}`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'PATCH', `${BASE}/forms/${encodeURIComponent(id)}`, { key, body: { name: 'X' } }), 404, 'not_found');
      expectError(await call(platform.app, 'DELETE', `${BASE}/forms/${encodeURIComponent(id)}`, { key }), 404, 'not_found');
    }
    const long = await call(platform.app, 'GET', `${BASE}/forms/${'x'.repeat(300)}`, { key, invalid: true });
    expect(long.statusCode).toBeGreaterThanOrEqual(400);
    expect(long.statusCode).toBeLessThan(500);
  });
});

describe('submitting', () => {
  it('stores the answers and metadata as unread, and counts them on the form', async () => {
    const key = await newKey();
    const form = await createForm(key);
    const submission = await submit(
      key,
      form,
      { ...GOOD_ANSWERS, email: ' ada@example.com ', message: '' },
      { metadata: { ip: '203.0.113.7', user_agent: 'Mozilla/5.0', utm: { source: 'x' } } },
    );
    expect(submission).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      form_id: form.id,
      data: { name: 'Ada', email: 'ada@example.com', topic: 'sales' },
      read: false,
      read_at: null,
      submitted_at: expect.stringMatching(ISO),
      metadata: { ip: '203.0.113.7', user_agent: 'Mozilla/5.0', utm: { source: 'x' } },
    });
    expect((await submit(key, form)).metadata).toEqual({});
    expect(await getForm(key, form.id)).toMatchObject({ submission_count: 2, unread_count: 2 });
  });

  it('accepts submissions only while the form is published', async () => {
    const key = await newKey();
    const draft = await createForm(key, { status: undefined });
    const refused = expectError(await call(platform.app, 'POST', `${BASE}/forms/${draft.slug}/submit`, { key, body: { data: GOOD_ANSWERS } }), 409, 'form_not_published');
    expect(refused.details[0]).toMatchObject({ path: 'status', status: 'draft' });

    await call(platform.app, 'PATCH', `${BASE}/forms/${draft.id}`, { key, body: { status: 'published' } });
    await submit(key, draft);
    await call(platform.app, 'PATCH', `${BASE}/forms/${draft.id}`, { key, body: { status: 'closed' } });
    expectError(await call(platform.app, 'POST', `${BASE}/forms/${draft.slug}/submit`, { key, body: { data: GOOD_ANSWERS } }), 409, 'form_not_published');
    await call(platform.app, 'PATCH', `${BASE}/forms/${draft.id}`, { key, body: { status: 'draft' } });
    expectError(await call(platform.app, 'POST', `${BASE}/forms/${draft.slug}/submit`, { key, body: { data: GOOD_ANSWERS } }), 409, 'form_not_published');
    // A closed form still refuses when the answers are also wrong: the state comes first.
    expectError(await call(platform.app, 'POST', `${BASE}/forms/${draft.slug}/submit`, { key, body: { data: { nope: 1 } } }), 409, 'form_not_published');
    expect((await getForm(key, draft.id)).submission_count).toBe(1);

    expectError(await call(platform.app, 'POST', `${BASE}/forms/no-such-form/submit`, { key, body: { data: {} } }), 404, 'not_found');
    expectError(await call(platform.app, 'POST', `${BASE}/forms/NOT_A_SLUG/submit`, { key, body: { data: {} } }), 404, 'not_found');
  });

  it('checks every answer against its field: one detail per field, unknown keys refused', async () => {
    const key = await newKey();
    const form = await createForm(key, {
      fields: [
        { key: 'name', label: 'Name', type: 'text', required: true, max_length: 5 },
        { key: 'email', label: 'Email', type: 'email', required: true },
        { key: 'age', label: 'Age', type: 'number', min: 18, max: 99 },
        { key: 'phone', label: 'Phone', type: 'phone' },
        { key: 'site', label: 'Site', type: 'url' },
        { key: 'start', label: 'Start', type: 'date', min: '2026-01-01' },
        { key: 'plan', label: 'Plan', type: 'select', options: [{ value: 'basic', label: 'Basic' }] },
        {
          key: 'extras',
          label: 'Extras',
          type: 'multiselect',
          max: 1,
          options: [
            { value: 'a', label: 'A' },
            { value: 'b', label: 'B' },
          ],
        },
        { key: 'terms', label: 'Terms', type: 'checkbox', required: true },
        { key: 'ref', label: 'Ref', type: 'hidden' },
        { key: 'code', label: 'Code', type: 'text', pattern: '[A-Z]{3}' },
      ],
    });
    const response = await call(platform.app, 'POST', `${BASE}/forms/${form.slug}/submit`, {
      key,
      body: {
        data: {
          name: 'Ada Lovelace',
          email: null,
          age: '42',
          phone: 'call me',
          site: 'ftp://example.com',
          start: '2025-12-31',
          plan: 'gold',
          extras: ['a', 'b'],
          terms: false,
          ref: 12,
          code: 'abc',
          favourite_colour: 'blue',
          admin: true,
        },
      },
    });
    const error = expectError(response, 400, 'validation_failed');
    expect(error.details.map((detail) => [detail.path, detail.code])).toEqual([
      ['data.name', 'invalid_length'],
      ['data.email', 'required'],
      ['data.age', 'invalid_type'],
      ['data.phone', 'invalid_format'],
      ['data.site', 'invalid_format'],
      ['data.start', 'out_of_range'],
      ['data.plan', 'invalid_value'],
      ['data.extras', 'invalid_length'],
      ['data.terms', 'required'],
      ['data.ref', 'invalid_type'],
      ['data.code', 'invalid_format'],
      ['data.favourite_colour', 'unknown_field'],
      ['data.admin', 'unknown_field'],
    ]);
    expect((await getForm(key, form.id)).submission_count).toBe(0);

    const good = await submit(key, form, {
      name: 'Ada',
      email: 'ada@example.com',
      age: 36,
      phone: '+44 20 7946 0958',
      site: 'https://example.com',
      start: '2026-03-01',
      plan: 'basic',
      extras: ['b'],
      terms: true,
      ref: 'x',
      code: 'ABC',
    });
    expect(good.data).toMatchObject({ age: 36, extras: ['b'], terms: true });
  });

  it('refuses hostile submission bodies with 400', async () => {
    const key = await newKey();
    const form = await createForm(key);
    const url = `${BASE}/forms/${form.slug}/submit`;
    for (const body of [
      {},
      { data: null },
      { data: [] },
      { data: 'name=Ada' },
      { data: GOOD_ANSWERS, metadata: 'ip' },
      { data: GOOD_ANSWERS, metadata: [1] },
      { data: GOOD_ANSWERS, extra: 1 },
      { data: GOOD_ANSWERS, metadata: Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, 1])) },
      { data: Object.fromEntries(Array.from({ length: 201 }, (_, index) => [`k${index}`, 1])) },
    ]) {
      const response = await call(platform.app, 'POST', url, { key, body });
      expectError(response, 400, 'validation_failed');
    }
    const big = expectError(await call(platform.app, 'POST', url, { key, body: { data: GOOD_ANSWERS, metadata: { note: 'x'.repeat(9000) } } }), 400, 'validation_failed');
    expect(big.details).toEqual([expect.objectContaining({ path: 'metadata', code: 'invalid_length' })]);
    const infinite = await call(platform.app, 'POST', url, { key, body: '{"data":{"name":"A","email":"a@b.co","message":1e400}}' });
    expect(expectError(infinite, 400, 'validation_failed').details).toEqual([expect.objectContaining({ path: 'data.message', code: 'invalid_type' })]);
    expectError(await call(platform.app, 'POST', url, { key, body: 'data=1', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    expect((await getForm(key, form.id)).submission_count).toBe(0);
  });

  it('replays a repeated Idempotency-Key instead of storing twice', async () => {
    const key = await newKey();
    const form = await createForm(key);
    const headers = { 'idempotency-key': 'submit-0001' };
    const first = await call(platform.app, 'POST', `${BASE}/forms/${form.slug}/submit`, { key, body: { data: GOOD_ANSWERS }, headers });
    const second = await call(platform.app, 'POST', `${BASE}/forms/${form.slug}/submit`, { key, body: { data: GOOD_ANSWERS }, headers });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json()).toEqual(first.json());
    expect((await getForm(key, form.id)).submission_count).toBe(1);
    const conflict = await call(platform.app, 'POST', `${BASE}/forms/${form.slug}/submit`, { key, body: { data: { ...GOOD_ANSWERS, name: 'Bob' } }, headers });
    expectError(conflict, 409, 'idempotency_key_conflict');
  });
});

describe('submissions', () => {
  it('lists newest first, filters by read, and pages with totals from the counters', async () => {
    const key = await newKey();
    const form = await createForm(key);
    const submitted: Submission[] = [];
    for (let index = 0; index < 4; index += 1) {
      platform.clock.advance(10);
      submitted.push(await submit(key, form, { ...GOOD_ANSWERS, name: `P${index}` }));
    }
    await call(platform.app, 'GET', `${BASE}/forms/${form.id}/submissions/${submitted[1]!.id}`, { key });

    const list = async (query = '') => (await call(platform.app, 'GET', `${BASE}/forms/${form.id}/submissions${query}`, { key })).json();
    const all = await list();
    expect(all.data.map((row: Submission) => row.id)).toEqual(submitted.map((row) => row.id).reverse());
    expect(all.meta).toEqual({ limit: 50, offset: 0, total: 4, has_more: false });
    const unread = await list('?read=false');
    expect(unread.data.map((row: Submission) => row.id)).toEqual([submitted[3]!.id, submitted[2]!.id, submitted[0]!.id]);
    expect(unread.meta.total).toBe(3);
    const read = await list('?read=true');
    expect(read.data.map((row: Submission) => row.id)).toEqual([submitted[1]!.id]);
    expect(read.meta.total).toBe(1);
    const page = await list('?limit=2&offset=1');
    expect(page.data.map((row: Submission) => row.id)).toEqual([submitted[2]!.id, submitted[1]!.id]);
    expect(page.meta).toEqual({ limit: 2, offset: 1, total: 4, has_more: true });

    expectError(await call(platform.app, 'GET', `${BASE}/forms/${form.id}/submissions?read=maybe`, { key }), 400, 'validation_failed');
    expectError(await call(platform.app, 'GET', `${BASE}/forms/not-a-uuid/submissions`, { key }), 404, 'not_found');
  });

  it('follows the state table: GET marks read once; PATCH marks read or unread; counts follow', async () => {
    const key = await newKey();
    const form = await createForm(key);
    const submission = await submit(key, form);
    const url = `${BASE}/forms/${form.id}/submissions/${submission.id}`;
    const counts = async () => {
      const { submission_count, unread_count } = await getForm(key, form.id);
      return [submission_count, unread_count];
    };
    expect(await counts()).toEqual([1, 1]);

    platform.clock.freeze(new Date('2026-05-01T10:00:00.000Z'));
    try {
      const first = await call(platform.app, 'GET', url, { key });
      expect(first.json().data).toMatchObject({ id: submission.id, read: true, read_at: '2026-05-01T10:00:00.000Z', data: GOOD_ANSWERS });
      expect(await counts()).toEqual([1, 0]);

      platform.clock.advance(60_000);
      const again = await call(platform.app, 'GET', url, { key });
      expect(again.json().data).toMatchObject({ read: true, read_at: '2026-05-01T10:00:00.000Z' });
      expect(await counts()).toEqual([1, 0]);

      const unread = await call(platform.app, 'PATCH', url, { key, body: { read: false } });
      expect(unread.statusCode).toBe(200);
      expect(unread.json().data).toMatchObject({ read: false, read_at: null });
      expect(await counts()).toEqual([1, 1]);
      const stillUnread = await call(platform.app, 'PATCH', url, { key, body: { read: false } });
      expect(stillUnread.json().data).toMatchObject({ read: false, read_at: null });
      expect(await counts()).toEqual([1, 1]);

      const read = await call(platform.app, 'PATCH', url, { key, body: { read: true } });
      expect(read.json().data).toMatchObject({ read: true, read_at: '2026-05-01T10:01:00.000Z' });
      platform.clock.advance(60_000);
      const readAgain = await call(platform.app, 'PATCH', url, { key, body: { read: true } });
      expect(readAgain.json().data.read_at).toBe('2026-05-01T10:01:00.000Z');
      expect(await counts()).toEqual([1, 0]);
    } finally {
      platform.clock.resume();
    }

    for (const body of [{}, { read: 'true' }, { read: null }, { read: true, data: {} }]) {
      expectError(await call(platform.app, 'PATCH', url, { key, body }), 400, 'validation_failed');
    }
  });

  it('deletes a submission and moves the counts; a submission is found only under its own form', async () => {
    const key = await newKey();
    const form = await createForm(key);
    const other = await createForm(key, { name: 'Other' });
    const read = await submit(key, form);
    const unread = await submit(key, form);
    await call(platform.app, 'GET', `${BASE}/forms/${form.id}/submissions/${read.id}`, { key });
    expect(await getForm(key, form.id)).toMatchObject({ submission_count: 2, unread_count: 1 });

    expectError(await call(platform.app, 'GET', `${BASE}/forms/${other.id}/submissions/${unread.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'PATCH', `${BASE}/forms/${other.id}/submissions/${unread.id}`, { key, body: { read: true } }), 404, 'not_found');
    expectError(await call(platform.app, 'DELETE', `${BASE}/forms/${other.id}/submissions/${unread.id}`, { key }), 404, 'not_found');
    expect(await getForm(key, form.id)).toMatchObject({ submission_count: 2, unread_count: 1 });

    const deleted = await call(platform.app, 'DELETE', `${BASE}/forms/${form.id}/submissions/${unread.id}`, { key });
    expect(deleted.json()).toEqual({ data: { id: unread.id, deleted: true } });
    expect(await getForm(key, form.id)).toMatchObject({ submission_count: 1, unread_count: 0 });
    await call(platform.app, 'DELETE', `${BASE}/forms/${form.id}/submissions/${read.id}`, { key });
    expect(await getForm(key, form.id)).toMatchObject({ submission_count: 0, unread_count: 0 });
    expectError(await call(platform.app, 'DELETE', `${BASE}/forms/${form.id}/submissions/${read.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/forms/${form.id}/submissions/${read.id}`, { key }), 404, 'not_found');

    for (const path of [`${form.id}/submissions/nope`, `nope/submissions/${read.id}`]) {
      expectError(await call(platform.app, 'GET', `${BASE}/forms/${path}`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'PATCH', `${BASE}/forms/${path}`, { key, body: { read: true } }), 404, 'not_found');
      expectError(await call(platform.app, 'DELETE', `${BASE}/forms/${path}`, { key }), 404, 'not_found');
    }
  });

  it('marks read exactly once when two readers race', async () => {
    const key = await newKey();
    const form = await createForm(key);
    const submission = await submit(key, form);
    const url = `${BASE}/forms/${form.id}/submissions/${submission.id}`;
    const replies = await Promise.all([1, 2, 3, 4].map(() => call(platform.app, 'GET', url, { key })));
    expect(replies.map((reply) => reply.statusCode)).toEqual([200, 200, 200, 200]);
    expect(new Set(replies.map((reply) => reply.json().data.read_at)).size).toBe(1);
    expect(await getForm(key, form.id)).toMatchObject({ submission_count: 1, unread_count: 0 });
  });
});

// The shared security suite: no key, wrong scope, exact scope, other tenant, other mode.
type Fixture = { form: Form; submission: Submission };
async function formWithSubmission(key: string): Promise<Fixture> {
  const form = await createForm(key);
  return { form, submission: await submit(key, form) };
}

describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.forms.view', url: () => `${BASE}/forms`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.forms.manage',
  url: () => `${BASE}/forms`,
  body: () => ({ name: 'Contact' }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.forms.view',
  setup: (key) => createForm(key),
  url: (form: Form) => `${BASE}/forms/by-slug/${form.slug}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.forms.view',
  setup: (key) => createForm(key),
  url: (form: Form) => `${BASE}/forms/${form.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.forms.manage',
  setup: (key) => createForm(key),
  url: (form: Form) => `${BASE}/forms/${form.id}`,
  body: () => ({ name: 'Renamed' }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'DELETE',
  scope: 'service.forms.manage',
  setup: (key) => createForm(key),
  url: (form: Form) => `${BASE}/forms/${form.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.forms.submit',
  setup: (key) => createForm(key),
  url: (form: Form) => `${BASE}/forms/${form.slug}/submit`,
  body: () => ({ data: GOOD_ANSWERS }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.forms.view',
  setup: formWithSubmission,
  url: ({ form }: Fixture) => `${BASE}/forms/${form.id}/submissions`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.forms.view',
  setup: formWithSubmission,
  url: ({ form, submission }: Fixture) => `${BASE}/forms/${form.id}/submissions/${submission.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.forms.submissions.manage',
  setup: formWithSubmission,
  url: ({ form, submission }: Fixture) => `${BASE}/forms/${form.id}/submissions/${submission.id}`,
  body: () => ({ read: true }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'DELETE',
  scope: 'service.forms.submissions.manage',
  setup: formWithSubmission,
  url: ({ form, submission }: Fixture) => `${BASE}/forms/${form.id}/submissions/${submission.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.forms.export',
  setup: formWithSubmission,
  url: ({ form }: Fixture) => `${BASE}/forms/${form.id}/submissions.csv`,
  addressesOneRow: true,
});

describe('derived slugs at the length limit', () => {
  it('numbers forms whose names make a slug of the longest length, time after time', async () => {
    const key = await (await platform.newTenant()).key();
    const name = 'é'.repeat(150);
    const slugs: string[] = [];
    for (let index = 0; index < 4; index += 1) {
      const response = await call(platform.app, 'POST', `${BASE}/forms`, { key, body: { name, fields: [{ key: 'email', label: 'Email', type: 'email' }] } });
      expect(response.statusCode, response.body).toBe(201);
      slugs.push(response.json().data.slug as string);
    }
    expect(slugs[0]).toBe('e'.repeat(120));
    expect(slugs.slice(1)).toEqual(['e'.repeat(118) + '-2', 'e'.repeat(118) + '-3', 'e'.repeat(118) + '-4']);
  });
});
