import type { Db } from '../../db/database.js';
import { nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { invalidField, notFound } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import { normalizePhone } from './phone.js';
import { presentEnrollment, presentSequence } from './present.js';
import * as repository from './repository.js';
import type { EnrollmentRow, OutreachDb, SequenceRow } from './repository.js';
import type { SequenceView } from './schemas.js';

export interface OutreachDeps {
  db: Db;
  jobs: JobRunner;
  events: EventLog;
}

/** A number in E.164, or 400 validation_failed (`invalid_phone`) at `path`. */
export function phone(path: string, value: string): string {
  const normalized = normalizePhone(value);
  if (!normalized) throw invalidField(path, 'invalid_phone', `${path} is not a valid phone number; send it in international format, such as +14155550123.`);
  return normalized;
}

/** What the rules of every resource share: the tables, one transaction shape, lookups and the exit of an enrollment. */
export function createShared({ db, events }: OutreachDeps) {
  const tables = repository.outreachDb(db);

  /** Runs `work` in one transaction; `tx` is for the outreach tables, `jobsDb` for the job runner. */
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

  return { tables, inTransaction, sequenceView, requireSequence, exitEnrollment };
}

export type Shared = ReturnType<typeof createShared>;
