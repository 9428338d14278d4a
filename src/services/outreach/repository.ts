import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { ownedTables, type OwnedRow, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import type { Mode } from '../../db/types.js';
import type {
  EnrollmentSource,
  EnrollmentStatus,
  ExitReason,
  MessageStatus,
  OutreachEnrollmentsTable,
  OutreachMessagesTable,
  OutreachTables,
  SendWindow,
  SequenceStatus,
  Step,
} from './tables.js';

export type OutreachDb = Kysely<OutreachTables>;

export function outreachDb(db: Db): OutreachDb {
  return serviceDb(db);
}

const owned = ownedTables<OutreachTables>();
const sequences = owned('outreach_sequences');
const enrollments = owned('outreach_enrollments');
const messages = owned('outreach_messages');
const suppressions = owned('outreach_suppressions');

/** jsonb arrives parsed from both drivers; text only if a driver ever hands it over unparsed. */
const json = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

// Sequences

const SEQUENCE_COLUMNS = ['id', 'name', 'status', 'steps', 'send_window', 'timezone', 'created_at', 'updated_at'] as const;

export interface SequenceRow {
  id: string;
  name: string;
  status: SequenceStatus;
  steps: Step[];
  send_window: SendWindow | null;
  timezone: string;
  created_at: Date;
  updated_at: Date;
}

type RawSequence = Omit<SequenceRow, 'steps' | 'send_window'> & { steps: unknown; send_window: unknown };

function toSequence(row: RawSequence): SequenceRow {
  return { ...row, steps: json(row.steps) as Step[], send_window: (json(row.send_window) as SendWindow | null) ?? null };
}

export interface NewSequence {
  id: string;
  name: string;
  status: SequenceStatus;
  steps: Step[];
  send_window: SendWindow | null;
  timezone: string;
  created_at: Date;
  updated_at: Date;
}

function sequenceValues(row: Partial<NewSequence>) {
  const { steps, send_window, ...rest } = row;
  return {
    ...rest,
    ...(steps !== undefined ? { steps: JSON.stringify(steps) } : {}),
    ...(send_window !== undefined ? { send_window: send_window === null ? null : JSON.stringify(send_window) } : {}),
  };
}

export async function insertSequence(db: OutreachDb, owner: Owner, row: NewSequence): Promise<SequenceRow> {
  return toSequence(
    await sequences
      .insert(db, owner, sequenceValues(row) as never)
      .returning(SEQUENCE_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}

const sequenceById = sequences.statement((from, values: { id: string }) => from.select(SEQUENCE_COLUMNS).where('id', '=', values.id));
const sequenceByIdForUpdate = sequences.statement((from, values: { id: string }) => from.select(SEQUENCE_COLUMNS).where('id', '=', values.id).forUpdate());

export async function findSequence(db: OutreachDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<SequenceRow | undefined> {
  const row = await (options.forUpdate ? sequenceByIdForUpdate : sequenceById).first(db, owner, { id });
  return row && toSequence(row);
}

const sequenceList = sequences.list<{ status?: SequenceStatus }, RawSequence>({
  filters: { status: (eb, status) => eb('status', '=', status) },
  select: (from) => from.select(SEQUENCE_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listSequences(db: OutreachDb, owner: Owner, filters: { status?: SequenceStatus }, page: PageRequest) {
  const { rows, total } = await sequenceList.page(db, owner, filters, page);
  return { rows: rows.map(toSequence), total };
}

export async function updateSequence(db: OutreachDb, owner: Owner, id: string, changes: Partial<NewSequence>): Promise<SequenceRow> {
  return toSequence(
    await sequences
      .update(db, owner)
      .set(sequenceValues(changes) as never)
      .where('id', '=', id)
      .returning(SEQUENCE_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}

export async function deleteSequence(db: OutreachDb, owner: Owner, id: string): Promise<void> {
  await sequences.delete(db, owner).where('id', '=', id).execute();
}

export type StatusCounts = Record<EnrollmentStatus, number>;

/** Enrollments per status of each sequence in `ids`. */
export async function countEnrollments(db: OutreachDb, owner: Owner, ids: string[]): Promise<Map<string, StatusCounts>> {
  const counts = new Map<string, StatusCounts>(ids.map((id) => [id, { active: 0, completed: 0, exited: 0, failed: 0 }]));
  if (ids.length === 0) return counts;
  const rows = await enrollments
    .select(db, owner)
    .select(['sequence_id', 'status', sql<string>`count(*)`.as('count')])
    .where('sequence_id', 'in', ids)
    .groupBy(['sequence_id', 'status'])
    .execute();
  for (const row of rows) counts.get(row.sequence_id)![row.status] = Number(row.count);
  return counts;
}

export async function sequenceHasEnrollments(db: OutreachDb, owner: Owner, id: string): Promise<boolean> {
  const row = await enrollments.select(db, owner).select('id').where('sequence_id', '=', id).limit(1).executeTakeFirst();
  return row !== undefined;
}

// Enrollments

const ENROLLMENT_COLUMNS = [
  'id',
  'sequence_id',
  'address',
  'display_name',
  'status',
  'next_position',
  'next_run_at',
  'exit_reason',
  'source',
  'send_attempts',
  'enrolled_at',
  'last_sent_at',
  'updated_at',
] as const;

export interface EnrollmentRow {
  id: string;
  sequence_id: string;
  address: string;
  display_name: string | null;
  status: EnrollmentStatus;
  next_position: number | null;
  next_run_at: Date | null;
  exit_reason: ExitReason | null;
  source: EnrollmentSource;
  send_attempts: number;
  enrolled_at: Date;
  last_sent_at: Date | null;
  updated_at: Date;
}

export type NewEnrollment = OwnedRow<OutreachEnrollmentsTable>;

/** Inserts the enrollment unless the person is already active in the sequence; undefined then. */
export async function insertEnrollment(db: OutreachDb, owner: Owner, row: NewEnrollment): Promise<EnrollmentRow | undefined> {
  return enrollments
    .insert(db, owner, row)
    .onConflict((conflict) => conflict.doNothing()) // the only possible conflict: one active enrollment per person
    .returning(ENROLLMENT_COLUMNS)
    .executeTakeFirst();
}

const enrollmentById = enrollments.statement((from, values: { sequenceId: string; id: string }) =>
  from.select(ENROLLMENT_COLUMNS).where('sequence_id', '=', values.sequenceId).where('id', '=', values.id),
);

export async function findEnrollment(db: OutreachDb, owner: Owner, sequenceId: string, id: string): Promise<EnrollmentRow | undefined> {
  return enrollmentById.first(db, owner, { sequenceId, id });
}

export async function findEnrollmentForUpdate(db: OutreachDb, owner: Owner, id: string): Promise<EnrollmentRow | undefined> {
  return enrollments.select(db, owner).select(ENROLLMENT_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function findActiveEnrollment(db: OutreachDb, owner: Owner, sequenceId: string, address: string): Promise<EnrollmentRow | undefined> {
  return enrollments
    .select(db, owner)
    .select(ENROLLMENT_COLUMNS)
    .where('sequence_id', '=', sequenceId)
    .where('address', '=', address)
    .where('status', '=', 'active')
    .executeTakeFirst();
}

/** The active enrollments of a number across every sequence, locked, oldest first. */
export async function activeEnrollmentsOf(db: OutreachDb, owner: Owner, address: string): Promise<EnrollmentRow[]> {
  return enrollments
    .select(db, owner)
    .select(ENROLLMENT_COLUMNS)
    .where('address', '=', address)
    .where('status', '=', 'active')
    .orderBy('enrolled_at')
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** The active enrollments of a sequence (to schedule them again when it becomes active). */
export async function activeEnrollmentsOfSequence(db: OutreachDb, owner: Owner, sequenceId: string): Promise<EnrollmentRow[]> {
  return enrollments.select(db, owner).select(ENROLLMENT_COLUMNS).where('sequence_id', '=', sequenceId).where('status', '=', 'active').execute();
}

/**
 * Maintenance across every owner: active enrollments of active sequences whose step is overdue
 * since before `before` (a step job that was lost or gave up), oldest first.
 */
export async function overdueEnrollments(db: OutreachDb, before: Date, limit: number) {
  const found: Array<{ id: string; tenant_id: string; mode: Mode; sequence_id: string; next_position: number | null; next_run_at: Date | null }> = [];
  // Pages of overdue rows, keeping those of active sequences (paused ones stay overdue on purpose).
  for (let page = 0; page < 10 && found.length < limit; page += 1) {
    const rows = await enrollments
      .acrossOwners(db)
      .select(['id', 'sequence_id', 'next_position', 'next_run_at'])
      .where('status', '=', 'active')
      .where('next_run_at', '<', before)
      .orderBy('next_run_at')
      .orderBy('id')
      .limit(limit)
      .offset(page * limit)
      .execute();
    if (rows.length === 0) break;
    const active = await sequences
      .acrossOwners(db)
      .select('id')
      .where('id', 'in', [...new Set(rows.map((row) => row.sequence_id))])
      .where('status', '=', 'active')
      .execute();
    const activeIds = new Set(active.map((row) => row.id));
    found.push(...rows.filter((row) => activeIds.has(row.sequence_id)));
    if (rows.length < limit) break;
  }
  return found.slice(0, limit);
}

const enrollmentList = enrollments.list<{ sequenceId: string; status?: EnrollmentStatus }, EnrollmentRow>({
  filters: {
    sequenceId: (eb, sequenceId) => eb('sequence_id', '=', sequenceId),
    status: (eb, status) => eb('status', '=', status),
  },
  select: (from) => from.select(ENROLLMENT_COLUMNS).orderBy('enrolled_at', 'desc').orderBy('id', 'desc'),
});

export async function listEnrollments(db: OutreachDb, owner: Owner, filters: { sequenceId: string; status?: EnrollmentStatus }, page: PageRequest) {
  return enrollmentList.page(db, owner, filters, page);
}

export async function updateEnrollment(db: OutreachDb, owner: Owner, id: string, changes: Partial<NewEnrollment>): Promise<EnrollmentRow> {
  return enrollments.update(db, owner).set(changes).where('id', '=', id).returning(ENROLLMENT_COLUMNS).executeTakeFirstOrThrow();
}

// Messages

const MESSAGE_COLUMNS = [
  'id',
  'direction',
  'sequence_id',
  'enrollment_id',
  'position',
  'from_address',
  'to_address',
  'body',
  'status',
  'provider',
  'provider_message_id',
  'error',
  'attempts',
  'created_at',
  'sent_at',
  'updated_at',
] as const;

export type MessageRow = OwnedRow<OutreachMessagesTable>;

/** Inserts an outbound step message unless that step of the enrollment already has one; undefined then. */
export async function insertStepMessage(db: OutreachDb, owner: Owner, row: MessageRow): Promise<MessageRow | undefined> {
  return messages
    .insert(db, owner, row)
    .onConflict((conflict) => conflict.doNothing()) // the only possible conflict: one message per step
    .returning(MESSAGE_COLUMNS)
    .executeTakeFirst();
}

/** Inserts an inbound message unless its provider id is recorded already; undefined then. */
export async function insertInboundMessage(db: OutreachDb, owner: Owner, row: MessageRow): Promise<MessageRow | undefined> {
  return messages
    .insert(db, owner, row)
    .onConflict((conflict) => conflict.doNothing()) // the only possible conflict: the provider id is recorded
    .returning(MESSAGE_COLUMNS)
    .executeTakeFirst();
}

export async function findByProviderId(db: OutreachDb, owner: Owner, provider: string, providerMessageId: string): Promise<MessageRow | undefined> {
  return messages.select(db, owner).select(MESSAGE_COLUMNS).where('provider', '=', provider).where('provider_message_id', '=', providerMessageId).executeTakeFirst();
}

export async function findStepMessage(db: OutreachDb, owner: Owner, enrollmentId: string, position: number): Promise<MessageRow | undefined> {
  return messages
    .select(db, owner)
    .select(MESSAGE_COLUMNS)
    .where('enrollment_id', '=', enrollmentId)
    .where('position', '=', position)
    .where('direction', '=', 'outbound')
    .forUpdate()
    .executeTakeFirst();
}

const messageById = messages.statement((from, values: { id: string }) => from.select(MESSAGE_COLUMNS).where('id', '=', values.id));

export async function findMessage(db: OutreachDb, owner: Owner, id: string): Promise<MessageRow | undefined> {
  return messageById.first(db, owner, { id });
}

export async function findMessageForUpdate(db: OutreachDb, owner: Owner, by: { id?: string; providerMessageId?: string }): Promise<MessageRow | undefined> {
  let query = messages.select(db, owner).select(MESSAGE_COLUMNS).where('direction', '=', 'outbound');
  if (by.id !== undefined) query = query.where('id', '=', by.id);
  if (by.providerMessageId !== undefined) query = query.where('provider_message_id', '=', by.providerMessageId);
  return query.forUpdate().executeTakeFirst();
}

export async function updateMessage(db: OutreachDb, owner: Owner, id: string, changes: Partial<MessageRow>): Promise<MessageRow> {
  return messages.update(db, owner).set(changes).where('id', '=', id).returning(MESSAGE_COLUMNS).executeTakeFirstOrThrow();
}

export type MessageFilters = {
  sequenceId?: string;
  enrollmentId?: string;
  address?: string;
  to?: string;
  from?: string;
  direction?: 'outbound' | 'inbound';
  status?: MessageStatus;
};

const messageList = messages.list<MessageFilters, MessageRow>({
  filters: {
    sequenceId: (eb, sequenceId) => eb('sequence_id', '=', sequenceId),
    enrollmentId: (eb, enrollmentId) => eb('enrollment_id', '=', enrollmentId),
    address: (eb, address) => eb.or([eb('to_address', '=', address), eb('from_address', '=', address)]),
    to: (eb, to) => eb('to_address', '=', to),
    from: (eb, from) => eb('from_address', '=', from),
    direction: (eb, direction) => eb('direction', '=', direction),
    status: (eb, status) => eb('status', '=', status),
  },
  select: (from) => from.select(MESSAGE_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listMessages(db: OutreachDb, owner: Owner, filters: MessageFilters, page: PageRequest) {
  return messageList.page(db, owner, filters, page);
}

// Suppressions

const SUPPRESSION_COLUMNS = ['id', 'address', 'reason', 'note', 'created_at'] as const;

export interface SuppressionRow {
  id: string;
  address: string;
  reason: 'opted_out' | 'manual';
  note: string | null;
  created_at: Date;
}

/** Adds the number; undefined when it is already on the list. */
export async function insertSuppression(db: OutreachDb, owner: Owner, row: SuppressionRow): Promise<SuppressionRow | undefined> {
  return suppressions
    .insert(db, owner, row)
    .onConflict((conflict) => conflict.doNothing()) // the only possible conflict: the number is listed
    .returning(SUPPRESSION_COLUMNS)
    .executeTakeFirst();
}

const suppressionByAddress = suppressions.statement((from, values: { address: string }) => from.select(SUPPRESSION_COLUMNS).where('address', '=', values.address));

export async function findSuppressionByAddress(db: OutreachDb, owner: Owner, address: string): Promise<SuppressionRow | undefined> {
  return suppressionByAddress.first(db, owner, { address });
}

export async function suppressedAmong(db: OutreachDb, owner: Owner, addresses: string[]): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const rows = await suppressions.select(db, owner).select('address').where('address', 'in', addresses).execute();
  return new Set(rows.map((row) => row.address));
}

const suppressionById = suppressions.statement((from, values: { id: string }) => from.select(SUPPRESSION_COLUMNS).where('id', '=', values.id));

export async function findSuppression(db: OutreachDb, owner: Owner, id: string): Promise<SuppressionRow | undefined> {
  return suppressionById.first(db, owner, { id });
}

export async function deleteSuppression(db: OutreachDb, owner: Owner, id: string): Promise<SuppressionRow | undefined> {
  return suppressions.delete(db, owner).where('id', '=', id).returning(SUPPRESSION_COLUMNS).executeTakeFirst();
}

const suppressionList = suppressions.list<{ address?: string; reason?: 'opted_out' | 'manual' }, SuppressionRow>({
  filters: {
    address: (eb, address) => eb('address', '=', address),
    reason: (eb, reason) => eb('reason', '=', reason),
  },
  select: (from) => from.select(SUPPRESSION_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listSuppressions(db: OutreachDb, owner: Owner, filters: { address?: string; reason?: 'opted_out' | 'manual' }, page: PageRequest) {
  return suppressionList.page(db, owner, filters, page);
}
