import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { asJson, recordedEvents } from '../../../test/recorded-events.js';
import { BASE, fixtures } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { send, createTask, assign, submit, review, detail } = fixtures(() => platform);

async function newTenant() {
  const tenant = await platform.newTenant();
  return { tenantId: tenant.id, key: await tenant.key() };
}

const objects = async (tenantId: string, type: string) => (await recordedEvents(platform, tenantId, type)).map((event) => event.data.object);

describe('events', () => {
  it('records one event per task change, carrying the task as GET shows it', async () => {
    const { tenantId, key } = await newTenant();
    const task = await createTask(key);
    expect(await objects(tenantId, 'tasks.task.created')).toEqual([asJson(task)]);
    const updated = await send(key, 'PATCH', `/tasks/${task.id}`, { title: 'Renamed' });
    expect(await objects(tenantId, 'tasks.task.updated')).toEqual([asJson(await send(key, 'GET', `/tasks/${task.id}`))]);
    expect(updated.title).toBe('Renamed');
    // Refused changes record nothing.
    expectError(await call(platform.app, 'PATCH', `${BASE}/tasks/${task.id}`, { key, body: { status: 'draft' } }), 409, 'invalid_status_transition');
    expectError(await call(platform.app, 'PATCH', `${BASE}/tasks/${task.id}`, { key, body: { title: 'x', expected_updated_at: task.updated_at } }), 409, 'stale_update');
    expect(await objects(tenantId, 'tasks.task.updated')).toHaveLength(1);
    const gone = await send(key, 'GET', `/tasks/${task.id}`);
    await send(key, 'DELETE', `/tasks/${task.id}`);
    expect(await objects(tenantId, 'tasks.task.deleted')).toEqual([asJson(gone)]);
  });

  it('records assignment moves with the assignment as GET shows it, and nothing on an idempotent replay', async () => {
    const { tenantId, key } = await newTenant();
    const task = await createTask(key, { max_score: 10 });
    const headers = { 'idempotency-key': '0d1b7c7e-8c1a-4c39-a0a2-bb6a1f0d2f22' };
    const first = await call(platform.app, 'POST', `${BASE}/tasks/${task.id}/assignments`, { key, body: { user_ids: [7], actor_user_id: 1 }, headers });
    const replay = await call(platform.app, 'POST', `${BASE}/tasks/${task.id}/assignments`, { key, body: { user_ids: [7], actor_user_id: 1 }, headers });
    expect(replay.json()).toEqual(first.json());
    const [assignment] = first.json().data;
    expect(await objects(tenantId, 'tasks.assignment.created')).toEqual([asJson(assignment)]);
    await send(key, 'POST', `/assignments/${assignment.id}/start`, {}, 200);
    const { submission } = await submit(key, assignment.id, {});
    expect(await objects(tenantId, 'tasks.submission.created')).toEqual([asJson((await detail(key, assignment.id)).submissions[0])]);
    await review(key, submission.id, { score: 7 });
    const shown = await detail(key, assignment.id);
    expect(await objects(tenantId, 'tasks.review.created')).toEqual([asJson(shown.reviews[0])]);
    const updates = await objects(tenantId, 'tasks.assignment.updated');
    expect(updates).toHaveLength(3);
    expect(updates[0]).toEqual(asJson(shown.assignment));
    // The same due date again changes nothing and records nothing.
    await send(key, 'POST', `/assignments/${assignment.id}/extend-due`, { due_at: shown.assignment.due_at }, 200);
    expect(await objects(tenantId, 'tasks.assignment.updated')).toHaveLength(3);
    expect((await assign(key, task.id, [8])).length).toBe(1);
    expect(await objects(tenantId, 'tasks.assignment.created')).toHaveLength(2);
  });

  it('records categories and links', async () => {
    const { tenantId, key } = await newTenant();
    const category = await send(key, 'POST', '/categories', { name: 'A' });
    expect(await objects(tenantId, 'tasks.category.created')).toEqual([asJson(category)]);
    const task = await createTask(key);
    const link = await send(key, 'POST', `/tasks/${task.id}/links`, { source: 'my-leads', source_id: '5' });
    expect(await objects(tenantId, 'tasks.link.created')).toEqual([asJson(link)]);
    await send(key, 'POST', `/tasks/${task.id}/links`, { source: 'my-leads', source_id: '5' });
    expect(await objects(tenantId, 'tasks.link.created')).toHaveLength(1);
    await send(key, 'DELETE', `/tasks/${task.id}/links/${link.id}`);
    expect(await objects(tenantId, 'tasks.link.deleted')).toEqual([asJson(link)]);
  });
});
