import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { BASE, DAY, FILE, fixtures, inDays } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { send, createTask, assign, taskWithAssignment, detail, submit, review } = fixtures(() => platform);
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const newKey = async () => (await platform.newTenant()).key();
const post = (key: string, path: string, body: unknown) => call(platform.app, 'POST', `${BASE}${path}`, { key, body });

describe('assigning', () => {
  it('assigns people with the task due date or an override, and GET shows the spec shape', async () => {
    const key = await newKey();
    const task = await createTask(key);
    const [a, b] = await assign(key, task.id, [7, 8]);
    expect(a).toEqual({
      id: expect.any(Number),
      task_id: task.id,
      assignee_user_id: 7,
      assigned_by: 1,
      group_id: null,
      delegated_by: null,
      delegation_reason: null,
      status: 'assigned',
      due_at: task.due_at,
      original_due_at: task.due_at,
      checklist_state: [],
      custom_fields: {},
      score: null,
      attempt_count: 0,
      started_at: null,
      submitted_at: null,
      completed_at: null,
      reopened_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: a.created_at,
    });
    expect(b.assignee_user_id).toBe(8);
    const override = inDays(platform, 3);
    const [c] = await assign(key, task.id, [9], { due_at: override, group_id: 4 });
    expect(c).toMatchObject({ due_at: override, original_due_at: override, group_id: 4 });
    const shown = await detail(key, a.id);
    expect(shown).toEqual({
      assignment: a,
      task: { ...(await send(key, 'GET', `/tasks/${task.id}`)) },
      submissions: [],
      reviews: [],
      events: [
        {
          id: expect.any(Number),
          assignment_id: a.id,
          event_type: 'assigned',
          from_user_id: null,
          to_user_id: 7,
          from_value: null,
          to_value: task.due_at,
          changed_by: 1,
          reason: null,
          created_at: a.created_at,
        },
      ],
    });
    expect(shown.task.assignment_count).toBe(3);
  });

  it('needs actor_user_id, a due date from somewhere, and one open assignment per person', async () => {
    const key = await newKey();
    const task = await createTask(key);
    let error = expectError(await post(key, `/tasks/${task.id}/assignments`, { user_ids: [7] }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('actor_user_id');
    error = expectError(await post(key, `/tasks/${task.id}/assignments`, { user_ids: [7], actor_user_id: 0 }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('actor_user_id');
    const undated = await createTask(key, { due_at: null });
    error = expectError(await post(key, `/tasks/${undated.id}/assignments`, { user_ids: [7], actor_user_id: 1 }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('due_at');
    await assign(key, task.id, [7]);
    expectError(await post(key, `/tasks/${task.id}/assignments`, { user_ids: [7], actor_user_id: 1 }), 409, 'conflict');
    expectError(await post(key, '/tasks/999999/assignments', { user_ids: [7], actor_user_id: 1 }), 404, 'not_found');
    expectError(await post(key, `/tasks/${task.id}/assignments`, { user_ids: [], actor_user_id: 1 }), 400, 'validation_failed');
  });
});

describe('other spellings', () => {
  it('assigns with assignee_user_ids or assignee_user_id, reassigns with assignee_user_id, and PATCHes due_at and custom_fields', async () => {
    const key = await newKey();
    const task = await createTask(key);
    const [a, b] = await send(key, 'POST', `/tasks/${task.id}/assignments`, { assignee_user_ids: [21, 22], actor_user_id: 1 });
    expect([a.assignee_user_id, b.assignee_user_id]).toEqual([21, 22]);
    const [c] = await send(key, 'POST', `/tasks/${task.id}/assignments`, { assignee_user_id: 23, actor_user_id: 1 });
    expect(c.assignee_user_id).toBe(23);
    const error = expectError(await post(key, `/tasks/${task.id}/assignments`, { actor_user_id: 1 }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('user_ids');
    expect((await send(key, 'POST', `/assignments/${a.id}/reassign`, { actor_user_id: 1, assignee_user_id: 24 }, 200)).assignee_user_id).toBe(24);
    expect(expectError(await post(key, `/assignments/${a.id}/reassign`, { actor_user_id: 1 }), 400, 'validation_failed').details[0]?.path).toBe('to_user_id');
    const due = inDays(platform, 20);
    const patched = await send(key, 'PATCH', `/assignments/${b.id}`, { due_at: due, custom_fields: { room: 'B2' }, actor_user_id: 1, expected_updated_at: b.updated_at });
    expect(patched).toMatchObject({ due_at: due, original_due_at: task.due_at, custom_fields: { room: 'B2' } });
    expect((await detail(key, b.id)).events.at(-1)).toMatchObject({ event_type: 'due_changed', from_value: task.due_at, to_value: due, changed_by: 1 });
    expectError(await call(platform.app, 'PATCH', `${BASE}/assignments/${b.id}`, { key, body: { due_at: due, expected_updated_at: b.updated_at } }), 409, 'stale_update');
  });
});

describe('the assignee view', () => {
  it('leaves out paused tasks and scheduled tasks before starts_at unless include_hidden=true', async () => {
    const key = await newKey();
    const visible = (await taskWithAssignment(key, {}, 50)).assignment;
    const paused = await taskWithAssignment(key, {}, 50);
    await send(key, 'PATCH', `/tasks/${paused.task.id}`, { status: 'paused' });
    const later = (await taskWithAssignment(key, { schedule_mode: 'scheduled', starts_at: inDays(platform, 2) }, 50)).assignment;
    const started = (await taskWithAssignment(key, { schedule_mode: 'scheduled', starts_at: inDays(platform, -1) }, 50)).assignment;
    await taskWithAssignment(key, {}, 51);
    const ids = async (query: string) => (await call(platform.app, 'GET', `${BASE}/assignments${query}`, { key })).json().data.map((row: { id: number }) => row.id);
    expect(await ids('?assignee_user_id=50')).toEqual([started.id, visible.id]);
    expect(await ids('?assignee_user_id=50&include_hidden=true')).toEqual([started.id, later.id, paused.assignment.id, visible.id]);
    expect(await ids(`?assignee_user_id=50&task_id=${paused.task.id}`)).toEqual([]);
    expect(await ids('?assignee_user_id=50&status=in_progress')).toEqual([]);
    const page = (await call(platform.app, 'GET', `${BASE}/assignments?assignee_user_id=50&limit=1`, { key })).json();
    expect(page.meta).toEqual({ limit: 1, offset: 0, total: 2, has_more: true });
    platform.clock.advance(3 * DAY);
    try {
      expect(await ids('?assignee_user_id=50')).toEqual([started.id, later.id, visible.id]);
    } finally {
      platform.clock.advance(-3 * DAY);
    }
  });
});

describe('moves and their history', () => {
  it('records the full history of a started, reassigned, delegated, extended, submitted and reviewed assignment', async () => {
    const key = await newKey();
    const { task, assignment } = await taskWithAssignment(key, { submission_mode: 'note', max_score: 10 });
    await send(key, 'POST', `/assignments/${assignment.id}/start`, {}, 200);
    const reassigned = await send(key, 'POST', `/assignments/${assignment.id}/reassign`, { actor_user_id: 1, to_user_id: 8, reason: 'Workload' }, 200);
    expect(reassigned).toMatchObject({ assignee_user_id: 8, delegated_by: null, status: 'in_progress' });
    const delegated = await send(key, 'POST', `/assignments/${assignment.id}/delegate`, { actor_user_id: 8, to_user_id: 9, reason: 'On leave' }, 200);
    expect(delegated).toMatchObject({ assignee_user_id: 9, delegated_by: 8, delegation_reason: 'On leave' });
    const newDue = inDays(platform, 14);
    const extended = await send(key, 'POST', `/assignments/${assignment.id}/extend-due`, { due_at: newDue, actor_user_id: 1, reason: 'Sick note' }, 200);
    expect(extended).toMatchObject({ due_at: newDue, original_due_at: task.due_at });
    const { submission } = await submit(key, assignment.id, { note: 'Done' });
    await review(key, submission.id, { decision: 'changes_requested', feedback: 'More sources', score: 5 });
    const second = (await submit(key, assignment.id, { note: 'Done again' })).submission;
    const reviewed = await review(key, second.id, { decision: 'approved', score: 9 });
    expect(reviewed.assignment).toMatchObject({ status: 'completed', score: 9, attempt_count: 2 });
    const shown = await detail(key, assignment.id);
    expect(shown.submissions.map((row: { attempt_no: number }) => row.attempt_no)).toEqual([2, 1]);
    expect(shown.reviews.map((row: { decision: string; stage: number }) => [row.decision, row.stage])).toEqual([
      ['changes_requested', 1],
      ['approved', 1],
    ]);
    expect(
      shown.events.map((event: Record<string, unknown>) => [
        event.event_type,
        event.from_user_id,
        event.to_user_id,
        event.from_value,
        event.to_value,
        event.changed_by,
        event.reason,
      ]),
    ).toEqual([
      ['assigned', null, 7, null, task.due_at, 1, null],
      ['started', null, null, 'assigned', 'in_progress', 7, null],
      ['reassigned', 7, 8, null, null, 1, 'Workload'],
      ['delegated', 8, 9, null, null, 8, 'On leave'],
      ['due_changed', null, null, task.due_at, newDue, 1, 'Sick note'],
      ['submitted', null, null, 'in_progress', 'submitted', 9, null],
      ['reviewed', null, null, 'stage 1', 'changes_requested', 2, 'More sources'],
      ['returned', null, null, 'submitted', 'returned', 2, 'More sources'],
      ['submitted', null, null, 'returned', 'submitted', 9, null],
      ['reviewed', null, null, 'stage 1', 'approved', 2, null],
      ['completed', null, null, 'submitted', 'completed', 2, null],
    ]);
    const reopened = await send(key, 'POST', `/assignments/${assignment.id}/reopen`, { actor_user_id: 1, reason: 'Regrade' }, 200);
    expect(reopened).toMatchObject({ status: 'in_progress', completed_at: null, reopened_at: expect.stringMatching(/Z$/) });
    expect((await detail(key, assignment.id)).events.at(-1)).toMatchObject({
      event_type: 'reopened',
      from_value: 'completed',
      to_value: 'in_progress',
      changed_by: 1,
      reason: 'Regrade',
    });
  });

  it('refuses moves from the wrong status and transfers without an actor', async () => {
    const key = await newKey();
    const { assignment } = await taskWithAssignment(key);
    expectError(await post(key, `/assignments/${assignment.id}/reopen`, {}), 409, 'invalid_status_transition');
    await send(key, 'POST', `/assignments/${assignment.id}/start`, {}, 200);
    expectError(await post(key, `/assignments/${assignment.id}/start`, {}), 409, 'invalid_status_transition');
    let error = expectError(await post(key, `/assignments/${assignment.id}/reassign`, { to_user_id: 8 }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('actor_user_id');
    error = expectError(await post(key, `/assignments/${assignment.id}/delegate`, { to_user_id: 8 }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('actor_user_id');
    error = expectError(await post(key, `/assignments/${assignment.id}/reassign`, { actor_user_id: 1, to_user_id: 7 }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('to_user_id');
    expectError(await post(key, '/assignments/999999/start', {}), 404, 'not_found');
  });

  it('does not let work happen on a paused task', async () => {
    const key = await newKey();
    const { task, assignment } = await taskWithAssignment(key);
    await send(key, 'PATCH', `/tasks/${task.id}`, { status: 'paused' });
    expectError(await post(key, `/assignments/${assignment.id}/start`, {}), 409, 'invalid_status_transition');
    expectError(await post(key, `/assignments/${assignment.id}/submissions`, {}), 409, 'invalid_status_transition');
  });
});

describe('checklist', () => {
  it('checks items, enforcing requires_note and requires_file, and needs the required ones before submitting', async () => {
    const key = await newKey();
    const { assignment } = await taskWithAssignment(key, {
      checklist: [
        { id: 'sign', label: 'Sign', required: true, requires_note: true },
        { id: 'scan', label: 'Scan', required: false, requires_file: true },
      ],
    });
    let error = expectError(await post(key, `/assignments/${assignment.id}/submissions`, {}), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('checklist_state');
    error = expectError(await post(key, `/assignments/${assignment.id}/checklist/sign`, { note: 'x' }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('actor_user_id');
    error = expectError(await post(key, `/assignments/${assignment.id}/checklist/sign`, { actor_user_id: 7 }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('note');
    error = expectError(await post(key, `/assignments/${assignment.id}/checklist/scan`, { actor_user_id: 7 }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('file');
    expectError(await post(key, `/assignments/${assignment.id}/checklist/nope`, { actor_user_id: 7 }), 404, 'not_found');
    await send(key, 'POST', `/assignments/${assignment.id}/checklist/scan`, { actor_user_id: 7, file: FILE }, 200);
    const checked = await send(key, 'POST', `/assignments/${assignment.id}/checklist/sign`, { actor_user_id: 7, note: 'Signed' }, 200);
    expect(checked.checklist_state).toEqual([
      { id: 'sign', checked_at: expect.any(String), checked_by: 7, note: 'Signed', file: null },
      { id: 'scan', checked_at: expect.any(String), checked_by: 7, note: null, file: { ...FILE, content_url: FILE.download_url } },
    ]);
    const unchecked = await send(key, 'POST', `/assignments/${assignment.id}/checklist/scan`, { actor_user_id: 7, checked: false }, 200);
    expect(unchecked.checklist_state.map((entry: { id: string }) => entry.id)).toEqual(['sign']);
    await submit(key, assignment.id, {});
  });
});

describe('submissions', () => {
  it('enforces each submission_mode', async () => {
    const key = await newKey();
    const cases: [string, Record<string, unknown>, string | null][] = [
      ['none', {}, null],
      ['note', {}, 'note'],
      ['note', { note: '   ' }, 'note'],
      ['note', { note: 'ok' }, null],
      ['files', { note: 'ok' }, 'files'],
      ['files', { files: [FILE] }, null],
      ['note_and_files', { note: 'ok' }, 'files'],
      ['note_and_files', { files: [FILE] }, 'note'],
      ['note_and_files', { note: 'ok', files: [FILE] }, null],
      ['note_or_files', {}, 'note'],
      ['note_or_files', { files: [FILE] }, null],
      ['note_or_files', { note: 'ok' }, null],
    ];
    for (const [mode, body, path] of cases) {
      const { assignment } = await taskWithAssignment(key, { submission_mode: mode });
      const response = await post(key, `/assignments/${assignment.id}/submissions`, body);
      if (path === null) expect(response.statusCode, `${mode} ${JSON.stringify(body)}`).toBe(201);
      else expect(expectError(response, 400, 'validation_failed').details[0]?.path, `${mode} ${JSON.stringify(body)}`).toBe(path);
    }
  });

  it('requires required_files, counts attempts up to allowed_submission_count and marks late ones', async () => {
    const key = await newKey();
    const { assignment } = await taskWithAssignment(key, { submission_mode: 'files', required_files: 2, allowed_submission_count: 2, review_stages: 1 });
    const error = expectError(await post(key, `/assignments/${assignment.id}/submissions`, { files: [FILE] }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: 'files', code: 'too_few' });
    const first = await submit(key, assignment.id, { files: [FILE, FILE], custom_fields: { pages: 3 } });
    expect(first.submission).toEqual({
      id: expect.any(Number),
      assignment_id: assignment.id,
      attempt_no: 1,
      note: null,
      files: [
        { ...FILE, content_url: FILE.download_url },
        { ...FILE, content_url: FILE.download_url },
      ],
      custom_fields: { pages: 3 },
      is_late: false,
      submitted_at: expect.stringMatching(/Z$/),
    });
    expect(first.assignment).toMatchObject({ status: 'submitted', attempt_count: 1, submitted_at: first.submission.submitted_at, started_at: first.submission.submitted_at });
    expectError(await post(key, `/assignments/${assignment.id}/submissions`, { files: [FILE, FILE] }), 409, 'invalid_status_transition');
    await review(key, first.submission.id, { decision: 'changes_requested' });
    platform.clock.advance(8 * DAY);
    try {
      const second = await submit(key, assignment.id, { files: [FILE, FILE] });
      expect(second.submission).toMatchObject({ attempt_no: 2, is_late: true });
      await review(key, second.submission.id, { decision: 'changes_requested' });
      const third = expectError(await post(key, `/assignments/${assignment.id}/submissions`, { files: [FILE, FILE] }), 409, 'conflict');
      expect(third.details[0]).toMatchObject({ code: 'submission_limit_reached' });
    } finally {
      platform.clock.advance(-8 * DAY);
    }
  });

  it('refuses a late submission when allow_late_submission is false', async () => {
    const key = await newKey();
    const { assignment } = await taskWithAssignment(key, { allow_late_submission: false, due_at: inDays(platform, 1) });
    platform.clock.advance(2 * DAY);
    try {
      const error = expectError(await post(key, `/assignments/${assignment.id}/submissions`, {}), 409, 'conflict');
      expect(error.details[0]).toMatchObject({ code: 'past_due' });
    } finally {
      platform.clock.advance(-2 * DAY);
    }
    await submit(key, assignment.id, {});
  });

  it('completes at once when the task has no review stage', async () => {
    const key = await newKey();
    const { assignment } = await taskWithAssignment(key, { review_stages: 0 });
    const { assignment: done } = await submit(key, assignment.id, {});
    expect(done).toMatchObject({ status: 'completed', completed_at: expect.stringMatching(/Z$/) });
  });
});

describe('reviews and grading', () => {
  async function graded(key: string, task: Record<string, unknown>, body: Record<string, unknown>) {
    const { assignment } = await taskWithAssignment(key, task);
    const { submission } = await submit(key, assignment.id, {});
    return review(key, submission.id, body);
  }

  it('scores by points, percentage, letter and weighted rubric against max_score', async () => {
    const key = await newKey();
    expect((await graded(key, { grading_scheme: 'points', max_score: 20 }, { score: 17 })).review).toMatchObject({ score: 17, grade: 'B' });
    expect((await graded(key, { grading_scheme: 'percentage', max_score: 40 }, { score: 85 })).review).toMatchObject({ score: 34, grade: 'B' });
    expect((await graded(key, { grading_scheme: 'letter', max_score: 20 }, { grade: 'a' })).review).toMatchObject({ score: 19, grade: 'A' });
    expect((await graded(key, { grading_scheme: 'letter', max_score: 20 }, { score: 13 })).review).toMatchObject({ score: 13, grade: 'D' });
    const rubric = [
      { id: 'acc', label: 'Accuracy', max_score: 10, weight: 2 },
      { id: 'style', label: 'Style', max_score: 5, weight: 1 },
    ];
    // (2 × 8/10 + 1 × 5/5) / 3 = 0.8667 of 30 = 26
    const result = await graded(
      key,
      { grading_scheme: 'rubric', max_score: 30, rubric },
      {
        rubric_scores: [
          { criterion_id: 'style', score: 5 },
          { criterion_id: 'acc', score: 8 },
        ],
      },
    );
    expect(result.review).toMatchObject({
      score: 26,
      grade: 'B',
      rubric_scores: [
        { criterion_id: 'acc', score: 8 },
        { criterion_id: 'style', score: 5 },
      ],
    });
    expect(result.assignment).toMatchObject({ status: 'completed', score: 26 });
    // max_score null reads as 100.
    expect(
      (
        await graded(
          key,
          { grading_scheme: 'rubric', rubric },
          {
            rubric_scores: [
              { criterion_id: 'acc', score: 10 },
              { criterion_id: 'style', score: 2 },
            ],
          },
        )
      ).review.score,
    ).toBe(80);
  });

  it('inherits the category scheme and refuses scores out of range', async () => {
    const key = await newKey();
    const category = await send(key, 'POST', '/categories', { name: 'Pct', grading_scheme: 'percentage' });
    expect((await graded(key, { category_id: category.id, max_score: 50 }, { score: 50 })).review.score).toBe(25);
    const { assignment } = await taskWithAssignment(key, { grading_scheme: 'points', max_score: 10 });
    const { submission } = await submit(key, assignment.id, {});
    for (const [body, path] of [
      [{ score: 11 }, 'score'],
      [{ grade: 'B' }, 'grade'],
      [{ rubric_scores: [{ criterion_id: 'x', score: 1 }] }, 'rubric_scores'],
      [{ decision: 'maybe' }, 'decision'],
    ] as const) {
      const error = expectError(await post(key, `/submissions/${submission.id}/reviews`, { actor_user_id: 2, decision: 'approved', ...body }), 400, 'validation_failed');
      expect(error.details[0]?.path).toBe(path);
    }
    const error = expectError(await post(key, `/submissions/${submission.id}/reviews`, { decision: 'approved' }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('actor_user_id');
  });

  it('passes a submission through every stage; the final stage sets score and status; rejection ends it', async () => {
    const key = await newKey();
    const { assignment } = await taskWithAssignment(key, { review_stages: 2, max_score: 10 });
    const { submission } = await submit(key, assignment.id, {});
    const first = await review(key, submission.id, { score: 6 });
    expect(first.review).toMatchObject({ stage: 1, decision: 'approved', score: 6, reviewer_id: 2 });
    expect(first.assignment).toMatchObject({ status: 'submitted', score: null });
    const second = await review(key, submission.id, { score: 8, actor_user_id: 3, feedback: 'Good' });
    expect(second.review).toMatchObject({ stage: 2, score: 8, reviewer_id: 3, feedback: 'Good' });
    expect(second.assignment).toMatchObject({ status: 'completed', score: 8 });
    expectError(await post(key, `/submissions/${submission.id}/reviews`, { actor_user_id: 2, decision: 'approved' }), 409, 'invalid_status_transition');

    const other = (await taskWithAssignment(key)).assignment;
    const attempt = (await submit(key, other.id, {})).submission;
    expect((await review(key, attempt.id, { decision: 'rejected' })).assignment.status).toBe('rejected');
    expect((await send(key, 'POST', `/assignments/${other.id}/reopen`, {}, 200)).status).toBe('in_progress');
  });

  it('rolls a category up per person, weighted by task weight', async () => {
    const key = await newKey();
    const category = await send(key, 'POST', '/categories', { name: 'Term' });
    const a = await createTask(key, { category_id: category.id, max_score: 10, weight: 1 });
    const b = await createTask(key, { category_id: category.id, max_score: 20, weight: 3 });
    await createTask(key, { category_id: category.id, max_score: 10, weight: 5 });
    for (const [task, score] of [
      [a, 8],
      [b, 10],
    ] as const) {
      const [assignment] = await assign(key, task.id, [7]);
      const { submission } = await submit(key, assignment.id, {});
      await review(key, submission.id, { score });
    }
    const rollup = await send(key, 'GET', `/categories/${category.id}/rollup?assignee_user_id=7`);
    // (1 × 80 + 3 × 50) / 4 = 57.5
    expect(rollup).toEqual({
      category_id: category.id,
      assignee_user_id: 7,
      percentage: 57.5,
      tasks: [
        { task_id: a.id, weight: 1, score: 8, max_score: 10, percentage: 80 },
        { task_id: b.id, weight: 3, score: 10, max_score: 20, percentage: 50 },
      ],
    });
    expect((await send(key, 'GET', `/categories/${category.id}/rollup?assignee_user_id=8`)).percentage).toBeNull();
    expectError(await call(platform.app, 'GET', `${BASE}/categories/${category.id}/rollup?assignee_user_id=0`, { key }), 400, 'validation_failed');
    // Without assignee_user_id: everyone's graded work together.
    expect(await send(key, 'GET', `/categories/${category.id}/rollup`)).toMatchObject({ assignee_user_id: null, percentage: 57.5 });
  });
});
