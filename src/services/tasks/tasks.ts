import type { PageRequest } from '../../db/paging.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import { cancelAssignment } from './assignments.js';
import { DEFAULT_MAX_SCORE, round2 } from './grading.js';
import { parseRule } from './recurrence.js';
import { scheduleGeneration } from './recurring-job.js';
import * as repository from './repository.js';
import type { CategoryRow, FileRow, TaskRow, TasksDb } from './repository.js';
import type { CategoryView, CreateTaskInput, FileInputValue, TaskView, UpdateTaskInput } from './schemas.js';
import type { GradingScheme, Priority, TaskStatus } from './tables.js';

/**
 * The moves a task's status may make (docs/decisions.md): drafts are published (or dropped);
 * published work is paused, completed, cancelled or archived; paused work resumes; completed
 * work is reopened (published) or archived; cancelled work is only archived; archived is final.
 */
export const TASK_MOVES: Record<TaskStatus, readonly TaskStatus[]> = {
  draft: ['published', 'cancelled', 'archived'],
  published: ['paused', 'completed', 'cancelled', 'archived'],
  paused: ['published', 'completed', 'cancelled', 'archived'],
  completed: ['published', 'archived'],
  cancelled: ['archived'],
  archived: [],
};

export interface TasksRuleDeps {
  tables: TasksDb;
  events: EventLog;
  jobs: JobRunner;
}

export function fileFrom(input: FileInputValue): FileRow {
  return {
    filename: input.filename.trim(),
    mime: input.mime.toLowerCase(),
    size_bytes: input.size_bytes,
    download_url: input.download_url,
    content_url: input.content_url ?? input.download_url,
  };
}

const cleanText = (value: string | null | undefined): string | null | undefined => {
  if (value === undefined || value === null) return value;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
};

export function presentTask(row: TaskRow): TaskView {
  return row as unknown as TaskView;
}
export function presentCategory(row: CategoryRow): CategoryView {
  return row;
}

function uniqueIds(path: string, items: { id: string }[] | undefined): void {
  if (!items) return;
  const seen = new Set<string>();
  items.forEach((item, index) => {
    if (seen.has(item.id)) throw invalidField(`${path}[${index}].id`, 'duplicate', 'Ids are unique within the list.');
    seen.add(item.id);
  });
}

/** The checks a task's fields must pass together (after a create or a patch is applied). */
function checkTask(task: Omit<TaskRow, 'id'>): void {
  if (task.schedule_mode === 'scheduled' && task.starts_at === null) throw invalidField('starts_at', 'required', 'A scheduled task needs starts_at.');
  if (task.schedule_mode === 'recurring') {
    if (task.starts_at === null) throw invalidField('starts_at', 'required', 'A recurring task needs starts_at (its first occurrence).');
    if (task.recurrence_rule === null) throw invalidField('recurrence_rule', 'required', 'A recurring task needs recurrence_rule.');
    parseRule(task.recurrence_rule);
  }
  if ((task.submission_mode === 'none' || task.submission_mode === 'note') && task.required_files > 0) {
    throw invalidField('required_files', 'invalid', `submission_mode ${task.submission_mode} takes no files; required_files must be 0.`);
  }
}

/** The grading scheme in force: the task's, else its category's, else points. */
export async function schemeOf(tables: TasksDb, ctx: { tenantId: string; mode: 'test' | 'live' }, task: TaskRow): Promise<GradingScheme> {
  if (task.grading_scheme !== null) return task.grading_scheme;
  if (task.category_id === null) return 'points';
  return (await repository.findCategory(tables, ctx, String(task.category_id)))?.grading_scheme ?? 'points';
}

export function createTaskRules({ tables, events, jobs }: TasksRuleDeps) {
  async function requireCategory(tx: TasksDb, ctx: RequestContext, categoryId: number | null | undefined): Promise<void> {
    if (categoryId === undefined || categoryId === null) return;
    if (!(await repository.findCategory(tx, ctx, String(categoryId)))) throw invalidField('category_id', 'not_found', 'No category with this id.');
  }

  return {
    // Categories

    async createCategory(ctx: RequestContext, input: { name: string; description?: string | null; grading_scheme?: GradingScheme }): Promise<CategoryView> {
      return tables.transaction().execute(async (tx) => {
        const view = presentCategory(
          await repository.insertCategory(tx, ctx, {
            name: input.name.trim(),
            description: cleanText(input.description) ?? null,
            grading_scheme: input.grading_scheme ?? 'points',
            created_at: ctx.now,
            updated_at: ctx.now,
          }),
        );
        await events.record(tx, ctx, 'tasks.category.created', view);
        return view;
      });
    },

    async getCategory(ctx: RequestContext, id: string): Promise<CategoryView> {
      const row = await repository.findCategory(tables, ctx, id);
      if (!row) throw notFound('Category');
      return presentCategory(row);
    },

    async listCategories(ctx: RequestContext, page: PageRequest) {
      const { rows, total } = await repository.listCategories(tables, ctx, page);
      return { rows: rows.map(presentCategory), total };
    },

    async updateCategory(
      ctx: RequestContext,
      id: string,
      input: { name?: string; description?: string | null; grading_scheme?: GradingScheme; expected_updated_at?: string },
    ): Promise<CategoryView> {
      return tables.transaction().execute(async (tx) => {
        const current = await repository.findCategory(tx, ctx, id, { forUpdate: true });
        if (!current) throw notFound('Category');
        assertFresh(input.expected_updated_at, current.updated_at);
        const view = presentCategory(
          await repository.updateCategory(tx, ctx, id, {
            updated_at: nextUpdatedAt(current.updated_at, ctx.now),
            ...(input.name !== undefined ? { name: input.name.trim() } : {}),
            ...(input.description !== undefined ? { description: cleanText(input.description) ?? null } : {}),
            ...(input.grading_scheme !== undefined ? { grading_scheme: input.grading_scheme } : {}),
          }),
        );
        await events.record(tx, ctx, 'tasks.category.updated', view);
        return view;
      });
    },

    async deleteCategory(ctx: RequestContext, id: string): Promise<{ id: number; deleted: true }> {
      return tables.transaction().execute(async (tx) => {
        const current = await repository.findCategory(tx, ctx, id, { forUpdate: true });
        if (!current) throw notFound('Category');
        if (await repository.categoryHasTasks(tx, ctx, id)) throw new AppError('conflict', 'The category has tasks; move or delete them first.');
        await repository.deleteCategory(tx, ctx, id);
        await events.record(tx, ctx, 'tasks.category.deleted', presentCategory(current));
        return { id: current.id, deleted: true as const };
      });
    },

    /** The person's grade in a category: each task's graded assignments, weighted by task weight. */
    async rollup(ctx: RequestContext, categoryId: string, assigneeUserId: number | undefined) {
      const category = await repository.findCategory(tables, ctx, categoryId);
      if (!category) throw notFound('Category');
      const categoryTasks = await repository.categoryTasks(tables, ctx, categoryId);
      const assignments = await repository.assigneeAssignments(
        tables,
        ctx,
        assigneeUserId,
        categoryTasks.map((task) => task.id),
      );
      const rows: { task_id: number; weight: number; score: number; max_score: number; percentage: number }[] = [];
      for (const task of categoryTasks) {
        const graded = assignments.filter((assignment) => assignment.task_id === task.id && assignment.score !== null && assignment.status !== 'cancelled');
        if (graded.length === 0) continue;
        const score = round2(graded.reduce((sum, assignment) => sum + assignment.score!, 0));
        const maxScore = round2(graded.length * (task.max_score ?? DEFAULT_MAX_SCORE));
        rows.push({ task_id: task.id, weight: task.weight, score, max_score: maxScore, percentage: maxScore > 0 ? round2((score / maxScore) * 100) : 0 });
      }
      const totalWeight = rows.reduce((sum, row) => sum + row.weight, 0);
      const percentage = totalWeight > 0 ? round2(rows.reduce((sum, row) => sum + row.weight * row.percentage, 0) / totalWeight) : null;
      return { category_id: category.id, assignee_user_id: assigneeUserId ?? null, percentage, tasks: rows };
    },

    // Tasks

    async createTask(ctx: RequestContext, input: CreateTaskInput): Promise<TaskView> {
      uniqueIds('rubric', input.rubric);
      uniqueIds('checklist', input.checklist);
      const scheduleMode = input.schedule_mode ?? 'one_time';
      const row: Omit<TaskRow, 'id'> = {
        category_id: input.category_id ?? null,
        title: input.title.trim(),
        instructions: cleanText(input.instructions) ?? null,
        priority: input.priority ?? 'normal',
        status: input.status ?? 'draft',
        due_at: input.due_at ? new Date(input.due_at) : null,
        schedule_mode: scheduleMode,
        starts_at: input.starts_at ? new Date(input.starts_at) : null,
        recurrence_rule:
          scheduleMode === 'recurring'
            ? (input.recurrence_rule
                ?.trim()
                .replace(/^RRULE:/i, '')
                .toUpperCase() ?? null)
            : null,
        recurrence_parent_id: null,
        occurrence_at: null,
        submission_mode: input.submission_mode ?? 'none',
        required_files: input.required_files ?? 0,
        allowed_submission_count: input.allowed_submission_count ?? null,
        allow_late_submission: input.allow_late_submission ?? true,
        grading_scheme: input.grading_scheme ?? null,
        max_score: input.max_score ?? null,
        weight: input.weight ?? 1,
        review_stages: input.review_stages ?? 1,
        rubric: input.rubric ?? [],
        checklist: input.checklist ?? [],
        attachments: (input.attachments ?? []).map(fileFrom),
        custom_fields: input.custom_fields ?? {},
        source: input.source ?? 'api',
        template_id: input.template_id ?? null,
        assignment_count: 0,
        created_at: ctx.now,
        updated_at: ctx.now,
      };
      checkTask(row);
      return tables.transaction().execute(async (tx) => {
        await requireCategory(tx, ctx, row.category_id);
        const task = await repository.insertTask(tx, ctx, row);
        if (task.schedule_mode === 'recurring' && task.status === 'published') await scheduleGeneration(jobs, tx, ctx, task);
        const view = presentTask(task);
        await events.record(tx, ctx, 'tasks.task.created', view);
        return view;
      });
    },

    async getTask(ctx: RequestContext, id: string): Promise<TaskView> {
      const row = await repository.findTask(tables, ctx, id);
      if (!row) throw notFound('Task');
      return presentTask(row);
    },

    async listTasks(ctx: RequestContext, filters: { status?: TaskStatus; category_id?: number; priority?: Priority; search?: string }, page: PageRequest) {
      const { rows, total } = await repository.listTasks(
        tables,
        ctx,
        { status: filters.status, categoryId: filters.category_id === undefined ? undefined : String(filters.category_id), priority: filters.priority, search: filters.search },
        page,
      );
      return { rows: rows.map(presentTask), total };
    },

    async updateTask(ctx: RequestContext, id: string, input: UpdateTaskInput): Promise<TaskView> {
      uniqueIds('rubric', input.rubric);
      uniqueIds('checklist', input.checklist);
      return tables.transaction().execute(async (tx) => {
        const current = await repository.findTask(tx, ctx, id, { forUpdate: true });
        if (!current) throw notFound('Task');
        assertFresh(input.expected_updated_at, current.updated_at);
        const status = input.status ?? current.status;
        if (status !== current.status && !TASK_MOVES[current.status].includes(status)) {
          throw new AppError('invalid_status_transition', `A ${current.status} task cannot become ${status}.`, [
            {
              path: 'status',
              code: 'invalid_transition',
              message: `Allowed from ${current.status}: ${TASK_MOVES[current.status].join(', ') || 'none'}.`,
              from: current.status,
              to: status,
            },
          ]);
        }
        if (input.category_id !== undefined) await requireCategory(tx, ctx, input.category_id);
        const changes: Partial<Omit<TaskRow, 'id'>> = { status, updated_at: nextUpdatedAt(current.updated_at, ctx.now) };
        const set = <K extends keyof TaskRow>(key: K, value: TaskRow[K] | undefined) => {
          if (value !== undefined) (changes as Record<string, unknown>)[key] = value;
        };
        set('title', input.title?.trim());
        set('category_id', input.category_id);
        set('instructions', input.instructions === undefined ? undefined : (cleanText(input.instructions) ?? null));
        set('priority', input.priority);
        set('due_at', input.due_at === undefined ? undefined : input.due_at === null ? null : new Date(input.due_at));
        set('schedule_mode', input.schedule_mode);
        set('starts_at', input.starts_at === undefined ? undefined : input.starts_at === null ? null : new Date(input.starts_at));
        set(
          'recurrence_rule',
          input.recurrence_rule === undefined
            ? undefined
            : (input.recurrence_rule
                ?.trim()
                .replace(/^RRULE:/i, '')
                .toUpperCase() ?? null),
        );
        set('submission_mode', input.submission_mode);
        set('required_files', input.required_files);
        set('allowed_submission_count', input.allowed_submission_count);
        set('allow_late_submission', input.allow_late_submission);
        set('grading_scheme', input.grading_scheme);
        set('max_score', input.max_score);
        set('weight', input.weight);
        set('review_stages', input.review_stages);
        set('rubric', input.rubric);
        set('checklist', input.checklist);
        set('attachments', input.attachments?.map(fileFrom));
        set('custom_fields', input.custom_fields);
        set('template_id', input.template_id);
        const merged = { ...current, ...changes };
        if (merged.schedule_mode !== 'recurring') merged.recurrence_rule = changes.recurrence_rule = null;
        checkTask(merged);
        const task = await repository.updateTask(tx, ctx, id, changes);
        if (status === 'cancelled' && current.status !== 'cancelled') {
          // The cascade: every open assignment is cancelled with the task.
          for (const assignment of await repository.taskAssignments(tx, ctx, id, ['assigned', 'in_progress', 'submitted', 'returned'], { forUpdate: true })) {
            await cancelAssignment(tx, ctx, events, assignment, input.actor_user_id ?? assignment.assignee_user_id);
          }
        }
        if (task.schedule_mode === 'recurring' && task.status === 'published') await scheduleGeneration(jobs, tx, ctx, task);
        const view = presentTask(task);
        await events.record(tx, ctx, 'tasks.task.updated', view);
        return view;
      });
    },

    async deleteTask(ctx: RequestContext, id: string): Promise<{ id: number; deleted: true }> {
      return tables.transaction().execute(async (tx) => {
        const current = await repository.findTask(tx, ctx, id, { forUpdate: true });
        if (!current) throw notFound('Task');
        await repository.deleteTask(tx, ctx, id);
        await events.record(tx, ctx, 'tasks.task.deleted', presentTask(current));
        return { id: current.id, deleted: true as const };
      });
    },
  };
}
