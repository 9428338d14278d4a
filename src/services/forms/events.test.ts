import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presentEvent } from '../../platform/events/event-log.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/forms';
const FIELDS = [
  { key: 'name', label: 'Your name', type: 'text', required: true },
  { key: 'email', label: 'Email', type: 'email', required: true },
];

async function eventsOf(tenantId: string, type: string) {
  const { rows } = await platform.runtime.events.list({ tenantId, mode: 'test' }, { type }, { limit: 50, offset: 0 });
  return rows.map(presentEvent);
}

function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

async function createForm(key: string, status: string) {
  const response = await call(platform.app, 'POST', `${BASE}/forms`, { key, body: { name: 'Contact us', status, fields: FIELDS } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data as { id: string; slug: string };
}

describe('forms.submission.created', () => {
  it('records the submission as GET returns it', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const form = await createForm(key, 'published');
    const body = { data: { name: 'Ada', email: 'ada@example.com' }, metadata: { ip: '192.0.2.1' } };
    const submitted = await call(platform.app, 'POST', `${BASE}/forms/${form.slug}/submit`, { key, body });
    expect(submitted.statusCode, submitted.body).toBe(201);
    // The list, unlike GET of one submission, does not mark it read: it shows the submission as created.
    const listed = (await call(platform.app, 'GET', `${BASE}/forms/${form.id}/submissions`, { key })).json().data;
    expect(listed).toHaveLength(1);

    const events = await eventsOf(tenant.id, 'forms.submission.created');
    expect(events).toHaveLength(1);
    expect(events[0]!.livemode).toBe(false);
    expect(asJson(events[0]!.data.object)).toEqual(listed[0]);
    expect(asJson(events[0]!.data.object)).toEqual(submitted.json().data);
    const read = (await call(platform.app, 'GET', `${BASE}/forms/${form.id}/submissions/${listed[0].id}`, { key })).json().data;
    expect(asJson(events[0]!.data.object)).toEqual({ ...read, read: false, read_at: null });
  });

  it('records nothing for a refused submission', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const published = await createForm(key, 'published');
    const draft = await createForm(key, 'draft');
    expectError(
      await call(platform.app, 'POST', `${BASE}/forms/${draft.slug}/submit`, { key, body: { data: { name: 'Ada', email: 'ada@example.com' } } }),
      409,
      'form_not_published',
    );
    expectError(
      await call(platform.app, 'POST', `${BASE}/forms/${published.slug}/submit`, { key, body: { data: { name: 'Ada', email: 'not an email' } } }),
      400,
      'validation_failed',
    );
    expect(await eventsOf(tenant.id, 'forms.submission.created')).toEqual([]);
  });

  it('records one event when a submission is replayed with the same Idempotency-Key', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const form = await createForm(key, 'published');
    const request = { key, headers: { 'idempotency-key': 'submit-ada' }, body: { data: { name: 'Ada', email: 'ada@example.com' } } };
    const first = await call(platform.app, 'POST', `${BASE}/forms/${form.slug}/submit`, request);
    const again = await call(platform.app, 'POST', `${BASE}/forms/${form.slug}/submit`, request);
    expect(again.json().data).toEqual(first.json().data);

    const events = await eventsOf(tenant.id, 'forms.submission.created');
    expect(events).toHaveLength(1);
    expect(asJson(events[0]!.data.object)).toEqual(first.json().data);
  });
});
