import { afterAll, beforeAll } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { BASE, fixtures } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { send, taskWithAssignment, submit } = fixtures(() => platform);
const VIEW = 'service.tasks.view';
const MANAGE = 'service.tasks.manage';
const getPlatform = () => platform;

type Ids = { category: number; task: number; assignment: number; submission: number; link: number };

/** A category, a task in it assigned to user 7 with one submission, and a link of the task. */
async function world(key: string): Promise<Ids> {
  const category = await send(key, 'POST', '/categories', { name: 'Security' });
  const { task, assignment } = await taskWithAssignment(key, { category_id: category.id, checklist: [{ id: 'c1', label: 'One', required: false }] });
  const { submission } = await submit(key, assignment.id, {});
  const link = await send(key, 'POST', `/tasks/${task.id}/links`, { source: 'my-leads', source_id: '1' });
  return { category: category.id, task: task.id, assignment: assignment.id, submission: submission.id, link: link.id };
}

/** A task with an open assignment (for moves that need one still being worked on). */
async function openAssignment(key: string): Promise<Ids> {
  const { task, assignment } = await taskWithAssignment(key, { checklist: [{ id: 'c1', label: 'One', required: false }] });
  return { category: 0, task: task.id, assignment: assignment.id, submission: 0, link: 0 };
}

const lists = [{ url: () => `${BASE}/categories` }, { url: () => `${BASE}/tasks` }, { url: () => `${BASE}/assignments?assignee_user_id=7` }];
for (const route of lists) describeRouteSecurity(getPlatform, { method: 'GET', scope: VIEW, addressesOneRow: false, ...route });

describeRouteSecurity(getPlatform, { method: 'POST', scope: MANAGE, addressesOneRow: false, url: () => `${BASE}/categories`, body: () => ({ name: 'New' }) });
describeRouteSecurity(getPlatform, { method: 'POST', scope: MANAGE, addressesOneRow: false, url: () => `${BASE}/tasks`, body: () => ({ title: 'New' }) });

const oneRow: { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; scope: string; url: (ids: Ids) => string; body?: (ids: Ids) => unknown; setup?: (key: string) => Promise<Ids> }[] = [
  { method: 'GET', scope: VIEW, url: (ids) => `${BASE}/categories/${ids.category}` },
  { method: 'PATCH', scope: MANAGE, url: (ids) => `${BASE}/categories/${ids.category}`, body: () => ({ name: 'Renamed' }) },
  {
    method: 'DELETE',
    scope: MANAGE,
    setup: async (key) => ({ category: (await send(key, 'POST', '/categories', { name: 'Empty' })).id, task: 0, assignment: 0, submission: 0, link: 0 }),
    url: (ids) => `${BASE}/categories/${ids.category}`,
  },
  { method: 'GET', scope: VIEW, url: (ids) => `${BASE}/categories/${ids.category}/rollup?assignee_user_id=7` },
  { method: 'GET', scope: VIEW, url: (ids) => `${BASE}/tasks/${ids.task}` },
  { method: 'PATCH', scope: MANAGE, url: (ids) => `${BASE}/tasks/${ids.task}`, body: () => ({ title: 'Renamed' }) },
  { method: 'DELETE', scope: MANAGE, url: (ids) => `${BASE}/tasks/${ids.task}` },
  { method: 'POST', scope: MANAGE, url: (ids) => `${BASE}/tasks/${ids.task}/assignments`, body: () => ({ user_ids: [8], actor_user_id: 1 }) },
  { method: 'GET', scope: VIEW, url: (ids) => `${BASE}/assignments/${ids.assignment}` },
  { method: 'POST', scope: MANAGE, setup: openAssignment, url: (ids) => `${BASE}/assignments/${ids.assignment}/start`, body: () => ({}) },
  { method: 'PATCH', scope: MANAGE, setup: openAssignment, url: (ids) => `${BASE}/assignments/${ids.assignment}`, body: () => ({ custom_fields: { room: 'A1' } }) },
  { method: 'POST', scope: MANAGE, setup: openAssignment, url: (ids) => `${BASE}/assignments/${ids.assignment}/reassign`, body: () => ({ actor_user_id: 1, to_user_id: 8 }) },
  {
    method: 'POST',
    scope: MANAGE,
    setup: openAssignment,
    url: (ids) => `${BASE}/assignments/${ids.assignment}/delegate`,
    body: () => ({ actor_user_id: 1, to_user_id: 8, reason: 'Away' }),
  },
  {
    method: 'POST',
    scope: MANAGE,
    setup: openAssignment,
    url: (ids) => `${BASE}/assignments/${ids.assignment}/extend-due`,
    body: () => ({ due_at: new Date(Date.now() + 30 * 86400000).toISOString() }),
  },
  { method: 'POST', scope: MANAGE, setup: openAssignment, url: (ids) => `${BASE}/assignments/${ids.assignment}/checklist/c1`, body: () => ({ actor_user_id: 7 }) },
  { method: 'POST', scope: MANAGE, setup: openAssignment, url: (ids) => `${BASE}/assignments/${ids.assignment}/submissions`, body: () => ({ note: 'Done' }) },
  {
    method: 'POST',
    scope: MANAGE,
    setup: async (key) => {
      const { task, assignment } = await taskWithAssignment(key, { review_stages: 0 });
      await submit(key, assignment.id, {});
      return { category: 0, task: task.id, assignment: assignment.id, submission: 0, link: 0 };
    },
    url: (ids) => `${BASE}/assignments/${ids.assignment}/reopen`,
    body: () => ({}),
  },
  { method: 'POST', scope: MANAGE, url: (ids) => `${BASE}/submissions/${ids.submission}/reviews`, body: () => ({ actor_user_id: 2, decision: 'approved' }) },
  { method: 'POST', scope: MANAGE, url: (ids) => `${BASE}/tasks/${ids.task}/links`, body: () => ({ source: 'smart-chat', source_id: 'c-1' }) },
  { method: 'GET', scope: VIEW, url: (ids) => `${BASE}/tasks/${ids.task}/links` },
  { method: 'DELETE', scope: MANAGE, url: (ids) => `${BASE}/tasks/${ids.task}/links/${ids.link}` },
];
for (const route of oneRow) describeRouteSecurity(getPlatform, { setup: world, addressesOneRow: true, ...route });
