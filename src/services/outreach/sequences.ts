import type { PageRequest } from '../../db/paging.js';
import { newId } from '../../lib/ids.js';
import { isTimeZone } from '../../lib/zones.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, validationFailed, type ErrorDetail } from '../../platform/errors/app-error.js';
import { presentSequence } from './present.js';
import * as repository from './repository.js';
import { scheduleStep } from './scheduler.js';
import type { CreateSequenceInput, SendWindowInputValue, SequenceView, UpdateSequenceInput } from './schemas.js';
import type { OutreachDeps, Shared } from './shared.js';
import { WEEKDAYS, type SendWindow, type SequenceStatus, type Step, type Weekday } from './tables.js';
import { PLACEHOLDER, PLACEHOLDER_NAMES } from './window.js';

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
function checkSequenceFields(input: { steps?: Array<{ body: string }>; send_window?: SendWindowInputValue | null; timezone?: string }): SendWindow | null | undefined {
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

const cleanSteps = (steps: Array<Omit<Step, 'delay'> & { delay?: Step['delay'] }>): Step[] =>
  steps.map((step) => ({ body: step.body, delay: { amount: step.delay?.amount ?? 0, unit: step.delay?.unit ?? 'minutes' } }));

/** Sequences: their steps, send window and zone; activation schedules the steps that fell due meanwhile. */
export function createSequenceRules({ jobs, events }: OutreachDeps, { tables, inTransaction, sequenceView, requireSequence }: Shared) {
  return {
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
  };
}
