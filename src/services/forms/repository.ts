import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ownedTables, type OwnedInsert, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { containsPattern } from '../../lib/search.js';
import type { FormStatus, FormsFormsTable, FormsSubmissionsTable, FormsTables } from './tables.js';

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
export type NewForm = Omit<OwnedInsert<FormsFormsTable>, 'submission_count' | 'unread_count'>;
export type FormChanges = Partial<Pick<FormsFormsTable, 'name' | 'slug' | 'description' | 'status' | 'success_message' | 'redirect_url' | 'updated_at'>> & {
  fields?: string;
};

/** True when `error` is PostgreSQL's unique violation on the (tenant, mode, slug) constraint. */
export function isSlugConflict(error: unknown): boolean {
  return isUniqueViolation(error, 'forms_forms_tenant_id_mode_slug_key');
}

const owned = ownedTables<FormsTables>();
const forms = owned('forms_forms');
const submissions = owned('forms_submissions');

export function insertForm(db: FormsDb, owner: Owner, row: NewForm): Promise<FormRow> {
  return forms.insert(db, owner, row).returning(FORM_COLUMNS).executeTakeFirstOrThrow();
}

const formById = forms.statement((from, values: { id: string }) => from.select(FORM_COLUMNS).where('id', '=', values.id));
const formByIdForUpdate = forms.statement((from, values: { id: string }) => from.select(FORM_COLUMNS).where('id', '=', values.id).forUpdate());
const formByIdForNoKeyUpdate = forms.statement((from, values: { id: string }) => from.select(FORM_COLUMNS).where('id', '=', values.id).forNoKeyUpdate());
const formBySlug = forms.statement((from, values: { slug: string }) => from.select(FORM_COLUMNS).where('slug', '=', values.slug));
const formBySlugForSubmission = forms.statement((from, values: { slug: string }) => from.select(FORM_COLUMNS).where('slug', '=', values.slug).forNoKeyUpdate());

/**
 * By id. `lock: 'update'` for edits of the form itself; `lock: 'noKeyUpdate'` for changes
 * to its submissions (it serialises them per form for the counters and, taken first, keeps
 * one lock order with a form delete cascading to the submissions).
 */
export function findForm(db: FormsDb, owner: Owner, id: string, options: { lock?: 'update' | 'noKeyUpdate' } = {}): Promise<FormRow | undefined> {
  const statement = options.lock === 'update' ? formByIdForUpdate : options.lock === 'noKeyUpdate' ? formByIdForNoKeyUpdate : formById;
  return statement.first(db, owner, { id });
}

/**
 * By slug. `lockForSubmission` takes the row lock a submission needs: it keeps the status
 * and fields steady while the answers are checked and serialises the counter updates,
 * without blocking the foreign-key check of the insert (FOR NO KEY UPDATE).
 */
export function findFormBySlug(db: FormsDb, owner: Owner, slug: string, options: { lockForSubmission?: boolean } = {}): Promise<FormRow | undefined> {
  return (options.lockForSubmission ? formBySlugForSubmission : formBySlug).first(db, owner, { slug });
}

const formList = forms.list<{ status?: FormStatus; pattern?: string }, FormRow>({
  filters: {
    status: (eb, status) => eb('status', '=', status),
    pattern: (eb, pattern) => eb.or([eb('name', 'ilike', pattern), eb('slug', 'ilike', pattern)]),
  },
  select: (from) => from.select(FORM_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listForms(db: FormsDb, owner: Owner, filters: { status?: FormStatus; search?: string }, page: PageRequest) {
  return formList.page(db, owner, { status: filters.status, pattern: filters.search ? containsPattern(filters.search) : undefined }, page);
}

/** Slugs of the owner equal to `base` or starting with `base-` (candidates for numbering). */
/** The slugs in use that begin with `prefix`. */
export async function slugsStartingWith(db: FormsDb, owner: Owner, prefix: string): Promise<Set<string>> {
  const rows = await forms
    .select(db, owner)
    .select('slug')
    .where('slug', 'like', `${prefix.replace(/[\\%_]/g, (char) => `\\${char}`)}%`)
    .execute();
  return new Set(rows.map((row) => row.slug));
}

export async function isSlugTaken(db: FormsDb, owner: Owner, slug: string, exceptId?: string): Promise<boolean> {
  let query = forms.select(db, owner).select('id').where('slug', '=', slug);
  if (exceptId) query = query.where('id', '!=', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

export function updateForm(db: FormsDb, owner: Owner, id: string, changes: FormChanges): Promise<FormRow> {
  return forms.update(db, owner).set(changes).where('id', '=', id).returning(FORM_COLUMNS).executeTakeFirstOrThrow();
}

/** Deletes the form; its submissions go with it (foreign key ON DELETE CASCADE). */
export async function deleteForm(db: FormsDb, owner: Owner, id: string): Promise<boolean> {
  const result = await forms.delete(db, owner).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Moves the form's counters; called in the transaction that changed the submissions. */
export async function adjustCounts(db: FormsDb, owner: Owner, formId: string, delta: { submissions: number; unread: number }): Promise<void> {
  if (delta.submissions === 0 && delta.unread === 0) return;
  await forms
    .update(db, owner)
    .set((eb) => ({
      submission_count: eb('submission_count', '+', delta.submissions),
      unread_count: eb('unread_count', '+', delta.unread),
    }))
    .where('id', '=', formId)
    .execute();
}

export function insertSubmission(db: FormsDb, owner: Owner, row: OwnedInsert<FormsSubmissionsTable>): Promise<SubmissionRow> {
  return submissions.insert(db, owner, row).returning(SUBMISSION_COLUMNS).executeTakeFirstOrThrow();
}

const submissionList = submissions.list<{ form_id: string; read?: boolean }, SubmissionRow>({
  filters: {
    form_id: (eb, formId) => eb('form_id', '=', formId),
    read: (eb, read) => eb('read', '=', read),
  },
  select: (from) => from.select(SUBMISSION_COLUMNS).orderBy('submitted_at', 'desc').orderBy('id', 'desc'),
});

/** Newest first; `total` is not counted here (the form's counters hold it). */
export function listSubmissions(db: FormsDb, owner: Owner, formId: string, filters: { read?: boolean }, page: PageRequest): Promise<SubmissionRow[]> {
  return submissionList.rows(db, owner, { form_id: formId, read: filters.read }, page);
}

const submissionById = submissions.statement((from, values: { formId: string; id: string }) =>
  from.select(SUBMISSION_COLUMNS).where('form_id', '=', values.formId).where('id', '=', values.id),
);

export function findSubmission(db: FormsDb, owner: Owner, formId: string, id: string): Promise<SubmissionRow | undefined> {
  return submissionById.first(db, owner, { formId, id });
}

/**
 * Sets read/unread only if it changes; returns the row when it did. The condition on the
 * current value makes two concurrent readers change it (and the counter) once.
 */
export function setSubmissionRead(db: FormsDb, owner: Owner, formId: string, id: string, read: boolean, readAt: Date | null): Promise<SubmissionRow | undefined> {
  return submissions
    .update(db, owner)
    .set({ read, read_at: readAt })
    .where('form_id', '=', formId)
    .where('id', '=', id)
    .where('read', '=', !read)
    .returning(SUBMISSION_COLUMNS)
    .executeTakeFirst();
}

export function deleteSubmission(db: FormsDb, owner: Owner, formId: string, id: string): Promise<{ id: string; read: boolean } | undefined> {
  return submissions.delete(db, owner).where('form_id', '=', formId).where('id', '=', id).returning(['id', 'read']).executeTakeFirst();
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
  let query = submissions
    .select(db, owner)
    .where('form_id', '=', formId)
    .select(sql<string>`json_build_array(id, to_char(submitted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), read, data, submitted_at::text)::text`.as('row'));
  if (after) {
    query = query.where((eb) => eb(eb.refTuple('submitted_at', 'id'), '>', eb.tuple(sql<Date>`${after.at}::timestamptz`, sql<string>`${after.id}::uuid`)));
  }
  return query.orderBy('submitted_at', 'asc').orderBy('id', 'asc').limit(limit).execute();
}
