import type { Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import { computeGrade } from './grading.js';
import * as repository from './repository.js';
import type { AssignmentRow, EventRow, TaskRow, TasksDb } from './repository.js';
import type { AssignmentView, EventView, FileInputValue, ReviewView, SubmissionView } from './schemas.js';
import { fileFrom, presentTask, schemeOf } from './tasks.js';
import type { AssignmentStatus, Decision, EventType } from './tables.js';

/** Statuses in which the assignee still works on the assignment. */
const WORKING: readonly AssignmentStatus[] = ['assigned', 'in_progress', 'returned'];
/** Task statuses in which assignees may work: paused, completed, cancelled and archived tasks take no work. */
const WORKABLE_TASK = ['draft', 'published'];

export function presentAssignment(row: AssignmentRow): AssignmentView {
  return row as unknown as AssignmentView;
}

type EventFields = Partial<Pick<EventRow, 'from_user_id' | 'to_user_id' | 'from_value' | 'to_value' | 'reason'>> & { changed_by: number };

async function addEvent(tx: TasksDb, owner: Owner, assignmentId: number, type: EventType, fields: EventFields, now: Date): Promise<void> {
  await repository.insertEvent(tx, owner, {
    assignment_id: assignmentId,
    event_type: type,
    from_user_id: fields.from_user_id ?? null,
    to_user_id: fields.to_user_id ?? null,
    from_value: fields.from_value ?? null,
    to_value: fields.to_value ?? null,
    changed_by: fields.changed_by,
    reason: fields.reason ?? null,
    created_at: now,
  });
}

/** One assignment with its `assigned` event and platform event, in the caller's transaction. */
export async function createAssignmentRow(
  tx: TasksDb,
  owner: Owner,
  events: EventLog,
  task: TaskRow,
  input: { userId: number; actor: number; dueAt: Date; groupId: number | null; customFields: Record<string, unknown>; now: Date },
): Promise<AssignmentRow> {
  const row = await repository.insertAssignment(tx, owner, {
    task_id: task.id,
    assignee_user_id: input.userId,
    assigned_by: input.actor,
    group_id: input.groupId,
    delegated_by: null,
    delegation_reason: null,
    status: 'assigned',
    due_at: input.dueAt,
    original_due_at: input.dueAt,
    checklist_state: [],
    custom_fields: input.customFields,
    score: null,
    attempt_count: 0,
    started_at: null,
    submitted_at: null,
    completed_at: null,
    reopened_at: null,
    created_at: input.now,
    updated_at: input.now,
  });
  await addEvent(tx, owner, row.id, 'assigned', { to_user_id: input.userId, to_value: input.dueAt.toISOString(), changed_by: input.actor }, input.now);
  await events.record(tx, owner, 'tasks.assignment.created', presentAssignment(row));
  return row;
}

/** Cancels an open assignment with its task (the cascade), recording who did it. */
export async function cancelAssignment(tx: TasksDb, ctx: RequestContext, events: EventLog, assignment: AssignmentRow, actor: number): Promise<void> {
  const row = await repository.updateAssignment(tx, ctx, String(assignment.id), { status: 'cancelled', updated_at: nextUpdatedAt(assignment.updated_at, ctx.now) });
  await addEvent(tx, ctx, assignment.id, 'cancelled', { from_value: assignment.status, to_value: 'cancelled', changed_by: actor, reason: 'Task cancelled.' }, ctx.now);
  await events.record(tx, ctx, 'tasks.assignment.updated', presentAssignment(row));
}

function refuse(assignment: AssignmentRow, action: string): never {
  throw new AppError('invalid_status_transition', `An assignment that is ${assignment.status} cannot be ${action}.`, [
    { path: 'status', code: 'invalid_transition', message: `The assignment is ${assignment.status}.`, from: assignment.status },
  ]);
}

function requireWorkableTask(task: TaskRow): void {
  if (!WORKABLE_TASK.includes(task.status)) {
    throw new AppError('invalid_status_transition', `The task is ${task.status}; its assignments take no work.`, [
      { path: 'task.status', code: 'task_not_workable', message: `The task is ${task.status}.`, task_status: task.status },
    ]);
  }
}

const cleanText = (value: string | null | undefined): string | null => {
  if (value === undefined || value === null) return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
};

export function createAssignmentRules({ tables, events }: { tables: TasksDb; events: EventLog }) {
  /** Locks the assignment, then reads its task; runs `change` and records the platform event of the result. */
  async function move(ctx: RequestContext, id: string, change: (tx: TasksDb, assignment: AssignmentRow, task: TaskRow) => Promise<AssignmentRow>): Promise<AssignmentView> {
    return tables.transaction().execute(async (tx) => {
      const assignment = await repository.findAssignment(tx, ctx, id, { forUpdate: true });
      if (!assignment) throw notFound('Assignment');
      const task = await repository.findTask(tx, ctx, String(assignment.task_id));
      if (!task) throw notFound('Assignment');
      const row = await change(tx, assignment, task);
      const view = presentAssignment(row);
      // A change that changed nothing (the same due date again) reports nothing.
      if (row.updated_at.getTime() !== assignment.updated_at.getTime()) await events.record(tx, ctx, 'tasks.assignment.updated', view);
      return view;
    });
  }

  const update = (tx: TasksDb, ctx: RequestContext, assignment: AssignmentRow, changes: Partial<Omit<AssignmentRow, 'id'>>) =>
    repository.updateAssignment(tx, ctx, String(assignment.id), { ...changes, updated_at: nextUpdatedAt(assignment.updated_at, ctx.now) });

  return {
    async assign(
      ctx: RequestContext,
      taskId: string,
      input: {
        user_ids?: number[];
        assignee_user_ids?: number[];
        assignee_user_id?: number;
        actor_user_id: number;
        due_at?: string;
        group_id?: number;
        custom_fields?: Record<string, unknown>;
      },
    ): Promise<AssignmentView[]> {
      const userIds = input.user_ids ?? input.assignee_user_ids ?? (input.assignee_user_id !== undefined ? [input.assignee_user_id] : undefined);
      if (userIds === undefined) throw invalidField('user_ids', 'required', 'Send user_ids: the users to assign.');
      return tables.transaction().execute(async (tx) => {
        const task = await repository.findTask(tx, ctx, taskId, { forUpdate: true });
        if (!task) throw notFound('Task');
        if (!['draft', 'published', 'paused'].includes(task.status)) {
          throw new AppError('invalid_status_transition', `A ${task.status} task cannot be assigned.`, [
            { path: 'status', code: 'invalid_transition', message: `The task is ${task.status}.`, from: task.status },
          ]);
        }
        const dueAt = input.due_at !== undefined ? new Date(input.due_at) : task.due_at;
        if (dueAt === null) throw invalidField('due_at', 'required', 'The task has no due_at: send due_at with the assignment.');
        const open = await repository.taskAssignments(tx, ctx, taskId, ['assigned', 'in_progress', 'submitted', 'returned']);
        userIds.forEach((userId, index) => {
          if (open.some((assignment) => assignment.assignee_user_id === userId)) {
            throw new AppError('conflict', `User ${userId} already holds an open assignment of this task.`, [
              { path: `user_ids[${index}]`, code: 'already_assigned', message: 'Already holds an open assignment of this task.' },
            ]);
          }
        });
        const made: AssignmentRow[] = [];
        for (const userId of userIds) {
          made.push(
            await createAssignmentRow(tx, ctx, events, task, {
              userId,
              actor: input.actor_user_id,
              dueAt,
              groupId: input.group_id ?? null,
              customFields: input.custom_fields ?? {},
              now: ctx.now,
            }),
          );
        }
        const updated = await repository.bumpAssignmentCount(tx, ctx, taskId, made.length, nextUpdatedAt(task.updated_at, ctx.now));
        await events.record(tx, ctx, 'tasks.task.updated', presentTask(updated));
        return made.map(presentAssignment);
      });
    },

    async listAssignments(
      ctx: RequestContext,
      filters: { assignee_user_id?: number; status?: AssignmentStatus; task_id?: number; include_hidden?: 'true' | 'false' },
      page: PageRequest,
    ) {
      // The assignee's view hides paused tasks and scheduled ones not yet started.
      const hidden = filters.assignee_user_id !== undefined && filters.include_hidden !== 'true' ? await repository.hiddenTaskIds(tables, ctx, ctx.now) : [];
      const { rows, total } = await repository.listAssignments(
        tables,
        ctx,
        {
          assignee: filters.assignee_user_id === undefined ? undefined : String(filters.assignee_user_id),
          status: filters.status,
          taskId: filters.task_id === undefined ? undefined : String(filters.task_id),
          hiddenTaskIds: hidden.length > 0 ? hidden : undefined,
        },
        page,
      );
      return { rows: rows.map(presentAssignment), total };
    },

    async getAssignment(ctx: RequestContext, id: string) {
      const assignment = await repository.findAssignment(tables, ctx, id);
      if (!assignment) throw notFound('Assignment');
      const [task, submissions, history] = await Promise.all([
        repository.findTask(tables, ctx, String(assignment.task_id)),
        repository.assignmentSubmissions(tables, ctx, id),
        repository.assignmentEvents(tables, ctx, id),
      ]);
      if (!task) throw notFound('Assignment');
      const reviews = await repository.submissionReviews(
        tables,
        ctx,
        submissions.map((submission) => submission.id),
      );
      return {
        assignment: presentAssignment(assignment),
        task: presentTask(task),
        submissions: submissions as unknown as SubmissionView[],
        reviews: reviews as unknown as ReviewView[],
        events: history as unknown as EventView[],
      };
    },

    start(ctx: RequestContext, id: string, input: { actor_user_id?: number; reason?: string }) {
      return move(ctx, id, async (tx, assignment, task) => {
        if (assignment.status !== 'assigned') refuse(assignment, 'started');
        requireWorkableTask(task);
        const row = await update(tx, ctx, assignment, { status: 'in_progress', started_at: assignment.started_at ?? ctx.now });
        await addEvent(
          tx,
          ctx,
          assignment.id,
          'started',
          { from_value: 'assigned', to_value: 'in_progress', changed_by: input.actor_user_id ?? assignment.assignee_user_id, reason: input.reason },
          ctx.now,
        );
        return row;
      });
    },

    check(ctx: RequestContext, id: string, itemId: string, input: { actor_user_id: number; checked?: boolean; note?: string; file?: FileInputValue }) {
      return move(ctx, id, async (tx, assignment, task) => {
        if (!WORKING.includes(assignment.status)) refuse(assignment, 'changed');
        requireWorkableTask(task);
        const item = task.checklist.find((entry) => entry.id === itemId);
        if (!item) throw notFound('Checklist item');
        const rest = assignment.checklist_state.filter((entry) => entry.id !== itemId);
        if (input.checked === false) return update(tx, ctx, assignment, { checklist_state: rest });
        const note = cleanText(input.note);
        if (item.requires_note && note === null) throw invalidField('note', 'required', 'This checklist item needs a note.');
        if (item.requires_file && input.file === undefined) throw invalidField('file', 'required', 'This checklist item needs a file.');
        const entry = { id: itemId, checked_at: ctx.now.toISOString(), checked_by: input.actor_user_id, note, file: input.file ? fileFrom(input.file) : null };
        const state = [...rest, entry].sort((a, b) => task.checklist.findIndex((c) => c.id === a.id) - task.checklist.findIndex((c) => c.id === b.id));
        return update(tx, ctx, assignment, { checklist_state: state });
      });
    },

    transfer(ctx: RequestContext, id: string, kind: 'reassigned' | 'delegated', body: { actor_user_id: number; to_user_id?: number; assignee_user_id?: number; reason?: string }) {
      const toUserId = body.to_user_id ?? body.assignee_user_id;
      if (toUserId === undefined) throw invalidField('to_user_id', 'required', 'Send to_user_id: who takes the assignment.');
      const input = { ...body, to_user_id: toUserId };
      return move(ctx, id, async (tx, assignment) => {
        if (!WORKING.includes(assignment.status)) refuse(assignment, kind);
        if (input.to_user_id === assignment.assignee_user_id) throw invalidField('to_user_id', 'same_user', 'The assignment is already held by this user.');
        const reason = cleanText(input.reason);
        const row = await update(tx, ctx, assignment, {
          assignee_user_id: input.to_user_id,
          ...(kind === 'delegated' ? { delegated_by: input.actor_user_id, delegation_reason: reason } : {}),
        });
        await addEvent(tx, ctx, assignment.id, kind, { from_user_id: assignment.assignee_user_id, to_user_id: input.to_user_id, changed_by: input.actor_user_id, reason }, ctx.now);
        return row;
      });
    },

    changeDue(
      ctx: RequestContext,
      id: string,
      input: { due_at?: string; custom_fields?: Record<string, unknown>; actor_user_id?: number; reason?: string; expected_updated_at?: string },
    ) {
      return move(ctx, id, async (tx, assignment) => {
        assertFresh(input.expected_updated_at, assignment.updated_at);
        let current = assignment;
        if (input.custom_fields !== undefined) current = await update(tx, ctx, current, { custom_fields: input.custom_fields });
        if (input.due_at === undefined) return current;
        if (assignment.status === 'cancelled') refuse(assignment, 'given a new due date');
        const dueAt = new Date(input.due_at);
        if (dueAt.getTime() === assignment.due_at.getTime()) return current;
        const row = await update(tx, ctx, current, { due_at: dueAt });
        await addEvent(
          tx,
          ctx,
          assignment.id,
          'due_changed',
          {
            from_value: assignment.due_at.toISOString(),
            to_value: dueAt.toISOString(),
            changed_by: input.actor_user_id ?? assignment.assignee_user_id,
            reason: cleanText(input.reason),
          },
          ctx.now,
        );
        return row;
      });
    },

    reopen(ctx: RequestContext, id: string, input: { actor_user_id?: number; reason?: string }) {
      return move(ctx, id, async (tx, assignment, task) => {
        if (!['completed', 'rejected', 'cancelled'].includes(assignment.status)) refuse(assignment, 'reopened');
        requireWorkableTask(task);
        const status: AssignmentStatus = assignment.started_at !== null ? 'in_progress' : 'assigned';
        const row = await update(tx, ctx, assignment, { status, completed_at: null, reopened_at: ctx.now });
        await addEvent(
          tx,
          ctx,
          assignment.id,
          'reopened',
          { from_value: assignment.status, to_value: status, changed_by: input.actor_user_id ?? assignment.assignee_user_id, reason: cleanText(input.reason) },
          ctx.now,
        );
        return row;
      });
    },

    async submit(ctx: RequestContext, id: string, input: { note?: string | null; files?: FileInputValue[]; custom_fields?: Record<string, unknown>; actor_user_id?: number }) {
      let submission: repository.SubmissionRow | undefined;
      const assignment = await move(ctx, id, async (tx, current, task) => {
        if (!WORKING.includes(current.status)) refuse(current, 'submitted');
        requireWorkableTask(task);
        const note = cleanText(input.note);
        const files = (input.files ?? []).map(fileFrom);
        const mode = task.submission_mode;
        if ((mode === 'note' || mode === 'note_and_files') && note === null) throw invalidField('note', 'required', `submission_mode ${mode} needs a note.`);
        if ((mode === 'files' || mode === 'note_and_files') && files.length === 0) throw invalidField('files', 'required', `submission_mode ${mode} needs files.`);
        if (mode === 'note_or_files' && note === null && files.length === 0) throw invalidField('note', 'required', 'submission_mode note_or_files needs a note or files.');
        if (mode === 'note' && files.length > 0) throw invalidField('files', 'not_allowed', 'submission_mode note takes no files.');
        if (files.length < task.required_files) throw invalidField('files', 'too_few', `At least ${task.required_files} file(s) per submission.`);
        const missing = task.checklist.find((item) => item.required && !current.checklist_state.some((entry) => entry.id === item.id));
        if (missing) throw invalidField('checklist_state', 'incomplete', `Required checklist item ${missing.id} is not checked.`);
        if (task.allowed_submission_count !== null && current.attempt_count >= task.allowed_submission_count) {
          throw new AppError('conflict', `No attempts left: at most ${task.allowed_submission_count} submission(s).`, [
            { path: 'allowed_submission_count', code: 'submission_limit_reached', message: `${current.attempt_count} of ${task.allowed_submission_count} attempts used.` },
          ]);
        }
        const isLate = ctx.now.getTime() > current.due_at.getTime();
        if (isLate && !task.allow_late_submission) {
          throw new AppError('conflict', 'The assignment is past its due date and the task takes no late submissions.', [
            { path: 'due_at', code: 'past_due', message: `Due at ${current.due_at.toISOString()}.` },
          ]);
        }
        const attemptNo = current.attempt_count + 1;
        submission = await repository.insertSubmission(tx, ctx, {
          assignment_id: current.id,
          attempt_no: attemptNo,
          note,
          files,
          custom_fields: input.custom_fields ?? {},
          is_late: isLate,
          submitted_at: ctx.now,
        });
        const actor = input.actor_user_id ?? current.assignee_user_id;
        await addEvent(tx, ctx, current.id, 'submitted', { from_value: current.status, to_value: 'submitted', changed_by: actor }, ctx.now);
        const done = task.review_stages === 0;
        if (done) await addEvent(tx, ctx, current.id, 'completed', { from_value: 'submitted', to_value: 'completed', changed_by: actor }, ctx.now);
        await events.record(tx, ctx, 'tasks.submission.created', submission);
        return update(tx, ctx, current, {
          status: done ? 'completed' : 'submitted',
          attempt_count: attemptNo,
          started_at: current.started_at ?? ctx.now,
          submitted_at: ctx.now,
          ...(done ? { completed_at: ctx.now } : {}),
        });
      });
      return { submission: submission! as unknown as SubmissionView, assignment };
    },

    async review(
      ctx: RequestContext,
      submissionId: string,
      input: {
        actor_user_id: number;
        decision: Decision;
        feedback?: string | null;
        score?: number | null;
        grade?: string;
        rubric_scores?: { criterion_id: string; score: number }[];
      },
    ) {
      const found = await repository.findSubmission(tables, ctx, submissionId);
      if (!found) throw notFound('Submission');
      let review: repository.ReviewRow | undefined;
      const assignment = await move(ctx, String(found.assignment_id), async (tx, current, task) => {
        if (current.status !== 'submitted' || current.attempt_count !== found.attempt_no) {
          throw new AppError('invalid_status_transition', 'Only the latest submission of an assignment waiting for review can be reviewed.', [
            { path: 'submission_id', code: 'not_reviewable', message: `The assignment is ${current.status}; its latest attempt is ${current.attempt_count}.` },
          ]);
        }
        const grade = computeGrade(await schemeOf(tx, ctx, task), task.max_score, task.rubric, input);
        const earlier = await repository.submissionReviews(tx, ctx, [found.id]);
        const stage = earlier.filter((entry) => entry.decision === 'approved').length + 1;
        const finalStage = Math.max(1, task.review_stages);
        review = await repository.insertReview(tx, ctx, {
          submission_id: found.id,
          reviewer_id: input.actor_user_id,
          stage,
          decision: input.decision,
          feedback: cleanText(input.feedback),
          score: grade.score,
          grade: grade.grade,
          rubric_scores: grade.rubric_scores,
          created_at: ctx.now,
        });
        const actor = input.actor_user_id;
        await addEvent(tx, ctx, current.id, 'reviewed', { from_value: `stage ${stage}`, to_value: input.decision, changed_by: actor, reason: review.feedback }, ctx.now);
        await events.record(tx, ctx, 'tasks.review.created', review);
        if (input.decision === 'changes_requested') {
          await addEvent(tx, ctx, current.id, 'returned', { from_value: 'submitted', to_value: 'returned', changed_by: actor, reason: review.feedback }, ctx.now);
          return update(tx, ctx, current, { status: 'returned' });
        }
        if (input.decision === 'rejected') return update(tx, ctx, current, { status: 'rejected' });
        if (stage < finalStage) return current;
        await addEvent(tx, ctx, current.id, 'completed', { from_value: 'submitted', to_value: 'completed', changed_by: actor }, ctx.now);
        return update(tx, ctx, current, { status: 'completed', completed_at: ctx.now, score: grade.score });
      });
      return { review: review! as unknown as ReviewView, assignment };
    },
  };
}
