import type { PageRequest } from '../../db/paging.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { RequestContext } from '../../platform/context.js';
import { notFound } from '../../platform/errors/app-error.js';
import { normalizePhone } from './phone.js';
import { presentSuppression } from './present.js';
import * as repository from './repository.js';
import type { OutreachDb } from './repository.js';
import type { CreateSuppressionInput, SuppressionView } from './schemas.js';
import { phone, type OutreachDeps, type Shared } from './shared.js';

/** A suppression by its id or by the number itself (any spelling). */
async function findSuppression(db: OutreachDb, ctx: RequestContext, idOrNumber: string) {
  if (isUuid(idOrNumber)) return repository.findSuppression(db, ctx, idOrNumber);
  const number = normalizePhone(idOrNumber);
  return number === undefined ? undefined : repository.findSuppressionByAddress(db, ctx, number);
}

/** The suppression list of a tenant and mode: numbers that get no messages and cannot be enrolled. */
export function createSuppressionRules({ events }: OutreachDeps, { tables, inTransaction, exitEnrollment }: Shared) {
  return {
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
