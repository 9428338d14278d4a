import type { PageRequest } from '../../db/paging.js';
import { newId } from '../../lib/ids.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound } from '../../platform/errors/app-error.js';
import { presentEnrollment } from './present.js';
import * as repository from './repository.js';
import { ensureSweep, scheduleStep } from './scheduler.js';
import type { CreateEnrollmentInput, EnrollmentBatchView, EnrollmentView } from './schemas.js';
import { phone, type OutreachDeps, type Shared } from './shared.js';
import type { EnrollmentStatus } from './tables.js';
import { dueAt } from './window.js';

function cleanName(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

/** Enrollments: one active per number and sequence, suppressed numbers refused, DELETE exits with removed. */
export function createEnrollmentRules({ jobs, events }: OutreachDeps, { tables, inTransaction, requireSequence, exitEnrollment }: Shared) {
  return {
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
        await ensureSweep(jobs, jobsDb, ctx.now);
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
  };
}
