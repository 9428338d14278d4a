import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import type { Owner } from '../../platform/context.js';
import { isUniqueViolation } from '../../db/errors.js';
import { containsPattern } from '../../lib/search.js';
import { selectPage } from '../../db/paging.js';
import type { PageRequest } from '../../platform/pagination/index.js';
import type { FormStatus, FormsFormsTable, FormsSubmissionsTable, FormsTables } from './tables.js';

export type { Owner };

export type FormsDb = Kysely<FormsTables>;

export function formsDb(db: Db): FormsDb {
  return serviceDb(db);
}

const FORM_COLUMNS = [
  'id',
  'name',
  'slug',
  'description',
  'status',
  'fields',
  'success_message',
  'redirect_url',
  'submission_count',
  'unread_count',
  'created_at',
  'updated_at',
] as const;
const SUBMISSION_COLUMNS = ['id', 'form_id', 'data', 'read', 'read_at', 'submitted_at', 'metadata'] as const;

export type FormRow = Pick<FormsFormsTable, Exclude<(typeof FORM_COLUMNS)[number], 'fields' | 'submission_count' | 'unread_count'>> & {
  fields: FormsFormsTable['fields']['__select__'];
  submission_count: number;
  unread_count: number;
};
export type SubmissionRow = {
  id: string;
  form_id: string;
  data: Record<string, unknown>;
  read: boolean;
  read_at: Date | null;
  submitted_at: Date;
  metadata: Record<string, unknown>;
};
export type NewForm = Omit<FormsFormsTable, 'submission_count' | 'unread_count' | 'fields'> & { fields: string };
export type FormChanges = Partial<Pick<FormsFormsTable, 'name' | 'slug' | 'description' | 'status' | 'success_message' | 'redirect_url' | 'updated_at'>> & {
  fields?: string;
};

/** True when `error` is PostgreSQL's unique violation on the (tenant, mode, slug) constraint. */
export function isSlugConflict(error: unknown): boolean {
  return isUniqueViolation(error, 'forms_forms_tenant_id_mode_slug_key');
}

export function insertForm(db: FormsDb, row: NewForm): Promise<FormRow> {
  return db.insertInto('forms_forms').values(row).returning(FORM_COLUMNS).executeTakeFirstOrThrow();
}

function formsOf(db: FormsDb, owner: Owner) {
  return db.selectFrom('forms_forms').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
}

/**
 * By id. `lock: 'update'` for edits of the form itself; `lock: 'noKeyUpdate'` for changes
 * to its submissions (it serialises them per form for the counters and, taken first, keeps
 * one lock order with a form delete cascading to the submissions).
 */
export function findForm(db: FormsDb, owner: Owner, id: string, options: { lock?: 'update' | 'noKeyUpdate' } = {}): Promise<FormRow | undefined> {
  let query = formsOf(db, owner).select(FORM_COLUMNS).where('id', '=', id);
  if (options.lock === 'update') query = query.forUpdate();
  if (options.lock === 'noKeyUpdate') query = query.forNoKeyUpdate();
  return query.executeTakeFirst();
}

/**
 * By slug. `lockForSubmission` takes the row lock a submission needs: it keeps the status
 * and fields steady while the answers are checked and serialises the counter updates,
 * without blocking the foreign-key check of the insert (FOR NO KEY UPDATE).
 */
export function findFormBySlug(db: FormsDb, owner: Owner, slug: string, options: { lockForSubmission?: boolean } = {}): Promise<FormRow | undefined> {
  let query = formsOf(db, owner).select(FORM_COLUMNS).where('slug', '=', slug);
  if (options.lockForSubmission) query = query.forNoKeyUpdate();
  return query.executeTakeFirst();
}

export async function listForms(db: FormsDb, owner: Owner, filters: { status?: FormStatus; search?: string }, page: PageRequest) {
  let base = formsOf(db, owner);
  if (filters.status) base = base.where('status', '=', filters.status);
  if (filters.search) {
    const pattern = containsPattern(filters.search);
    base = base.where((eb) => eb.or([eb('name', 'ilike', pattern), eb('slug', 'ilike', pattern)]));
  }
  return selectPage(db, base, base.select(FORM_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

/** Slugs of the owner equal to `base` or starting with `base-` (candidates for numbering). */
export async function slugsStartingWith(db: FormsDb, owner: Owner, base: string): Promise<Set<string>> {
  const rows = await formsOf(db, owner)
    .select('slug')
    .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base.replace(/[\\%_]/g, (char) => `\\${char}`)}-%`)]))
    .execute();
  return new Set(rows.map((row) => row.slug));
}

export async function isSlugTaken(db: FormsDb, owner: Owner, slug: string, exceptId?: string): Promise<boolean> {
  let query = formsOf(db, owner).select('id').where('slug', '=', slug);
  if (exceptId) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

export function updateForm(db: FormsDb, owner: Owner, id: string, changes: FormChanges): Promise<FormRow> {
  return db
    .updateTable('forms_forms')
    .set(changes)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .returning(FORM_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Deletes the form; its submissions go with it (foreign key ON DELETE CASCADE). */
export async function deleteForm(db: FormsDb, owner: Owner, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('forms_forms')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Moves the form's counters; called in the transaction that changed the submissions. */
export async function adjustCounts(db: FormsDb, owner: Owner, formId: string, delta: { submissions: number; unread: number }): Promise<void> {
  if (delta.submissions === 0 && delta.unread === 0) return;
  await db
    .updateTable('forms_forms')
    .set((eb) => ({
      submission_count: eb('submission_count', '+', delta.submissions),
      unread_count: eb('unread_count', '+', delta.unread),
    }))
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', formId)
    .execute();
}

export function insertSubmission(db: FormsDb, row: Omit<FormsSubmissionsTable, 'data' | 'metadata'> & { data: string; metadata: string }): Promise<SubmissionRow> {
  return db.insertInto('forms_submissions').values(row).returning(SUBMISSION_COLUMNS).executeTakeFirstOrThrow();
}

function submissionsOf(db: FormsDb, owner: Owner, formId: string) {
  return db
    .selectFrom('forms_submissions')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('form_id', '=', formId);
}

/** Newest first; `total` is not counted here (the form's counters hold it). */
export function listSubmissions(db: FormsDb, owner: Owner, formId: string, filters: { read?: boolean }, page: PageRequest): Promise<SubmissionRow[]> {
  let query = submissionsOf(db, owner, formId).select(SUBMISSION_COLUMNS);
  if (filters.read !== undefined) query = query.where('read', '=', filters.read);
  return query.orderBy('submitted_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
}

export function findSubmission(db: FormsDb, owner: Owner, formId: string, id: string): Promise<SubmissionRow | undefined> {
  return submissionsOf(db, owner, formId).select(SUBMISSION_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/**
 * Sets read/unread only if it changes; returns the row when it did. The condition on the
 * current value makes two concurrent readers change it (and the counter) once.
 */
export function setSubmissionRead(db: FormsDb, owner: Owner, formId: string, id: string, read: boolean, readAt: Date | null): Promise<SubmissionRow | undefined> {
  return db
    .updateTable('forms_submissions')
    .set({ read, read_at: readAt })
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('form_id', '=', formId)
    .where('id', '=', id)
    .where('read', '=', !read)
    .returning(SUBMISSION_COLUMNS)
    .executeTakeFirst();
}

export function deleteSubmission(db: FormsDb, owner: Owner, formId: string, id: string): Promise<{ id: string; read: boolean } | undefined> {
  return db
    .deleteFrom('forms_submissions')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('form_id', '=', formId)
    .where('id', '=', id)
    .returning(['id', 'read'])
    .executeTakeFirst();
}

/** Where the previous batch ended: the exact timestamp as PostgreSQL prints it, and the id. */
export interface ExportCursor {
  at: string;
  id: string;
}

/**
 * One row of the export as a single JSON text, `[id, submitted_at, read, data, cursor]`:
 * submitted_at as ISO 8601 with milliseconds, cursor the exact timestamp as PostgreSQL
 * prints it. One string per row (rather than a column each, with a Date and parsed JSON)
 * keeps what a batch holds while it is in flight small; the caller parses rows one by one.
 */
export interface ExportRow {
  row: string;
}

export type ExportRowValues = [id: string, submittedAt: string, read: boolean, data: Record<string, unknown>, cursor: string];

/**
 * One keyset batch of the export, oldest first: rows after `after` in (submitted_at, id)
 * order. The cursor keeps the timestamp as text so rows written with more than millisecond
 * precision (e.g. by an import) are neither skipped nor repeated.
 */
export function exportBatch(db: FormsDb, owner: Owner, formId: string, after: ExportCursor | undefined, limit: number): Promise<ExportRow[]> {
  let query = submissionsOf(db, owner, formId).select(
    sql<string>`json_build_array(id, to_char(submitted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), read, data, submitted_at::text)::text`.as('row'),
  );
  if (after) {
    query = query.where((eb) => eb(eb.refTuple('submitted_at', 'id'), '>', eb.tuple(sql<Date>`${after.at}::timestamptz`, sql<string>`${after.id}::uuid`)));
  }
  return query.orderBy('submitted_at', 'asc').orderBy('id', 'asc').limit(limit).execute();
}
