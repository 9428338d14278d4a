import { expect } from 'vitest';
import { call, type TestPlatform } from '../../../test/harness.js';

export const BASE = '/api/v1/services/tasks';
export const DAY = 24 * 3600 * 1000;
/** An instant `days` from the clock the test runs under. */
export const inDays = (platform: TestPlatform, days: number) => new Date(platform.clock.now().getTime() + days * DAY).toISOString();

export function fixtures(getPlatform: () => TestPlatform) {
  async function send(key: string, method: string, path: string, body?: unknown, status = method === 'POST' ? 201 : 200) {
    const response = await call(getPlatform().app, method, `${BASE}${path}`, { key, ...(body === undefined ? {} : { body }) });
    expect(response.statusCode, response.body).toBe(status);
    return response.json().data;
  }
  const createTask = (key: string, body: Record<string, unknown> = {}) =>
    send(key, 'POST', '/tasks', { title: 'Week 3 essay', status: 'published', due_at: inDays(getPlatform(), 7), ...body });
  async function assign(key: string, taskId: number, userIds: number[] = [7], body: Record<string, unknown> = {}) {
    return send(key, 'POST', `/tasks/${taskId}/assignments`, { user_ids: userIds, actor_user_id: 1, ...body });
  }
  async function taskWithAssignment(key: string, task: Record<string, unknown> = {}, user = 7) {
    const made = await createTask(key, task);
    const [assignment] = await assign(key, made.id, [user]);
    return { task: made, assignment };
  }
  const detail = (key: string, assignmentId: number) => send(key, 'GET', `/assignments/${assignmentId}`);
  /** The reply split into the submission and the assignment beside it. */
  async function submit(key: string, assignmentId: number, body: Record<string, unknown> = {}, status = 201) {
    const { assignment, ...submission } = await send(key, 'POST', `/assignments/${assignmentId}/submissions`, body, status);
    return { submission, assignment };
  }
  async function review(key: string, submissionId: number, body: Record<string, unknown>, status = 201) {
    const { assignment, ...made } = await send(key, 'POST', `/submissions/${submissionId}/reviews`, { actor_user_id: 2, decision: 'approved', ...body }, status);
    return { review: made, assignment };
  }
  return { send, createTask, assign, taskWithAssignment, detail, submit, review };
}

export const FILE = { filename: 'report.pdf', mime: 'application/pdf', size_bytes: 2048, download_url: 'https://files.example.com/tmp/report.pdf' };
