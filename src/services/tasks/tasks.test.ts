import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { BASE, fixtures, inDays } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { send, createTask, assign, taskWithAssignment, detail } = fixtures(() => platform);
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function newKey() {
  return (await platform.newTenant()).key();
}

describe('categories', () => {
  it('creates, reads, lists, updates and deletes a category with a default grading scheme', async () => {
    const key = await newKey();
    const category = await send(key, 'POST', '/categories', { name: ' Homework ' });
    expect(category).toEqual({
      id: expect.any(Number),
      name: 'Homework',
      description: null,
      grading_scheme: 'points',
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: category.created_at,
    });
    expect(await send(key, 'GET', `/categories/${category.id}`)).toEqual(category);
    const list = (await call(platform.app, 'GET', `${BASE}/categories`, { key })).json();
    expect(list.data).toEqual([category]);
    expect(list.meta).toEqual({ limit: 50, offset: 0, total: 1, has_more: false });
    const updated = await send(key, 'PATCH', `/categories/${category.id}`, { grading_scheme: 'letter', expected_updated_at: category.updated_at });
    expect(updated.grading_scheme).toBe('letter');
    expectError(
      await call(platform.app, 'PATCH', `${BASE}/categories/${category.id}`, { key, body: { name: 'X', expected_updated_at: category.updated_at } }),
      409,
      'stale_update',
    );
    await createTask(key, { category_id: category.id });
    expectError(await call(platform.app, 'DELETE', `${BASE}/categories/${category.id}`, { key }), 409, 'conflict');
    const empty = await send(key, 'POST', '/categories', { name: 'Empty', grading_scheme: 'rubric' });
    expect(await send(key, 'DELETE', `/categories/${empty.id}`)).toEqual({ id: empty.id, deleted: true });
    expectError(await call(platform.app, 'GET', `${BASE}/categories/${empty.id}`, { key }), 404, 'not_found');
  });

  it('refuses an unknown grading scheme', async () => {
    const key = await newKey();
    const error = expectError(await call(platform.app, 'POST', `${BASE}/categories`, { key, body: { name: 'X', grading_scheme: 'stars' } }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('grading_scheme');
  });
});

describe('tasks', () => {
  it('creates a task with every field of the spec and its defaults, and reads it back', async () => {
    const key = await newKey();
    const task = await send(key, 'POST', '/tasks', { title: '  Week 3 essay  ' });
    expect(task).toEqual({
      id: expect.any(Number),
      category_id: null,
      title: 'Week 3 essay',
      instructions: null,
      priority: 'normal',
      status: 'draft',
      due_at: null,
      schedule_mode: 'one_time',
      starts_at: null,
      recurrence_rule: null,
      recurrence_parent_id: null,
      occurrence_at: null,
      submission_mode: 'none',
      required_files: 0,
      allowed_submission_count: null,
      allow_late_submission: true,
      grading_scheme: null,
      max_score: null,
      weight: 1,
      review_stages: 1,
      rubric: [],
      checklist: [],
      attachments: [],
      custom_fields: {},
      source: 'api',
      template_id: null,
      assignment_count: 0,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: task.created_at,
    });
    expect(await send(key, 'GET', `/tasks/${task.id}`)).toEqual(task);
  });

  it('keeps rubric, checklist, attachments, custom fields and numbers as sent', async () => {
    const key = await newKey();
    const category = await send(key, 'POST', '/categories', { name: 'Labs' });
    const body = {
      title: 'Lab report',
      category_id: category.id,
      instructions: 'Write it up.',
      priority: 'urgent',
      submission_mode: 'note_and_files',
      required_files: 2,
      allowed_submission_count: 3,
      allow_late_submission: false,
      grading_scheme: 'rubric',
      max_score: 20,
      weight: 2.5,
      review_stages: 2,
      rubric: [{ id: 'acc', label: 'Accuracy', max_score: 10, weight: 2 }],
      checklist: [{ id: 'c1', label: 'Sign', required: true, requires_note: true, requires_file: false }],
      attachments: [{ filename: 'brief.pdf', mime: 'application/pdf', size_bytes: 10, download_url: 'https://files.example.com/brief.pdf', content_url: '/files/brief.pdf' }],
      custom_fields: { cost_centre: 'CC-1' },
      source: 'manual',
      template_id: 9,
    };
    const task = await send(key, 'POST', '/tasks', body);
    const { attachments, ...rest } = body;
    expect(task).toMatchObject(rest);
    expect(task.attachments).toEqual(attachments);
  });

  it('refuses bad input with 400 naming the field, never a 5xx', async () => {
    const key = await newKey();
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'title'],
      [{ title: '' }, 'title'],
      [{ title: 'x', submission_mode: 'video' }, 'submission_mode'],
      [{ title: 'x', priority: 'extreme' }, 'priority'],
      [{ title: 'x', status: 'archived' }, 'status'],
      [{ title: 'x', schedule_mode: 'scheduled' }, 'starts_at'],
      [{ title: 'x', schedule_mode: 'recurring', starts_at: inDays(platform, 1) }, 'recurrence_rule'],
      [{ title: 'x', schedule_mode: 'recurring', starts_at: inDays(platform, 1), recurrence_rule: 'FREQ=YEARLY' }, 'recurrence_rule'],
      [{ title: 'x', submission_mode: 'note', required_files: 1 }, 'required_files'],
      [{ title: 'x', category_id: 999999 }, 'category_id'],
      [
        {
          title: 'x',
          checklist: [
            { id: 'a', label: 'A', required: true },
            { id: 'a', label: 'B', required: false },
          ],
        },
        'checklist[1].id',
      ],
      [{ title: 'x', due_at: 'tomorrow' }, 'due_at'],
      [{ title: 'x', max_score: 'Infinity' }, 'max_score'],
      [{ title: 'x', extra: 1 }, 'extra'],
    ];
    for (const [body, path] of cases) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/tasks`, { key, body }), 400, 'validation_failed');
      expect(
        error.details.map((detail: { path: string }) => detail.path),
        JSON.stringify(body),
      ).toContain(path);
    }
  });

  it('lists with status, category, priority filters, case-insensitive title search and limits', async () => {
    const key = await newKey();
    const category = await send(key, 'POST', '/categories', { name: 'Ops' });
    const a = await createTask(key, { title: 'Quarterly REPORT', priority: 'high', category_id: category.id });
    const b = await send(key, 'POST', '/tasks', { title: 'Weekly report draft', priority: 'low' });
    const c = await createTask(key, { title: 'Clean 100%_done', priority: 'high' });
    const list = async (query: string) => (await call(platform.app, 'GET', `${BASE}/tasks${query}`, { key })).json();
    expect((await list('')).data.map((task: { id: number }) => task.id)).toEqual([c.id, b.id, a.id]);
    expect((await list('?search=report')).data.map((task: { id: number }) => task.id)).toEqual([b.id, a.id]);
    expect((await list('?search=RePoRt&priority=high')).data.map((task: { id: number }) => task.id)).toEqual([a.id]);
    expect((await list('?search=%25_')).data.map((task: { id: number }) => task.id)).toEqual([c.id]);
    expect((await list('?status=draft')).data.map((task: { id: number }) => task.id)).toEqual([b.id]);
    expect((await list(`?category_id=${category.id}`)).data.map((task: { id: number }) => task.id)).toEqual([a.id]);
    const page = await list('?limit=2&offset=1');
    expect(page.data.map((task: { id: number }) => task.id)).toEqual([b.id, a.id]);
    expect(page.meta).toEqual({ limit: 2, offset: 1, total: 3, has_more: false });
    expect((await list('?limit=1')).meta).toEqual({ limit: 1, offset: 0, total: 3, has_more: true });
    for (const query of ['?limit=0', '?limit=201', '?offset=-1', '?status=open', '?priority=max', '?category_id=abc']) {
      expectError(await call(platform.app, 'GET', `${BASE}/tasks${query}`, { key }), 400, 'validation_failed');
    }
  });

  it('refuses a stale update with 409 stale_update and applies a fresh one', async () => {
    const key = await newKey();
    const task = await createTask(key);
    const updated = await send(key, 'PATCH', `/tasks/${task.id}`, { title: 'Renamed', expected_updated_at: task.updated_at });
    expect(updated.title).toBe('Renamed');
    expect(updated.updated_at > task.updated_at).toBe(true);
    const error = expectError(
      await call(platform.app, 'PATCH', `${BASE}/tasks/${task.id}`, { key, body: { title: 'Again', expected_updated_at: task.updated_at } }),
      409,
      'stale_update',
    );
    expect(error.details[0]).toMatchObject({ path: 'expected_updated_at', current_updated_at: updated.updated_at });
    expect((await send(key, 'GET', `/tasks/${task.id}`)).title).toBe('Renamed');
  });

  it('moves status as a state machine and refuses other moves with 409', async () => {
    const key = await newKey();
    const task = await send(key, 'POST', '/tasks', { title: 'Flow' });
    const move = (status: string) => call(platform.app, 'PATCH', `${BASE}/tasks/${task.id}`, { key, body: { status } });
    expectError(await move('paused'), 409, 'invalid_status_transition');
    expectError(await move('completed'), 409, 'invalid_status_transition');
    for (const status of ['published', 'paused', 'published', 'completed', 'published', 'archived']) {
      expect((await move(status)).json().data.status).toBe(status);
    }
    for (const status of ['published', 'draft', 'cancelled']) expectError(await move(status), 409, 'invalid_status_transition');
  });

  it('cancelling cascades to open assignments, leaving finished ones alone, with an event each', async () => {
    const key = await newKey();
    const task = await createTask(key, { review_stages: 0 });
    const [open, started, done] = await assign(key, task.id, [7, 8, 9]);
    await send(key, 'POST', `/assignments/${started.id}/start`, {}, 200);
    await send(key, 'POST', `/assignments/${done.id}/submissions`, {});
    await send(key, 'PATCH', `/tasks/${task.id}`, { status: 'cancelled', actor_user_id: 1 });
    expect((await detail(key, open.id)).assignment.status).toBe('cancelled');
    expect((await detail(key, started.id)).assignment.status).toBe('cancelled');
    expect((await detail(key, done.id)).assignment.status).toBe('completed');
    const events = (await detail(key, started.id)).events;
    expect(events.at(-1)).toMatchObject({ event_type: 'cancelled', from_value: 'in_progress', to_value: 'cancelled', changed_by: 1 });
    expectError(await call(platform.app, 'POST', `${BASE}/tasks/${task.id}/assignments`, { key, body: { user_ids: [10], actor_user_id: 1 } }), 409, 'invalid_status_transition');
  });

  it('deletes a task and answers 404 after', async () => {
    const key = await newKey();
    const { task, assignment } = await taskWithAssignment(key);
    expect(await send(key, 'DELETE', `/tasks/${task.id}`)).toEqual({ id: task.id, deleted: true });
    expectError(await call(platform.app, 'GET', `${BASE}/tasks/${task.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/assignments/${assignment.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'DELETE', `${BASE}/tasks/${task.id}`, { key }), 404, 'not_found');
  });

  it("does not show another tenant's task", async () => {
    const task = await createTask(await newKey());
    expectError(await call(platform.app, 'GET', `${BASE}/tasks/${task.id}`, { key: await newKey() }), 404, 'not_found');
  });

  it('honours Idempotency-Key on POST', async () => {
    const key = await newKey();
    const headers = { 'idempotency-key': '6f1d1b7e-8c1a-4c39-a0a2-bb6a1f0d2f11' };
    const first = await call(platform.app, 'POST', `${BASE}/tasks`, { key, body: { title: 'Once' }, headers });
    const second = await call(platform.app, 'POST', `${BASE}/tasks`, { key, body: { title: 'Once' }, headers });
    expect(second.statusCode).toBe(201);
    expect(second.json()).toEqual(first.json());
    expect((await call(platform.app, 'GET', `${BASE}/tasks`, { key })).json().meta.total).toBe(1);
    expectError(await call(platform.app, 'POST', `${BASE}/tasks`, { key, body: { title: 'Other' }, headers }), 409, 'idempotency_key_conflict');
  });
});
