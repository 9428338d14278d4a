import { sql, type Kysely, type SqlBool } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { ownedTables, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { containsPattern } from '../../lib/search.js';
import type { AssignmentStatus, Decision, EventType, GradingScheme, LinkSource, Priority, ScheduleMode, SubmissionMode, TaskSource, TaskStatus, TasksTables } from './tables.js';

export type TasksDb = Kysely<TasksTables>;

export function tasksDb(db: Db): TasksDb {
  return serviceDb(db);
}

const owned = ownedTables<TasksTables>();
const categories = owned('tasks_categories');
const tasks = owned('tasks_tasks');
const assignments = owned('tasks_assignments');
const submissions = owned('tasks_submissions');
const reviews = owned('tasks_reviews');
const events = owned('tasks_events');
const links = owned('tasks_links');

type Raw = string | number | bigint;
const num = (value: Raw): number => Number(value);
const maybeNum = (value: Raw | null): number | null => (value === null ? null : Number(value));
/** jsonb arrives parsed from both drivers; text only if a driver ever hands it over unparsed. */
const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;
const text = (value: unknown): string => JSON.stringify(value);

// Categories

const CATEGORY_COLUMNS = ['id', 'name', 'description', 'grading_scheme', 'created_at', 'updated_at'] as const;
export interface CategoryRow {
  id: number;
  name: string;
  description: string | null;
  grading_scheme: GradingScheme;
  created_at: Date;
  updated_at: Date;
}
type RawCategory = Omit<CategoryRow, 'id'> & { id: Raw };
const toCategory = (row: RawCategory): CategoryRow => ({ ...row, id: num(row.id) });

export async function insertCategory(db: TasksDb, owner: Owner, row: Omit<CategoryRow, 'id'>): Promise<CategoryRow> {
  return toCategory(await categories.insert(db, owner, row).returning(CATEGORY_COLUMNS).executeTakeFirstOrThrow());
}
const categoryById = categories.statement((from, values: { id: string }) => from.select(CATEGORY_COLUMNS).where('id', '=', values.id));
const categoryByIdForUpdate = categories.statement((from, values: { id: string }) => from.select(CATEGORY_COLUMNS).where('id', '=', values.id).forUpdate());
export async function findCategory(db: TasksDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<CategoryRow | undefined> {
  const row = await (options.forUpdate ? categoryByIdForUpdate : categoryById).first(db, owner, { id });
  return row && toCategory(row);
}
const categoryList = categories.list<Record<string, never>, RawCategory>({
  filters: {},
  select: (from) => from.select(CATEGORY_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});
export async function listCategories(db: TasksDb, owner: Owner, page: PageRequest) {
  const { rows, total } = await categoryList.page(db, owner, {}, page);
  return { rows: rows.map(toCategory), total };
}
export async function updateCategory(db: TasksDb, owner: Owner, id: string, changes: Partial<Omit<CategoryRow, 'id'>>): Promise<CategoryRow> {
  return toCategory(await categories.update(db, owner).set(changes).where('id', '=', id).returning(CATEGORY_COLUMNS).executeTakeFirstOrThrow());
}
export async function deleteCategory(db: TasksDb, owner: Owner, id: string): Promise<void> {
  await categories.delete(db, owner).where('id', '=', id).execute();
}
export async function categoryHasTasks(db: TasksDb, owner: Owner, id: string): Promise<boolean> {
  return (await tasks.select(db, owner).select('id').where('category_id', '=', id).limit(1).executeTakeFirst()) !== undefined;
}

// Tasks

const TASK_COLUMNS = [
  'id',
  'category_id',
  'title',
  'instructions',
  'priority',
  'status',
  'due_at',
  'schedule_mode',
  'starts_at',
  'recurrence_rule',
  'recurrence_parent_id',
  'occurrence_at',
  'submission_mode',
  'required_files',
  'allowed_submission_count',
  'allow_late_submission',
  'grading_scheme',
  'max_score',
  'weight',
  'review_stages',
  'rubric',
  'checklist',
  'attachments',
  'custom_fields',
  'source',
  'template_id',
  'assignment_count',
  'created_at',
  'updated_at',
] as const;

export interface RubricCriterionRow {
  id: string;
  label: string;
  max_score: number;
  weight: number;
}
export interface ChecklistItemRow {
  id: string;
  label: string;
  required: boolean;
  requires_note?: boolean;
  requires_file?: boolean;
}
export interface FileRow {
  filename: string;
  mime: string;
  size_bytes: number;
  download_url: string;
  content_url: string;
}

export interface TaskRow {
  id: number;
  category_id: number | null;
  title: string;
  instructions: string | null;
  priority: Priority;
  status: TaskStatus;
  due_at: Date | null;
  schedule_mode: ScheduleMode;
  starts_at: Date | null;
  recurrence_rule: string | null;
  recurrence_parent_id: number | null;
  occurrence_at: Date | null;
  submission_mode: SubmissionMode;
  required_files: number;
  allowed_submission_count: number | null;
  allow_late_submission: boolean;
  grading_scheme: GradingScheme | null;
  max_score: number | null;
  weight: number;
  review_stages: number;
  rubric: RubricCriterionRow[];
  checklist: ChecklistItemRow[];
  attachments: FileRow[];
  custom_fields: Record<string, unknown>;
  source: TaskSource;
  template_id: number | null;
  assignment_count: number;
  created_at: Date;
  updated_at: Date;
}

type RawTask = Record<(typeof TASK_COLUMNS)[number], unknown>;
function toTask(row: RawTask): TaskRow {
  const r = row as Record<string, unknown>;
  return {
    ...(r as unknown as TaskRow),
    id: num(r.id as Raw),
    category_id: maybeNum(r.category_id as Raw | null),
    recurrence_parent_id: maybeNum(r.recurrence_parent_id as Raw | null),
    template_id: maybeNum(r.template_id as Raw | null),
    max_score: maybeNum(r.max_score as Raw | null),
    weight: num(r.weight as Raw),
    rubric: json(r.rubric),
    checklist: json(r.checklist),
    attachments: json(r.attachments),
    custom_fields: json(r.custom_fields),
  };
}

function taskValues(row: Partial<Omit<TaskRow, 'id'>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...row };
  for (const key of ['rubric', 'checklist', 'attachments', 'custom_fields'] as const) if (row[key] !== undefined) out[key] = text(row[key]);
  return out;
}

export async function insertTask(db: TasksDb, owner: Owner, row: Omit<TaskRow, 'id'>): Promise<TaskRow> {
  return toTask(
    await tasks
      .insert(db, owner, taskValues(row) as never)
      .returning(TASK_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}

/** Inserts an occurrence of a recurring task unless it exists already (the unique index decides). */
export async function insertOccurrence(db: TasksDb, owner: Owner, row: Omit<TaskRow, 'id'>): Promise<TaskRow | undefined> {
  const inserted = await tasks
    .insert(db, owner, taskValues(row) as never)
    .onConflict((conflict) => conflict.columns(['recurrence_parent_id', 'occurrence_at']).where('recurrence_parent_id', 'is not', null).doNothing())
    .returning(TASK_COLUMNS)
    .executeTakeFirst();
  return inserted && toTask(inserted);
}

const taskById = tasks.statement((from, values: { id: string }) => from.select(TASK_COLUMNS).where('id', '=', values.id));
const taskByIdForUpdate = tasks.statement((from, values: { id: string }) => from.select(TASK_COLUMNS).where('id', '=', values.id).forUpdate());
export async function findTask(db: TasksDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<TaskRow | undefined> {
  const row = await (options.forUpdate ? taskByIdForUpdate : taskById).first(db, owner, { id });
  return row && toTask(row);
}

export async function findTasks(db: TasksDb, owner: Owner, ids: number[]): Promise<TaskRow[]> {
  if (ids.length === 0) return [];
  const rows = await tasks.select(db, owner).select(TASK_COLUMNS).where('id', 'in', ids.map(String)).execute();
  return rows.map((row) => toTask(row as RawTask));
}

export type TaskFilters = {
  status?: TaskStatus;
  categoryId?: string;
  priority?: Priority;
  pattern?: string;
};
const taskList = tasks.list<TaskFilters, RawTask>({
  filters: {
    status: (eb, status) => eb('status', '=', status),
    categoryId: (eb, categoryId) => eb('category_id', '=', categoryId),
    priority: (eb, priority) => eb('priority', '=', priority),
    pattern: (eb, pattern) => eb('title', 'ilike', pattern),
  },
  select: (from) => from.select(TASK_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});
export async function listTasks(db: TasksDb, owner: Owner, filters: { status?: TaskStatus; categoryId?: string; priority?: Priority; search?: string }, page: PageRequest) {
  const { rows, total } = await taskList.page(
    db,
    owner,
    { status: filters.status, categoryId: filters.categoryId, priority: filters.priority, pattern: filters.search ? containsPattern(filters.search) : undefined },
    page,
  );
  return { rows: rows.map(toTask), total };
}

export async function updateTask(db: TasksDb, owner: Owner, id: string, changes: Partial<Omit<TaskRow, 'id'>>): Promise<TaskRow> {
  const row = await tasks
    .update(db, owner)
    .set(taskValues(changes) as never)
    .where('id', '=', id)
    .returning(TASK_COLUMNS)
    .executeTakeFirstOrThrow();
  return toTask(row);
}

export async function bumpAssignmentCount(db: TasksDb, owner: Owner, id: string, by: number, updatedAt: Date): Promise<TaskRow> {
  const row = await tasks
    .update(db, owner)
    .set({ assignment_count: sql<number>`assignment_count + ${by}`, updated_at: updatedAt } as never)
    .where('id', '=', id)
    .returning(TASK_COLUMNS)
    .executeTakeFirstOrThrow();
  return toTask(row);
}

export async function deleteTask(db: TasksDb, owner: Owner, id: string): Promise<void> {
  await tasks.delete(db, owner).where('id', '=', id).execute();
}

/** Published recurring tasks across every owner, for the generating job's sweep. */
export async function recurringTaskOwners(db: TasksDb): Promise<{ id: number; owner: Owner }[]> {
  const rows = await tasks.acrossOwners(db).select('id').where('schedule_mode', '=', 'recurring').where('status', '=', 'published').execute();
  return rows.map((row) => ({ id: num((row as { id: Raw }).id), owner: { tenantId: row.tenant_id, mode: row.mode } }));
}

export async function categoryTasks(db: TasksDb, owner: Owner, categoryId: string): Promise<TaskRow[]> {
  const rows = await tasks.select(db, owner).select(TASK_COLUMNS).where('category_id', '=', categoryId).orderBy('id', 'asc').execute();
  return rows.map((row) => toTask(row as RawTask));
}

// Assignments

const ASSIGNMENT_COLUMNS = [
  'id',
  'task_id',
  'assignee_user_id',
  'assigned_by',
  'group_id',
  'delegated_by',
  'delegation_reason',
  'status',
  'due_at',
  'original_due_at',
  'checklist_state',
  'custom_fields',
  'score',
  'attempt_count',
  'started_at',
  'submitted_at',
  'completed_at',
  'reopened_at',
  'created_at',
  'updated_at',
] as const;

export interface ChecklistStateRow {
  id: string;
  checked_at: string;
  checked_by: number;
  note: string | null;
  file: FileRow | null;
}

export interface AssignmentRow {
  id: number;
  task_id: number;
  assignee_user_id: number;
  assigned_by: number;
  group_id: number | null;
  delegated_by: number | null;
  delegation_reason: string | null;
  status: AssignmentStatus;
  due_at: Date;
  original_due_at: Date;
  checklist_state: ChecklistStateRow[];
  custom_fields: Record<string, unknown>;
  score: number | null;
  attempt_count: number;
  started_at: Date | null;
  submitted_at: Date | null;
  completed_at: Date | null;
  reopened_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

type RawAssignment = Record<(typeof ASSIGNMENT_COLUMNS)[number], unknown>;
function toAssignment(row: RawAssignment): AssignmentRow {
  const r = row as Record<string, unknown>;
  return {
    ...(r as unknown as AssignmentRow),
    id: num(r.id as Raw),
    task_id: num(r.task_id as Raw),
    assignee_user_id: num(r.assignee_user_id as Raw),
    assigned_by: num(r.assigned_by as Raw),
    group_id: maybeNum(r.group_id as Raw | null),
    delegated_by: maybeNum(r.delegated_by as Raw | null),
    score: maybeNum(r.score as Raw | null),
    checklist_state: json(r.checklist_state),
    custom_fields: json(r.custom_fields),
  };
}
function assignmentValues(row: Partial<Omit<AssignmentRow, 'id'>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...row };
  if (row.checklist_state !== undefined) out.checklist_state = text(row.checklist_state);
  if (row.custom_fields !== undefined) out.custom_fields = text(row.custom_fields);
  return out;
}

export async function insertAssignment(db: TasksDb, owner: Owner, row: Omit<AssignmentRow, 'id'>): Promise<AssignmentRow> {
  return toAssignment(
    await assignments
      .insert(db, owner, assignmentValues(row) as never)
      .returning(ASSIGNMENT_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}
const assignmentById = assignments.statement((from, values: { id: string }) => from.select(ASSIGNMENT_COLUMNS).where('id', '=', values.id));
const assignmentByIdForUpdate = assignments.statement((from, values: { id: string }) => from.select(ASSIGNMENT_COLUMNS).where('id', '=', values.id).forUpdate());
export async function findAssignment(db: TasksDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<AssignmentRow | undefined> {
  const row = await (options.forUpdate ? assignmentByIdForUpdate : assignmentById).first(db, owner, { id });
  return row && toAssignment(row);
}
export async function updateAssignment(db: TasksDb, owner: Owner, id: string, changes: Partial<Omit<AssignmentRow, 'id'>>): Promise<AssignmentRow> {
  const row = await assignments
    .update(db, owner)
    .set(assignmentValues(changes) as never)
    .where('id', '=', id)
    .returning(ASSIGNMENT_COLUMNS)
    .executeTakeFirstOrThrow();
  return toAssignment(row);
}
/** Assignments of a task in any of `statuses`, locked, oldest first. */
export async function taskAssignments(
  db: TasksDb,
  owner: Owner,
  taskId: string,
  statuses?: readonly AssignmentStatus[],
  options: { forUpdate?: boolean } = {},
): Promise<AssignmentRow[]> {
  let query = assignments.select(db, owner).select(ASSIGNMENT_COLUMNS).where('task_id', '=', taskId);
  if (statuses) query = query.where('status', 'in', [...statuses]);
  query = query.orderBy('id', 'asc');
  if (options.forUpdate) query = query.forUpdate();
  return (await query.execute()).map((row) => toAssignment(row as RawAssignment));
}
/** Assignments of these tasks held by `assigneeUserId` (by anyone when undefined). */
export async function assigneeAssignments(db: TasksDb, owner: Owner, assigneeUserId: number | undefined, taskIds: number[]): Promise<AssignmentRow[]> {
  if (taskIds.length === 0) return [];
  let query = assignments.select(db, owner).select(ASSIGNMENT_COLUMNS).where('task_id', 'in', taskIds.map(String));
  if (assigneeUserId !== undefined) query = query.where('assignee_user_id', '=', String(assigneeUserId));
  const rows = await query.orderBy('id', 'asc').execute();
  return rows.map((row) => toAssignment(row as RawAssignment));
}

export type AssignmentFilters = {
  assignee?: string;
  status?: AssignmentStatus;
  taskId?: string;
  /** Leaves out assignments of these tasks (the ones hidden from assignees). */
  hiddenTaskIds?: string[];
};
const assignmentList = assignments.list<AssignmentFilters, RawAssignment>({
  filters: {
    assignee: (eb, assignee) => eb('assignee_user_id', '=', assignee),
    status: (eb, status) => eb('status', '=', status),
    taskId: (eb, taskId) => eb('task_id', '=', taskId),
    hiddenTaskIds: (_eb, ids) => sql<SqlBool>`not (task_id = any(${ids}::bigint[]))`,
  },
  select: (from) => from.select(ASSIGNMENT_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});
/** Tasks hidden from assignees at `now`: paused ones, and scheduled ones whose starts_at is still ahead. */
export async function hiddenTaskIds(db: TasksDb, owner: Owner, now: Date): Promise<string[]> {
  const rows = await tasks
    .select(db, owner)
    .select('id')
    .where((eb) => eb.or([eb('status', '=', 'paused'), eb.and([eb('schedule_mode', '=', 'scheduled'), eb('starts_at', '>', now)])]))
    .execute();
  return rows.map((row) => String(row.id));
}

export async function listAssignments(db: TasksDb, owner: Owner, filters: AssignmentFilters, page: PageRequest) {
  const { rows, total } = await assignmentList.page(db, owner, filters, page);
  return { rows: rows.map(toAssignment), total };
}

// Submissions

const SUBMISSION_COLUMNS = ['id', 'assignment_id', 'attempt_no', 'note', 'files', 'custom_fields', 'is_late', 'submitted_at'] as const;
export interface SubmissionRow {
  id: number;
  assignment_id: number;
  attempt_no: number;
  note: string | null;
  files: FileRow[];
  custom_fields: Record<string, unknown>;
  is_late: boolean;
  submitted_at: Date;
}
type RawSubmission = Record<(typeof SUBMISSION_COLUMNS)[number], unknown>;
function toSubmission(row: RawSubmission): SubmissionRow {
  const r = row as Record<string, unknown>;
  return { ...(r as unknown as SubmissionRow), id: num(r.id as Raw), assignment_id: num(r.assignment_id as Raw), files: json(r.files), custom_fields: json(r.custom_fields) };
}
export async function insertSubmission(db: TasksDb, owner: Owner, row: Omit<SubmissionRow, 'id'>): Promise<SubmissionRow> {
  const values = { ...row, files: text(row.files), custom_fields: text(row.custom_fields) };
  return toSubmission(
    await submissions
      .insert(db, owner, values as never)
      .returning(SUBMISSION_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}
export async function findSubmission(db: TasksDb, owner: Owner, id: string): Promise<SubmissionRow | undefined> {
  const row = await submissions.select(db, owner).select(SUBMISSION_COLUMNS).where('id', '=', id).executeTakeFirst();
  return row && toSubmission(row);
}
/** Every attempt, newest first. */
export async function assignmentSubmissions(db: TasksDb, owner: Owner, assignmentId: string): Promise<SubmissionRow[]> {
  const rows = await submissions.select(db, owner).select(SUBMISSION_COLUMNS).where('assignment_id', '=', assignmentId).orderBy('attempt_no', 'desc').execute();
  return rows.map((row) => toSubmission(row as RawSubmission));
}

// Reviews

const REVIEW_COLUMNS = ['id', 'submission_id', 'reviewer_id', 'stage', 'decision', 'feedback', 'score', 'grade', 'rubric_scores', 'created_at'] as const;
export interface ReviewRow {
  id: number;
  submission_id: number;
  reviewer_id: number;
  stage: number;
  decision: Decision;
  feedback: string | null;
  score: number | null;
  grade: string | null;
  rubric_scores: { criterion_id: string; score: number }[];
  created_at: Date;
}
type RawReview = Record<(typeof REVIEW_COLUMNS)[number], unknown>;
function toReview(row: RawReview): ReviewRow {
  const r = row as Record<string, unknown>;
  return {
    ...(r as unknown as ReviewRow),
    id: num(r.id as Raw),
    submission_id: num(r.submission_id as Raw),
    reviewer_id: num(r.reviewer_id as Raw),
    score: maybeNum(r.score as Raw | null),
    rubric_scores: json(r.rubric_scores),
  };
}
export async function insertReview(db: TasksDb, owner: Owner, row: Omit<ReviewRow, 'id'>): Promise<ReviewRow> {
  const values = { ...row, rubric_scores: text(row.rubric_scores) };
  return toReview(
    await reviews
      .insert(db, owner, values as never)
      .returning(REVIEW_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}
export async function submissionReviews(db: TasksDb, owner: Owner, submissionIds: number[]): Promise<ReviewRow[]> {
  if (submissionIds.length === 0) return [];
  const rows = await reviews
    .select(db, owner)
    .select(REVIEW_COLUMNS)
    .where('submission_id', 'in', submissionIds.map(String))
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map((row) => toReview(row as RawReview));
}

// Assignment events

const EVENT_COLUMNS = ['id', 'assignment_id', 'event_type', 'from_user_id', 'to_user_id', 'from_value', 'to_value', 'changed_by', 'reason', 'created_at'] as const;
export interface EventRow {
  id: number;
  assignment_id: number;
  event_type: EventType;
  from_user_id: number | null;
  to_user_id: number | null;
  from_value: string | null;
  to_value: string | null;
  changed_by: number;
  reason: string | null;
  created_at: Date;
}
type RawEvent = Record<(typeof EVENT_COLUMNS)[number], unknown>;
function toEvent(row: RawEvent): EventRow {
  const r = row as Record<string, unknown>;
  return {
    ...(r as unknown as EventRow),
    id: num(r.id as Raw),
    assignment_id: num(r.assignment_id as Raw),
    from_user_id: maybeNum(r.from_user_id as Raw | null),
    to_user_id: maybeNum(r.to_user_id as Raw | null),
    changed_by: num(r.changed_by as Raw),
  };
}
export async function insertEvent(db: TasksDb, owner: Owner, row: Omit<EventRow, 'id'>): Promise<EventRow> {
  return toEvent(
    await events
      .insert(db, owner, row as never)
      .returning(EVENT_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}
export async function assignmentEvents(db: TasksDb, owner: Owner, assignmentId: string): Promise<EventRow[]> {
  const rows = await events.select(db, owner).select(EVENT_COLUMNS).where('assignment_id', '=', assignmentId).orderBy('id', 'asc').execute();
  return rows.map((row) => toEvent(row as RawEvent));
}

// Links

const LINK_COLUMNS = ['id', 'task_id', 'source', 'source_id', 'label', 'url'] as const;
export interface LinkRow {
  id: number;
  task_id: number;
  source: LinkSource;
  source_id: string;
  label: string | null;
  url: string | null;
}
type RawLink = Omit<LinkRow, 'id' | 'task_id'> & { id: Raw; task_id: Raw };
const toLink = (row: RawLink): LinkRow => ({ ...row, id: num(row.id), task_id: num(row.task_id) });

/** The link, or undefined when the task already links this record. */
export async function insertLink(db: TasksDb, owner: Owner, row: Omit<LinkRow, 'id'> & { created_at: Date }): Promise<LinkRow | undefined> {
  const inserted = await links
    .insert(db, owner, row as never)
    .onConflict((conflict) => conflict.constraint('tasks_links_once').doNothing())
    .returning(LINK_COLUMNS)
    .executeTakeFirst();
  return inserted && toLink(inserted);
}
const linkList = links.list<{ taskId: string }, RawLink>({
  filters: { taskId: (eb, taskId) => eb('task_id', '=', taskId) },
  select: (from) => from.select(LINK_COLUMNS).orderBy('id', 'asc'),
});
export async function listLinks(db: TasksDb, owner: Owner, taskId: string, page: PageRequest) {
  const { rows, total } = await linkList.page(db, owner, { taskId }, page);
  return { rows: rows.map(toLink), total };
}
export async function findLink(db: TasksDb, owner: Owner, taskId: string, linkId: string): Promise<LinkRow | undefined> {
  const row = await links.select(db, owner).select(LINK_COLUMNS).where('task_id', '=', taskId).where('id', '=', linkId).executeTakeFirst();
  return row && toLink(row);
}
export async function findLinkBySource(db: TasksDb, owner: Owner, taskId: string, source: string, sourceId: string): Promise<LinkRow | undefined> {
  const row = await links
    .select(db, owner)
    .select(LINK_COLUMNS)
    .where('task_id', '=', taskId)
    .where('source', '=', source as LinkSource)
    .where('source_id', '=', sourceId)
    .executeTakeFirst();
  return row && toLink(row);
}
export async function updateLinkLabel(db: TasksDb, owner: Owner, linkId: number, label: string | null, url: string | null): Promise<void> {
  await links.update(db, owner).set({ label, url }).where('id', '=', String(linkId)).execute();
}
export async function deleteLink(db: TasksDb, owner: Owner, linkId: string): Promise<void> {
  await links.delete(db, owner).where('id', '=', linkId).execute();
}
