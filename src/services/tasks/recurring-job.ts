import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobHandler, JobRunner } from '../../platform/jobs/runner.js';
import { createAssignmentRow } from './assignments.js';
import { nextOccurrence, occurrences, parseRule } from './recurrence.js';
import * as repository from './repository.js';
import type { TaskRow, TasksDb } from './repository.js';

/** The durable job that generates the due occurrences of one recurring task. */
export const GENERATE_OCCURRENCES_JOB = 'tasks.generate-occurrences';
/** Occurrences one run creates at most; a run that stops there runs again at once. */
const BATCH = 100;

export function generationJobKey(taskId: number): string {
  return `tasks.recurrence:${taskId}`;
}

/** Queues (or moves) the task's generation job to its next instant not yet generated: the rule's first from starts_at. */
export async function scheduleGeneration(jobs: JobRunner, tx: TasksDb, owner: Owner, task: TaskRow): Promise<void> {
  const rule = parseRule(task.recurrence_rule!);
  const first = occurrences(rule, task.starts_at!, task.starts_at!)[0]?.at ?? nextOccurrence(rule, task.starts_at!, task.starts_at!);
  if (!first) return;
  await jobs.schedule(
    { kind: GENERATE_OCCURRENCES_JOB, dedupeKey: generationJobKey(task.id), runAt: first, tenantId: owner.tenantId, mode: owner.mode, payload: { task_id: task.id } },
    tx as unknown as Db,
  );
}

/** An occurrence: the definition's fields at the rule's instant, published, its deadline the same distance after it. */
function occurrenceOf(task: TaskRow, at: Date, now: Date): Omit<TaskRow, 'id'> {
  const dueOffset = task.due_at !== null && task.starts_at !== null ? task.due_at.getTime() - task.starts_at.getTime() : null;
  const { id: _id, ...fields } = task;
  return {
    ...fields,
    status: 'published',
    schedule_mode: 'one_time',
    starts_at: at,
    due_at: dueOffset === null ? null : new Date(at.getTime() + dueOffset),
    recurrence_rule: null,
    recurrence_parent_id: task.id,
    occurrence_at: at,
    source: 'schedule',
    assignment_count: 0,
    created_at: now,
    updated_at: now,
  };
}

/**
 * Creates every occurrence of the job's task due by `now`. The unique index on (parent,
 * instant) is the guard: a run repeated, or run on two processes at once, creates each
 * occurrence once, and only the run that created one records its event and assignments.
 * Occurrences are assigned to the people holding open assignments of the definition.
 */
export function createGenerateOccurrencesHandler({ db, events }: { db: Db; events: EventLog }): JobHandler {
  const tables = repository.tasksDb(db);
  return async (job, now) => {
    const taskId = job.payload.task_id;
    if (typeof taskId !== 'number' || job.tenantId === null || job.mode === null) return;
    const owner: Owner = { tenantId: job.tenantId, mode: job.mode };
    const task = await repository.findTask(tables, owner, String(taskId));
    if (!task || task.schedule_mode !== 'recurring' || task.status !== 'published' || task.recurrence_rule === null || task.starts_at === null) return;
    const rule = parseRule(task.recurrence_rule);
    const due = occurrences(rule, task.starts_at, now);
    let created = 0;
    for (const { at } of due) {
      if (created >= BATCH) return { rescheduleAt: now };
      const made = await tables.transaction().execute(async (tx) => {
        const occurrence = await repository.insertOccurrence(tx, owner, occurrenceOf(task, at, now));
        if (!occurrence) return false;
        let current = occurrence;
        if (occurrence.due_at !== null) {
          const holders = await repository.taskAssignments(tx, owner, String(task.id), ['assigned', 'in_progress', 'submitted', 'returned']);
          const users = [...new Set(holders.map((holder) => holder.assignee_user_id))];
          for (const user of users) {
            const holder = holders.find((entry) => entry.assignee_user_id === user)!;
            await createAssignmentRow(tx, owner, events, occurrence, {
              userId: user,
              actor: holder.assigned_by,
              dueAt: occurrence.due_at,
              groupId: holder.group_id,
              customFields: {},
              now,
            });
          }
          if (users.length > 0) current = await repository.bumpAssignmentCount(tx, owner, String(occurrence.id), users.length, occurrence.updated_at);
        }
        await events.record(tx, owner, 'tasks.task.created', current);
        return true;
      });
      if (made) created += 1;
    }
    const next = nextOccurrence(rule, task.starts_at, now);
    if (next) return { rescheduleAt: next };
  };
}

export function registerTaskJobs(jobs: JobRunner, deps: { db: Db; events: EventLog }): void {
  jobs.register(GENERATE_OCCURRENCES_JOB, createGenerateOccurrencesHandler(deps));
}
