import { sql } from 'kysely';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeUnsafeInput, isSafeInput, MAX_JSON_DEPTH } from '../../src/platform/http/input-guard.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
let key: string;
beforeAll(async () => {
  platform = await startTestPlatform();
  // A route that hands its input straight to PostgreSQL, as a rule that forgot a limit would.
  platform.app.post('/api/v1/services/crm/test-cast', {
    config: { scope: 'service.crm.manage' },
    schema: {
      body: Type.Object({ value: Type.String(), as: Type.Union([Type.Literal('integer'), Type.Literal('date'), Type.Literal('text')]) }, { additionalProperties: false }),
      response: { 200: Type.Object({ data: Type.Object({ value: Type.String() }) }) },
    },
    handler: async (request) => {
      const { value, as } = request.body as { value: string; as: string };
      const result = await sql<{ value: string }>`select (${value}::${sql.raw(as)})::text as value`.execute(platform.database.db);
      return { data: { value: result.rows[0]!.value } };
    },
  });
  key = await (await platform.newTenant()).key();
});
afterAll(() => platform.close());

const CRM = '/api/v1/services/crm';
const CUSTOMERS = '/api/v1/services/invoicing/customers';

async function createContact(name = 'Ada Lovelace'): Promise<{ id: string; updated_at: string }> {
  const response = await call(platform.app, 'POST', `${CRM}/contacts`, { key, body: { name } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

async function createCustomer(): Promise<number> {
  const response = await call(platform.app, 'POST', CUSTOMERS, { key, body: { display_name: 'Acme Ltd' } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.id;
}

describe('control characters and lone surrogates', () => {
  it('refuses NUL in a crm contact name on POST and PATCH with 400 naming the field', async () => {
    const created = await call(platform.app, 'POST', `${CRM}/contacts`, { key, body: { name: 'Ada\u0000Lovelace' } });
    const error = expectError(created, 400, 'validation_failed');
    expect(error.details).toEqual([{ path: 'name', code: 'invalid_characters', message: 'name contains a control character (U+0000), which is not allowed.' }]);

    const contact = await createContact();
    const patched = await call(platform.app, 'PATCH', `${CRM}/contacts/${contact.id}`, { key, body: { name: '\u0000' } });
    expect(expectError(patched, 400, 'validation_failed').details[0]).toMatchObject({ path: 'name', code: 'invalid_characters' });
    expect((await call(platform.app, 'GET', `${CRM}/contacts/${contact.id}`, { key })).json().data.name).toBe('Ada Lovelace');
  });

  it('names the field inside nested objects and array elements', async () => {
    const response = await call(platform.app, 'POST', '/api/v1/services/payments/checkout-sessions', {
      key,
      body: {
        currency: 'USD',
        success_url: 'https://example.com/ok',
        line_items: [
          { name: 'Fine', unit_amount_cents: 100, quantity: 1 },
          { name: 'Bad\u0007bell', unit_amount_cents: 100, quantity: 1 },
        ],
        metadata: { order: 'x\u001by' },
      },
    });
    const error = expectError(response, 400, 'validation_failed');
    expect(error.details.map((detail) => [detail.path, detail.code])).toEqual([
      ['line_items[1].name', 'invalid_characters'],
      ['metadata.order', 'invalid_characters'],
    ]);
    expect(error.details[0]!.message).toContain('U+0007');
  });

  it('refuses lone UTF-16 surrogates (JSON escapes PostgreSQL cannot store) but keeps real pairs', async () => {
    const lone = await call(platform.app, 'POST', `${CRM}/companies`, { key, body: '{"name":"Acme \\ud800 Ltd"}' });
    expect(expectError(lone, 400, 'validation_failed').details[0]).toMatchObject({ path: 'name', code: 'invalid_characters' });
    expect(expectError(lone, 400, 'validation_failed').details[0]!.message).toContain('unpaired UTF-16 surrogate (U+D800)');
    const pair = await call(platform.app, 'POST', `${CRM}/companies`, { key, body: '{"name":"Acme \\ud83d\\ude00 Ltd"}' });
    expect(pair.statusCode, pair.body).toBe(201);
    expect(pair.json().data.name).toBe('Acme 😀 Ltd');
  });

  it('lets tab, line feed and carriage return through in body text', async () => {
    const response = await call(platform.app, 'POST', CUSTOMERS, { key, body: { display_name: 'Acme', notes: 'Line one\r\nLine two\tindented' } });
    expect(response.statusCode, response.body).toBe(201);
  });

  it('refuses control characters in field names, query strings and path parameters, saying where', async () => {
    const field = await call(platform.app, 'POST', '/api/v1/services/customer-auth/users', { key, body: { email: 'k@example.com', metadata: { 'a\u0000b': 1 } } });
    expect(expectError(field, 400, 'validation_failed').details[0]).toMatchObject({ path: 'metadata.a\\u0000b', code: 'invalid_characters' });

    const query = await call(platform.app, 'GET', `${CRM}/contacts?search=%00`, { key });
    const queryError = expectError(query, 400, 'validation_failed');
    expect(queryError.details).toEqual([{ path: 'search', code: 'invalid_characters', message: 'query search contains a control character (U+0000), which is not allowed.' }]);

    // Query strings are never free text: even a tab is refused there.
    expect(expectError(await call(platform.app, 'GET', `${CRM}/contacts?search=a%09b`, { key }), 400, 'validation_failed').details[0]).toMatchObject({ path: 'search' });

    // A path with a control character names no resource, like any wrong-shaped id.
    expectError(await call(platform.app, 'GET', '/api/v1/services/forms/forms/by-slug/a%00b', { key }), 404, 'not_found');
  });
});

describe('body shapes', () => {
  it.each(['null', '[]', '[{}]', '0', '"archive"', 'true'])('refuses %s on a no-body action with 400 validation_failed', async (body) => {
    const id = await createCustomer();
    const error = expectError(await call(platform.app, 'POST', `${CUSTOMERS}/${id}/archive`, { key, body }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: '', code: 'invalid_type' });
    expect((await call(platform.app, 'GET', `${CUSTOMERS}/${id}`, { key })).json().data.is_active).toBe(true);
  });

  it('refuses fields on a no-body action, naming each', async () => {
    const id = await createCustomer();
    const error = expectError(await call(platform.app, 'POST', `${CUSTOMERS}/${id}/archive`, { key, body: { reason: 'x' } }), 400, 'validation_failed');
    expect(error.details).toEqual([{ path: 'reason', code: 'unknown_field', message: 'reason is not a known field; this operation takes no body.' }]);
  });

  it('takes a no-body action with no body, an empty body or {}, with or without Content-Type', async () => {
    const id = await createCustomer();
    const archive = `${CUSTOMERS}/${id}/archive`;
    const unarchive = `${CUSTOMERS}/${id}/unarchive`;
    const requests: Array<{ payload?: string; contentType?: string }> = [
      {},
      { payload: '' },
      { payload: '', contentType: 'application/json' },
      { payload: '{}' },
      { payload: '{}', contentType: 'application/json' },
      { payload: ' { } ', contentType: 'application/json; charset=utf-8' },
    ];
    for (const { payload, contentType } of requests) {
      for (const url of [archive, unarchive]) {
        const response = await platform.app.inject({
          method: 'POST',
          url,
          headers: { authorization: `Bearer ${key}`, ...(contentType ? { 'content-type': contentType } : {}) },
          ...(payload === undefined ? {} : { payload }),
        });
        expect(response.statusCode, `${url} ${JSON.stringify({ payload, contentType })}: ${response.body}`).toBe(200);
      }
    }
    // Still JSON only: another media type is 415.
    expectError(await call(platform.app, 'POST', archive, { key, body: '{}', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
  });

  it('reads an absent body as {} where no field is required (PATCH), and refuses null there', async () => {
    const contact = await createContact('Grace Hopper');
    const untouched = await call(platform.app, 'PATCH', `${CRM}/contacts/${contact.id}`, { key });
    expect(untouched.statusCode, untouched.body).toBe(200);
    expect(untouched.json().data.name).toBe('Grace Hopper');
    expect(expectError(await call(platform.app, 'PATCH', `${CRM}/contacts/${contact.id}`, { key, body: 'null' }), 400, 'validation_failed').details[0]).toMatchObject({
      path: '',
      code: 'invalid_type',
    });
  });

  it('refuses a missing body where fields are required, and non-objects there too', async () => {
    const missing = await call(platform.app, 'POST', `${CRM}/contacts`, { key });
    expect(expectError(missing, 400, 'validation_failed').details[0]).toMatchObject({ path: '', code: 'required' });
    for (const body of ['null', '[]', '42']) {
      expect(expectError(await call(platform.app, 'POST', `${CRM}/contacts`, { key, body }), 400, 'validation_failed').details[0]).toMatchObject({ code: 'invalid_type' });
    }
  });

  it('refuses query parameters on an operation that declares none', async () => {
    const contact = await createContact();
    const error = expectError(await call(platform.app, 'GET', `${CRM}/contacts/${contact.id}?expand=all`, { key }), 400, 'validation_failed');
    expect(error.details).toEqual([{ path: 'expand', code: 'unknown_field', message: 'query expand is not a known field.' }]);
  });

  it('refuses bodies nested deeper than the limit, and survives 10,000 levels', async () => {
    const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const users = '/api/v1/services/customer-auth/users';
    const fine = await call(platform.app, 'POST', users, { key, body: `{"email":"deep@example.com","metadata":${nested(10)}}` });
    expect(fine.statusCode, fine.body).toBe(201);
    const tooDeep = await call(platform.app, 'POST', users, { key, body: `{"email":"deeper@example.com","metadata":${nested(MAX_JSON_DEPTH)}}` });
    expect(expectError(tooDeep, 400, 'validation_failed').details[0]!.message).toContain(`nested more than ${MAX_JSON_DEPTH} levels deep`);
    expectError(await call(platform.app, 'POST', users, { key, body: nested(10_000) }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', users, { key, body: `[${'['.repeat(10_000)}${']'.repeat(10_000)}]` }), 400, 'validation_failed');
  });
});

describe('encodings and prototype keys', () => {
  it('refuses invalid UTF-8 with 400 invalid_json instead of storing replacement characters', async () => {
    for (const bytes of [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const payload = Buffer.concat([Buffer.from('{"name":"Ada'), Buffer.from(bytes), Buffer.from('"}')]);
      const response = await platform.app.inject({
        method: 'POST',
        url: `${CRM}/contacts`,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload,
      });
      expect(expectError(response, 400, 'invalid_json').message).toContain('UTF-8');
    }
    const valid = await call(platform.app, 'POST', `${CRM}/contacts`, { key, body: { name: 'Ada Lovelace – Zoë' } });
    expect(valid.json().data.name).toBe('Ada Lovelace – Zoë');
  });

  it('reads a UTF-8 byte order mark as nothing', async () => {
    const payload = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"Bom"}')]);
    const response = await platform.app.inject({
      method: 'POST',
      url: `${CRM}/contacts`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload,
    });
    expect(response.statusCode, response.body).toBe(201);
  });

  it('refuses __proto__ and constructor.prototype keys at any depth, never a 5xx', async () => {
    const bodies = [
      '{"__proto__":{"x":1}}',
      '{"name":"Ada","__proto__":{"admin":true}}',
      '{"name":"Ada","constructor":{"prototype":{"admin":true}}}',
      '{"email":"p@example.com","metadata":{"nested":{"__proto__":{"admin":true}}}}',
      '{"email":"p@example.com","metadata":{"\\u005f_proto__":{"admin":true}}}',
    ];
    for (const body of bodies) {
      const url = body.includes('email') ? '/api/v1/services/customer-auth/users' : `${CRM}/contacts`;
      const error = expectError(await call(platform.app, 'POST', url, { key, body }), 400, 'validation_failed');
      expect(
        error.details.some((detail) => detail.code === 'reserved_name'),
        body,
      ).toBe(true);
    }
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('keeps 413 for bodies over 1 MiB and invalid_json for an empty body where one is required', async () => {
    expectError(await call(platform.app, 'POST', `${CRM}/contacts`, { key, body: { name: 'x'.repeat(1024 * 1024) } }), 413, 'payload_too_large');
    expectError(await call(platform.app, 'POST', `${CRM}/contacts`, { key, body: '', headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
  });
});

describe('the last fence: values PostgreSQL refuses', () => {
  it.each([
    ['1e308', 'integer'],
    ['99999999999', 'integer'],
    ['10000-99-99', 'date'],
  ])('answers %s as %s with 400, not 500', async (value, as) => {
    const response = await call(platform.app, 'POST', `${CRM}/test-cast`, { key, body: { value, as } });
    expect(expectError(response, 400, 'validation_failed').details[0]).toMatchObject({ path: '', code: 'invalid_value' });
  });

  it('still answers values PostgreSQL takes', async () => {
    const response = await call(platform.app, 'POST', `${CRM}/test-cast`, { key, body: { value: '42', as: 'integer' } });
    expect(response.json()).toEqual({ data: { value: '42' } });
  });
});

describe('the guard as a unit', () => {
  it('passes clean input without building any details, and describes what it refuses', () => {
    const clean = { name: 'Zoë 😀', notes: 'a\tb\r\nc', tags: ['x', 'y'], nested: { deep: [{ ok: true, n: 1e308 }] } };
    expect(isSafeInput(clean, 'body')).toBe(true);
    expect(isSafeInput({ search: 'a\tb' }, 'querystring')).toBe(false);
    expect(isSafeInput({ 'a\nb': 'x' }, 'body')).toBe(false);
    expect(describeUnsafeInput({ items: [{ a: 'ok' }, { a: 'x\u0000' }] }, 'body')).toEqual([
      { path: 'items[1].a', code: 'invalid_characters', message: 'items[1].a contains a control character (U+0000), which is not allowed.' },
    ]);
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`f${index}`, '\u0001']));
    expect(describeUnsafeInput(many, 'body')).toHaveLength(20);
  });
});
