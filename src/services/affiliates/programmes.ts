import type { PageRequest } from '../../db/paging.js';
import { normalizeCurrency } from '../../lib/currency.js';
import { newId } from '../../lib/ids.js';
import { nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import { presentProgramme, presentTier } from './present.js';
import { DEFAULT_COOKIE_DAYS, DEFAULT_CURRENCY, DEFAULT_RECURRING_MONTHS, normalizeRecurring, readRate } from './rates.js';
import * as repository from './repository.js';
import type { AffiliatesDb, NewProgramme } from './repository.js';
import type { CreateProgrammeInput, CreateTierInput, ProgrammeView, TierView, UpdateProgrammeInput, UpdateTierInput } from './schemas.js';

function currencyOf(code: string | undefined): string | undefined {
  if (code === undefined) return undefined;
  const normalized = normalizeCurrency(code);
  if (!normalized) throw invalidField('currency', 'invalid', 'Not an ISO 4217 currency code.');
  return normalized;
}

/** Programmes (default rate, currency, cookie_days, recurring_months, landing URL) and their tiers. */
export function createProgrammeRules(tables: AffiliatesDb, events: EventLog) {
  async function requireProgramme(db: AffiliatesDb, ctx: RequestContext, id: string, forUpdate = false) {
    const programme = await repository.findProgramme(db, ctx, id, { forUpdate });
    if (!programme) throw notFound('Programme');
    return programme;
  }

  async function requireUniqueTierName(db: AffiliatesDb, ctx: RequestContext, programmeId: string, name: string, exceptId?: string) {
    const existing = await repository.tierNamed(db, ctx, programmeId, name);
    if (existing !== undefined && existing !== exceptId) {
      throw new AppError('conflict', 'The programme already has a tier with this name.', [{ path: 'name', code: 'taken', message: 'Tier names are unique within a programme.' }]);
    }
  }

  return {
    async createProgramme(ctx: RequestContext, input: CreateProgrammeInput): Promise<ProgrammeView> {
      const rate = readRate(input);
      return tables.transaction().execute(async (tx) => {
        const row = await repository.insertProgramme(tx, ctx, {
          id: newId(),
          name: input.name.trim(),
          ...rate,
          currency: currencyOf(input.currency) ?? DEFAULT_CURRENCY,
          cookie_days: input.cookie_days ?? DEFAULT_COOKIE_DAYS,
          recurring_months: normalizeRecurring(input.recurring_months) ?? DEFAULT_RECURRING_MONTHS,
          landing_url: input.landing_url ?? null,
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        const view = presentProgramme(row);
        await events.record(tx, ctx, 'affiliates.programme.created', view);
        return view;
      });
    },

    async getProgramme(ctx: RequestContext, id: string): Promise<ProgrammeView> {
      return presentProgramme(await requireProgramme(tables, ctx, id));
    },

    async listProgrammes(ctx: RequestContext, page: PageRequest) {
      const { rows, total } = await repository.listProgrammes(tables, ctx, page);
      return { rows: rows.map(presentProgramme), total };
    },

    async updateProgramme(ctx: RequestContext, id: string, input: UpdateProgrammeInput): Promise<ProgrammeView> {
      return tables.transaction().execute(async (tx) => {
        const current = await requireProgramme(tx, ctx, id, true);
        const rateSent = input.commission_type !== undefined || input.commission_percent !== undefined || input.commission_amount_cents !== undefined;
        const changes: Partial<NewProgramme> = {
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
          ...(input.name !== undefined ? { name: input.name.trim() } : {}),
          ...(rateSent ? readRate(input, current) : {}),
          ...(input.currency !== undefined ? { currency: currencyOf(input.currency)! } : {}),
          ...(input.cookie_days !== undefined ? { cookie_days: input.cookie_days } : {}),
          ...(input.recurring_months !== undefined ? { recurring_months: normalizeRecurring(input.recurring_months)! } : {}),
          ...(input.landing_url !== undefined ? { landing_url: input.landing_url } : {}),
        };
        const view = presentProgramme(await repository.updateProgramme(tx, ctx, id, changes));
        await events.record(tx, ctx, 'affiliates.programme.updated', view);
        return view;
      });
    },

    async createTier(ctx: RequestContext, programmeId: string, input: CreateTierInput): Promise<TierView> {
      const rate = readRate(input);
      return tables.transaction().execute(async (tx) => {
        await requireProgramme(tx, ctx, programmeId, true);
        await requireUniqueTierName(tx, ctx, programmeId, input.name.trim());
        const row = await repository.insertTier(tx, ctx, { id: newId(), programme_id: programmeId, name: input.name.trim(), ...rate, created_at: ctx.now, updated_at: ctx.now });
        const view = presentTier(row);
        await events.record(tx, ctx, 'affiliates.tier.created', view);
        return view;
      });
    },

    async listTiers(ctx: RequestContext, programmeId: string, page: PageRequest) {
      await requireProgramme(tables, ctx, programmeId);
      const { rows, total } = await repository.listTiers(tables, ctx, programmeId, page);
      return { rows: rows.map(presentTier), total };
    },

    async getTier(ctx: RequestContext, programmeId: string, tierId: string): Promise<TierView> {
      const tier = await repository.findTier(tables, ctx, programmeId, tierId);
      if (!tier) throw notFound('Tier');
      return presentTier(tier);
    },

    async updateTier(ctx: RequestContext, programmeId: string, tierId: string, input: UpdateTierInput): Promise<TierView> {
      return tables.transaction().execute(async (tx) => {
        // Lock order: the programme, then its tier.
        await requireProgramme(tx, ctx, programmeId, true);
        const current = await repository.findTier(tx, ctx, programmeId, tierId);
        if (!current) throw notFound('Tier');
        if (input.name !== undefined) await requireUniqueTierName(tx, ctx, programmeId, input.name.trim(), tierId);
        const rateSent = input.commission_type !== undefined || input.commission_percent !== undefined || input.commission_amount_cents !== undefined;
        const view = presentTier(
          await repository.updateTier(tx, ctx, tierId, {
            updated_at: nextUpdatedAt(current.updated_at, ctx.now),
            ...(input.name !== undefined ? { name: input.name.trim() } : {}),
            ...(rateSent ? readRate(input, current) : {}),
          }),
        );
        await events.record(tx, ctx, 'affiliates.tier.updated', view);
        return view;
      });
    },
  };
}
