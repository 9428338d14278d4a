import type { Db } from '../../db/database.js';
import type { PageRequest } from '../../db/paging.js';
import { isUuid, newId } from '../../lib/ids.js';
import { isTimeZone } from '../../lib/zones.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound, validationFailed, type ErrorDetail } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import { normalizePhone } from './phone.js';
import { presentEnrollment, presentMessage, presentSequence, presentSuppression } from './present.js';
import * as repository from './repository.js';
import type { EnrollmentRow, MessageFilters, OutreachDb, SequenceRow } from './repository.js';
import { scheduleStep } from './scheduler.js';
import type {
  CreateEnrollmentInput,
  CreateSequenceInput,
  CreateSuppressionInput,
  EnrollmentBatchView,
  EnrollmentView,
  InboundInput,
  InboundResultView,
  ListMessagesInput,
  MessageView,
  SendWindowInputValue,
  SequenceView,
  StatusCallbackInput,
  SuppressionView,
  UpdateSequenceInput,
} from './schemas.js';
import { WEEKDAYS, type EnrollmentStatus, type MessageStatus, type SendWindow, type SequenceStatus, type Step, type Weekday } from './tables.js';
import { dueAt, PLACEHOLDER, PLACEHOLDER_NAMES } from './window.js';

/** Keywords that opt a number out (Twilio's default opt-out list), and back in. */
export const STOP_KEYWORDS = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
export const START_KEYWORDS = new Set(['START', 'UNSTOP']);

/** Delivery statuses in the order a message moves through them; a callback never moves a message back. */
const DELIVERY_RANK: Record<MessageStatus, number> = { queued: 0, sent: 1, delivered: 2, failed: 2, received: 3 };

interface OutreachDeps {
  db: Db;
  jobs: JobRunner;
  events: EventLog;
}

/** The keyword of an inbound message: its text upper-cased without surrounding spaces and punctuation. */
export function keywordOf(body: string): string {
  return body
    .trim()
    .replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '')
    .toUpperCase();
}

function phone(path: string, value: string): string {
  const normalized = normalizePhone(value);
  if (!normalized) throw invalidField(path, 'invalid_phone', `${path} is not a valid phone number; send it in international format, such as +14155550123.`);
  return normalized;
}

function cleanName(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

/** The send window in its one stored shape: days Monday first, start and end as HH:MM; 400 details for what is wrong. */
function normalizeWindow(input: SendWindowInputValue, details: ErrorDetail[]): SendWindow | undefined {
  const days = new Set<Weekday>();
  (input.days ?? [...WEEKDAYS]).forEach((day, index) => {
    const found = typeof day === 'number' ? SUNDAY_FIRST[day % 7] : WEEKDAYS.find((name) => name.startsWith(day.toLowerCase()));
    if (found) days.add(found);
    else details.push({ path: `send_window.days[${index}]`, code: 'invalid_day', message: `${String(day)} is not a day of the week.` });
  });
  const time = (text: string | undefined, hour: number | undefined): string | undefined => {
    if (text !== undefined) {
      const [hours, minutes, seconds] = text.split(':');
      if (seconds !== undefined && seconds !== '00') return 'invalid';
      return `${hours!.padStart(2, '0')}:${minutes}`;
    }
    return hour === undefined ? undefined : `${String(hour).padStart(2, '0')}:00`;
  };
  const start = time(input.start ?? input.start_time, input.start_hour);
  const end = time(input.end ?? input.end_time, input.end_hour);
  if (start === undefined) details.push({ path: 'send_window.start', code: 'required', message: 'send_window needs start (HH:MM).' });
  else if (start === 'invalid' || start >= '24:00')
    details.push({ path: 'send_window.start', code: 'invalid_time', message: 'send_window.start must be a time from 00:00 to 23:59.' });
  if (end === undefined) details.push({ path: 'send_window.end', code: 'required', message: 'send_window needs end (HH:MM).' });
  else if (end === 'invalid' || end > '24:00') details.push({ path: 'send_window.end', code: 'invalid_time', message: 'send_window.end must be a time from 00:01 to 24:00.' });
  else if (start !== undefined && end <= start) details.push({ path: 'send_window.end', code: 'invalid_range', message: 'send_window.end must be after send_window.start.' });
  if (details.length > 0) return undefined;
  return { days: WEEKDAYS.filter((day) => days.has(day)), start: start!, end: end! };
}

const SUNDAY_FIRST: Weekday[] = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** Checks what the schema cannot and returns the send window in its stored shape (undefined: not sent). */
function checkSequenceFields(input: { steps?: Step[]; send_window?: SendWindowInputValue | null; timezone?: string }): SendWindow | null | undefined {
  const details: ErrorDetail[] = [];
  if (input.timezone !== undefined && !isTimeZone(input.timezone)) details.push({ path: 'timezone', code: 'invalid_timezone', message: 'timezone is not an IANA time zone.' });
  const window = input.send_window ? normalizeWindow(input.send_window, details) : input.send_window;
  input.steps?.forEach((step, index) => {
    for (const match of step.body.matchAll(PLACEHOLDER)) {
      if (!PLACEHOLDER_NAMES.includes(match[1]!)) {
        details.push({
          path: `steps[${index}].body`,
          code: 'unknown_placeholder',
          message: `Unknown placeholder ${match[0]}; use ${PLACEHOLDER_NAMES.map((name) => `{{${name}}}`).join(', ')}.`,
        });
      }
    }
  });
  if (details.length > 0) throw validationFailed(details, details[0]!.message);
  return window;
}

/** A suppression by its id or by the number itself (any spelling). */
async function findSuppression(db: OutreachDb, ctx: RequestContext, idOrNumber: string) {
  if (isUuid(idOrNumber)) return repository.findSuppression(db, ctx, idOrNumber);
  const number = normalizePhone(idOrNumber);
  return number === undefined ? undefined : repository.findSuppressionByAddress(db, ctx, number);
}

const cleanSteps = (steps: Step[]): Step[] => steps.map((step) => ({ body: step.body, delay: { amount: step.delay.amount, unit: step.delay.unit } }));

/** Message sequences by phone number, their enrollments, the messages sent and received, and the suppression list. */
export function createOutreachService({ db, jobs, events }: OutreachDeps) {
  const tables = repository.outreachDb(db);

  function inTransaction<T>(work: (tx: OutreachDb, jobsDb: Db) => Promise<T>): Promise<T> {
    return db.transaction().execute((tx) => work(repository.outreachDb(tx), tx));
  }

  async function sequenceView(tx: OutreachDb, ctx: RequestContext, row: SequenceRow): Promise<SequenceView> {
    const counts = await repository.countEnrollments(tx, ctx, [row.id]);
    return presentSequence(row, counts.get(row.id)!);
  }

  async function requireSequence(tx: OutreachDb, ctx: RequestContext, id: string, options: { forUpdate?: boolean } = {}): Promise<SequenceRow> {
    const row = await repository.findSequence(tx, ctx, id, options);
    if (!row) throw notFound('Sequence');
    return row;
  }

  /** Ends an active enrollment early (replied, opted_out, removed) and records the event. */
  async function exitEnrollment(tx: OutreachDb, ctx: RequestContext, row: EnrollmentRow, reason: 'replied' | 'opted_out' | 'removed'): Promise<EnrollmentRow> {
    const exited = await repository.updateEnrollment(tx, ctx, row.id, {
      status: 'exited',
      exit_reason: reason,
      next_position: null,
      next_run_at: null,
      updated_at: nextUpdatedAt(row.updated_at, ctx.now),
    });
    await events.record(tx, ctx, 'outreach.enrollment.exited', presentEnrollment(exited));
    return exited;
  }

  return {
    // Sequences

    async createSequence(ctx: RequestContext, input: CreateSequenceInput): Promise<SequenceView> {
      const window = checkSequenceFields(input);
      return inTransaction(async (tx) => {
        const row = await repository.insertSequence(tx, ctx, {
          id: newId(),
          name: input.name.trim(),
          status: input.status ?? 'active',
          steps: cleanSteps(input.steps),
          send_window: window ?? null,
          timezone: input.timezone ?? 'UTC',
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        const view = presentSequence(row, { active: 0, completed: 0, exited: 0, failed: 0 });
        await events.record(tx, ctx, 'outreach.sequence.created', view);
        return view;
      });
    },

    async getSequence(ctx: RequestContext, id: string): Promise<SequenceView> {
      return sequenceView(tables, ctx, await requireSequence(tables, ctx, id));
    },

    async listSequences(ctx: RequestContext, filters: { status?: SequenceStatus }, page: PageRequest) {
      const { rows, total } = await repository.listSequences(tables, ctx, filters, page);
      const counts = await repository.countEnrollments(
        tables,
        ctx,
        rows.map((row) => row.id),
      );
      return { rows: rows.map((row) => presentSequence(row, counts.get(row.id)!)), total };
    },

    async updateSequence(ctx: RequestContext, id: string, input: UpdateSequenceInput): Promise<SequenceView> {
      const window = checkSequenceFields(input);
      return inTransaction(async (tx, jobsDb) => {
        const current = await requireSequence(tx, ctx, id, { forUpdate: true });
        assertFresh(input.expected_updated_at, current.updated_at);
        const updated = await repository.updateSequence(tx, ctx, id, {
          ...(input.name !== undefined ? { name: input.name.trim() } : {}),
          ...(input.status !== undefined ? { status: input.status } : {}),
          ...(input.steps !== undefined ? { steps: cleanSteps(input.steps) } : {}),
          ...(window !== undefined ? { send_window: window } : {}),
          ...(input.timezone !== undefined ? { timezone: input.timezone } : {}),
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        if (updated.status === 'active' && current.status !== 'active') {
          // Steps that fell due while the sequence was not active go out now (within the window).
          for (const enrollment of await repository.activeEnrollmentsOfSequence(tx, ctx, id)) {
            if (enrollment.next_run_at === null) continue;
            const runAt = enrollment.next_run_at.getTime() < ctx.now.getTime() ? ctx.now : enrollment.next_run_at;
            await scheduleStep(jobs, jobsDb, ctx, { ...enrollment, next_run_at: runAt });
          }
        }
        const view = await sequenceView(tx, ctx, updated);
        await events.record(tx, ctx, 'outreach.sequence.updated', view);
        return view;
      });
    },

    async deleteSequence(ctx: RequestContext, id: string): Promise<{ id: string; deleted: true }> {
      return inTransaction(async (tx) => {
        const current = await requireSequence(tx, ctx, id, { forUpdate: true });
        if (await repository.sequenceHasEnrollments(tx, ctx, id)) {
          throw new AppError('sequence_in_use', 'The sequence has enrollments; set its status to archived instead.');
        }
        await repository.deleteSequence(tx, ctx, id);
        await events.record(tx, ctx, 'outreach.sequence.deleted', presentSequence(current, { active: 0, completed: 0, exited: 0, failed: 0 }));
        return { id, deleted: true as const };
      });
    },

    // Enrollments

    /**
     * Enrols one person (`address`) or a batch (`enrollments`). `created` says whether anyone
     * was newly enrolled (201) or every person was already active (200).
     */
    async enroll(ctx: RequestContext, sequenceId: string, input: CreateEnrollmentInput): Promise<{ created: boolean; data: EnrollmentView | EnrollmentBatchView }> {
      const single = input.enrollments === undefined;
      if (single && input.address === undefined) throw invalidField('address', 'required', 'Send address (one person) or enrollments (a batch).');
      if (!single && (input.address !== undefined || input.display_name !== undefined)) {
        throw invalidField('enrollments', 'exclusive', 'Send either address and display_name (one person) or enrollments (a batch), not both.');
      }
      const people = single
        ? [{ address: phone('address', input.address!), display_name: cleanName(input.display_name) }]
        : input.enrollments!.map((person, index) => ({ address: phone(`enrollments[${index}].address`, person.address), display_name: cleanName(person.display_name) }));
      return inTransaction(async (tx, jobsDb) => {
        const sequence = await requireSequence(tx, ctx, sequenceId, { forUpdate: true });
        if (sequence.status === 'archived') throw new AppError('sequence_archived', 'The sequence is archived; set its status to active, paused or draft to enrol people.');
        const suppressed = await repository.suppressedAmong(
          tx,
          ctx,
          people.map((person) => person.address),
        );
        if (single && suppressed.has(people[0]!.address)) {
          throw new AppError('address_suppressed', 'The number is on the suppression list (it opted out); it cannot be enrolled.', [
            { path: 'address', code: 'suppressed', message: `${people[0]!.address} is on the suppression list.`, address: people[0]!.address },
          ]);
        }
        const batch: EnrollmentBatchView = { enrollments: [], created: 0, existing: 0, refused: [] };
        for (const [index, person] of people.entries()) {
          if (suppressed.has(person.address)) {
            batch.refused.push({ index, address: person.address, code: 'address_suppressed', message: 'The number is on the suppression list.' });
            continue;
          }
          const inserted = await repository.insertEnrollment(tx, ctx, {
            id: newId(),
            sequence_id: sequence.id,
            address: person.address,
            display_name: person.display_name,
            status: 'active',
            next_position: 0,
            next_run_at: dueAt(ctx.now, sequence.steps, 0, sequence.send_window, sequence.timezone),
            exit_reason: null,
            source: 'api',
            send_attempts: 0,
            enrolled_at: ctx.now,
            last_sent_at: null,
            updated_at: ctx.now,
          });
          if (inserted) {
            const view = presentEnrollment(inserted);
            await scheduleStep(jobs, jobsDb, ctx, inserted);
            await events.record(tx, ctx, 'outreach.enrollment.created', view);
            batch.enrollments.push(view);
            batch.created += 1;
          } else {
            const existing = await repository.findActiveEnrollment(tx, ctx, sequence.id, person.address);
            if (existing) batch.enrollments.push(presentEnrollment(existing));
            batch.existing += 1;
          }
        }
        return { created: batch.created > 0, data: single ? batch.enrollments[0]! : batch };
      });
    },

    async listEnrollments(ctx: RequestContext, sequenceId: string, filters: { status?: EnrollmentStatus }, page: PageRequest) {
      // The sequence check and the page run side by side: an unknown sequence has no rows anyway.
      const [, { rows, total }] = await Promise.all([
        requireSequence(tables, ctx, sequenceId),
        repository.listEnrollments(tables, ctx, { sequenceId, status: filters.status }, page),
      ]);
      return { rows: rows.map(presentEnrollment), total };
    },

    async getEnrollment(ctx: RequestContext, sequenceId: string, id: string): Promise<EnrollmentView> {
      const row = await repository.findEnrollment(tables, ctx, sequenceId, id);
      if (!row) throw notFound('Enrollment');
      return presentEnrollment(row);
    },

    /** Takes the person off the sequence: an active enrollment exits with `removed`; any other is returned as it is. */
    async removeEnrollment(ctx: RequestContext, sequenceId: string, id: string): Promise<EnrollmentView> {
      return inTransaction(async (tx) => {
        const row = await repository.findEnrollmentForUpdate(tx, ctx, id);
        if (!row || row.sequence_id !== sequenceId) throw notFound('Enrollment');
        if (row.status !== 'active') return presentEnrollment(row);
        return presentEnrollment(await exitEnrollment(tx, ctx, row, 'removed'));
      });
    },

    // Messages

    async listMessages(ctx: RequestContext, filters: Omit<ListMessagesInput, 'limit' | 'offset'>, page: PageRequest) {
      const query: MessageFilters = {
        sequenceId: filters.sequence_id,
        enrollmentId: filters.enrollment_id,
        direction: filters.direction,
        status: filters.status,
      };
      for (const name of ['address', 'to', 'from'] as const) {
        const value = filters[name];
        if (value === undefined) continue;
        const number = normalizePhone(value);
        if (!number) return { rows: [], total: 0 };
        query[name] = number;
      }
      const { rows, total } = await repository.listMessages(tables, ctx, query, page);
      return { rows: rows.map(presentMessage), total };
    },

    async getMessage(ctx: RequestContext, id: string): Promise<MessageView> {
      const row = await repository.findMessage(tables, ctx, id);
      if (!row) throw notFound('Message');
      return presentMessage(row);
    },

    /** A provider status callback: moves an outbound message to sent, delivered or failed (never back). */
    async recordStatus(ctx: RequestContext, input: StatusCallbackInput): Promise<MessageView> {
      if ((input.message_id === undefined) === (input.provider_message_id === undefined)) {
        throw invalidField('message_id', 'required', 'Send exactly one of message_id and provider_message_id.');
      }
      if (input.message_id !== undefined && !isUuid(input.message_id)) throw notFound('Message');
      const status: MessageStatus = input.status === 'undelivered' ? 'failed' : input.status;
      return inTransaction(async (tx) => {
        const row = await repository.findMessageForUpdate(tx, ctx, { id: input.message_id, providerMessageId: input.provider_message_id });
        if (!row) throw notFound('Message');
        if (row.status === status || DELIVERY_RANK[status] <= DELIVERY_RANK[row.status]) return presentMessage(row);
        const updated = await repository.updateMessage(tx, ctx, row.id, {
          status,
          ...(status === 'failed' ? { error: input.error_message ?? 'failed' } : {}),
          ...(row.sent_at === null && status !== 'failed' ? { sent_at: ctx.now } : {}),
          updated_at: nextUpdatedAt(row.updated_at, ctx.now),
        });
        const view = presentMessage(updated);
        await events.record(tx, ctx, 'outreach.message.status_changed', view);
        return view;
      });
    },

    // Inbound messages and the suppression list

    /**
     * An inbound message from a person: STOP-family keywords suppress the number and exit its
     * active enrollments with `opted_out`; START/UNSTOP remove it from the list; any other text
     * exits its active enrollments with `replied`.
     */
    async inbound(ctx: RequestContext, input: InboundInput): Promise<InboundResultView> {
      const from = phone('from', input.from);
      const to = normalizePhone(input.to) ?? input.to.trim();
      const keyword = keywordOf(input.body);
      return inTransaction(async (tx) => {
        const message = await repository.insertMessage(tx, ctx, {
          id: newId(),
          direction: 'inbound',
          sequence_id: null,
          enrollment_id: null,
          position: null,
          from_address: from,
          to_address: to,
          body: input.body,
          status: 'received',
          provider: ctx.mode === 'live' ? 'twilio' : 'sandbox',
          provider_message_id: null,
          error: null,
          attempts: 0,
          created_at: ctx.now,
          sent_at: null,
          updated_at: ctx.now,
        });
        await events.record(tx, ctx, 'outreach.message.received', presentMessage(message));
        if (START_KEYWORDS.has(keyword)) {
          const listed = await repository.findSuppressionByAddress(tx, ctx, from);
          if (listed) {
            await repository.deleteSuppression(tx, ctx, listed.id);
            await events.record(tx, ctx, 'outreach.suppression.deleted', presentSuppression(listed));
          }
          return { message: presentMessage(message), action: 'opted_in', exited: 0, suppressed: false };
        }
        const optOut = STOP_KEYWORDS.has(keyword);
        if (optOut) {
          const added = await repository.insertSuppression(tx, ctx, { id: newId(), address: from, reason: 'opted_out', note: null, created_at: ctx.now });
          if (added) await events.record(tx, ctx, 'outreach.suppression.created', presentSuppression(added));
        }
        const active = await repository.activeEnrollmentsOf(tx, ctx, from);
        for (const row of active) await exitEnrollment(tx, ctx, row, optOut ? 'opted_out' : 'replied');
        const suppressed = optOut || (await repository.findSuppressionByAddress(tx, ctx, from)) !== undefined;
        return { message: presentMessage(message), action: optOut ? 'opted_out' : 'replied', exited: active.length, suppressed };
      });
    },

    async listSuppressions(ctx: RequestContext, filters: { address?: string; reason?: 'opted_out' | 'manual' }, page: PageRequest) {
      let address: string | undefined;
      if (filters.address !== undefined) {
        address = normalizePhone(filters.address);
        if (!address) return { rows: [], total: 0 };
      }
      const { rows, total } = await repository.listSuppressions(tables, ctx, { address, reason: filters.reason }, page);
      return { rows: rows.map(presentSuppression), total };
    },

    /** Adds a number by hand and exits its active enrollments with `opted_out`; a number already listed is returned as it is. */
    async createSuppression(ctx: RequestContext, input: CreateSuppressionInput): Promise<{ created: boolean; data: SuppressionView }> {
      const address = phone('address', input.address);
      return inTransaction(async (tx) => {
        const added = await repository.insertSuppression(tx, ctx, { id: newId(), address, reason: 'manual', note: input.note?.trim() || null, created_at: ctx.now });
        if (!added) return { created: false, data: presentSuppression((await repository.findSuppressionByAddress(tx, ctx, address))!) };
        const view = presentSuppression(added);
        await events.record(tx, ctx, 'outreach.suppression.created', view);
        for (const row of await repository.activeEnrollmentsOf(tx, ctx, address)) await exitEnrollment(tx, ctx, row, 'opted_out');
        return { created: true, data: view };
      });
    },

    async getSuppression(ctx: RequestContext, idOrNumber: string): Promise<SuppressionView> {
      const row = await findSuppression(tables, ctx, idOrNumber);
      if (!row) throw notFound('Suppression');
      return presentSuppression(row);
    },

    async deleteSuppression(ctx: RequestContext, idOrNumber: string): Promise<{ id: string; address: string; deleted: true }> {
      return inTransaction(async (tx) => {
        const found = await findSuppression(tx, ctx, idOrNumber);
        const removed = found && (await repository.deleteSuppression(tx, ctx, found.id));
        if (!removed) throw notFound('Suppression');
        await events.record(tx, ctx, 'outreach.suppression.deleted', presentSuppression(removed));
        return { id: removed.id, address: removed.address, deleted: true as const };
      });
    },
  };
}

export type OutreachService = ReturnType<typeof createOutreachService>;
