import { randomInt } from 'node:crypto';
import { isUniqueViolation } from '../../db/errors.js';
import type { PageRequest } from '../../db/paging.js';
import { normalizeCurrency } from '../../lib/currency.js';
import { isUuid, newId } from '../../lib/ids.js';
import { nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { ServiceRegistry } from '../registry.js';
import type { PartnerPresenter } from './present.js';
import { DEFAULT_CURRENCY, normalizeRecurring, readRate } from './rates.js';
import * as repository from './repository.js';
import type { AffiliatesDb, NewPartner, PartnerRow, ProgrammeRow } from './repository.js';
import type { CreatePartnerInput, PartnerView, UpdatePartnerInput } from './schemas.js';
import type { PartnerStatus } from './tables.js';

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_ATTEMPTS = 8;

export function affiliateNotFound(): AppError {
  return new AppError('affiliate_not_found', 'No affiliate partner has this id.');
}

function codeTaken(code: string): AppError {
  return new AppError('conflict', `The referral code ${code} is already used by another partner.`, [
    { path: 'code', code: 'taken', message: 'Codes are unique per workspace and mode.' },
  ]);
}

/** A code from the partner's name: up to 6 letters of it and 4 random characters. */
function generateCode(name: string): string {
  const stem = name
    .normalize('NFKD')
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '')
    .slice(0, 6);
  let suffix = '';
  for (let i = 0; i < 4; i++) suffix += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return `${stem || 'REF'}${suffix}`;
}

/** Partners: create, read, update, pause and reactivate. Unknown ids answer 404 affiliate_not_found. */
export function createPartnerRules(tables: AffiliatesDb, events: EventLog, services: ServiceRegistry, presenter: PartnerPresenter) {
  async function requireContact(ctx: RequestContext, contactId: string | null | undefined): Promise<void> {
    if (contactId === undefined || contactId === null) return;
    const found = await services.get('crm').contactsById(ctx, [contactId]);
    if (!found.has(contactId)) throw invalidField('contact_id', 'not_found', 'No CRM contact with this id.');
  }

  async function requireProgramme(db: AffiliatesDb, ctx: RequestContext, id: string): Promise<ProgrammeRow> {
    const programme = await repository.findProgramme(db, ctx, id);
    if (!programme) throw invalidField('programme_id', 'not_found', 'No programme with this id.');
    return programme;
  }

  async function requireTier(db: AffiliatesDb, ctx: RequestContext, programmeId: string | null, tierId: string): Promise<void> {
    if (programmeId === null) throw invalidField('tier_id', 'programme_required', 'A tier belongs to a programme: set programme_id too.');
    if (!(await repository.findTier(db, ctx, programmeId, tierId))) throw invalidField('tier_id', 'not_found', 'No tier with this id in the partner’s programme.');
  }

  async function findForUpdate(tx: AffiliatesDb, ctx: RequestContext, id: string): Promise<PartnerRow> {
    const row = isUuid(id) ? await repository.findPartner(tx, ctx, id, { forUpdate: true }) : undefined;
    if (!row) throw affiliateNotFound();
    return row;
  }

  /** pause / reactivate: moves `from` to `to`; a partner already at `to` is returned unchanged, without an event. */
  async function setStatus(ctx: RequestContext, id: string, to: PartnerStatus, eventType: string): Promise<PartnerView> {
    return tables.transaction().execute(async (tx) => {
      const current = await findForUpdate(tx, ctx, id);
      // The reply is the changed row, as an update's: tier_name null, uses_programme_rate filled (the spec's table).
      if (current.status === to) return presenter.presentOne(tx, ctx, current, false);
      const row = await repository.updatePartner(tx, ctx, id, { status: to, updated_at: nextUpdatedAt(current.updated_at, ctx.now) });
      await events.record(tx, ctx, eventType, await presenter.presentOne(tx, ctx, row));
      return presenter.presentOne(tx, ctx, row, false);
    });
  }

  async function updateWithin(ctx: RequestContext, id: string, input: UpdatePartnerInput, currency: string | undefined, code: string | undefined): Promise<PartnerView> {
    return tables.transaction().execute(async (tx) => {
      const current = await findForUpdate(tx, ctx, id);
      const programmeId = input.programme_id !== undefined ? input.programme_id : current.programme_id;
      // A new programme drops the old tier unless a tier of the new one is sent.
      const tierId = input.tier_id !== undefined ? input.tier_id : programmeId === current.programme_id ? current.tier_id : null;
      if (programmeId !== null && programmeId !== current.programme_id) await requireProgramme(tx, ctx, programmeId);
      if (tierId !== null && (tierId !== current.tier_id || programmeId !== current.programme_id)) await requireTier(tx, ctx, programmeId, tierId);

      const changes: Partial<NewPartner> = { updated_at: nextUpdatedAt(current.updated_at, ctx.now), programme_id: programmeId, tier_id: tierId };
      const rateSent = input.commission_type !== undefined || input.commission_percent !== undefined || input.commission_amount_cents !== undefined;
      if (input.commission_type === null) {
        if (input.commission_percent != null || input.commission_amount_cents != null) {
          throw invalidField(
            'commission_type',
            'invalid',
            'commission_type null follows the tier or programme rate: send no commission_percent or commission_amount_cents with it.',
          );
        }
        Object.assign(changes, { commission_type: null, commission_percent: null, commission_amount_cents: null });
      } else if (rateSent) {
        const own =
          current.commission_type === null
            ? undefined
            : { commission_type: current.commission_type, commission_percent: current.commission_percent, commission_amount_cents: current.commission_amount_cents };
        if (!own && input.commission_type === undefined)
          throw invalidField('commission_type', 'required', 'The partner follows its tier or programme rate: send commission_type to give it its own.');
        Object.assign(changes, readRate(input, own));
      }
      const followsOthers = (changes.commission_type !== undefined ? changes.commission_type : current.commission_type) === null;
      if (followsOthers && programmeId === null) throw invalidField('programme_id', 'rate_required', 'A partner without a programme needs its own commission_type and rate.');
      if (input.name !== undefined) changes.name = input.name.trim();
      if (input.contact_id !== undefined) changes.contact_id = input.contact_id;
      if (input.email !== undefined) changes.email = input.email?.toLowerCase() ?? null;
      if (code !== undefined && code !== current.code) {
        if (await repository.codeTaken(tx, ctx, code, id)) throw codeTaken(code);
        changes.code = code;
      }
      if (currency !== undefined) changes.currency = currency;
      if (input.cookie_days !== undefined) changes.cookie_days = input.cookie_days;
      if (input.recurring_months !== undefined) changes.recurring_months = normalizeRecurring(input.recurring_months) ?? null;
      if (input.portal_enabled !== undefined) changes.portal_enabled = input.portal_enabled;
      if (input.notes !== undefined) changes.notes = input.notes;
      const row = await repository.updatePartner(tx, ctx, id, changes);
      await events.record(tx, ctx, 'affiliates.partner.updated', await presenter.presentOne(tx, ctx, row));
      return presenter.presentOne(tx, ctx, row, false);
    });
  }

  return {
    async createPartner(ctx: RequestContext, input: CreatePartnerInput): Promise<PartnerView> {
      await requireContact(ctx, input.contact_id);
      const ownRate = input.commission_type !== undefined && input.commission_type !== null;
      if (!ownRate && (input.commission_percent != null || input.commission_amount_cents != null)) {
        throw invalidField('commission_type', 'required', 'Send commission_type with commission_percent or commission_amount_cents.');
      }
      const rate = ownRate ? readRate(input) : undefined;
      const programmeId = input.programme_id ?? null;
      const tierId = input.tier_id ?? null;
      // A partner with neither its own rate nor a programme gets an own rate of 0 percent (it earns nothing until given one).
      const rateOrDefault = rate ?? (programmeId === null ? { commission_type: 'percent' as const, commission_percent: 0, commission_amount_cents: null } : undefined);
      const currency = input.currency === undefined ? undefined : normalizeCurrency(input.currency);
      if (input.currency !== undefined && !currency) throw invalidField('currency', 'invalid', 'Not an ISO 4217 currency code.');
      for (let attempt = 1; ; attempt++) {
        const code = input.code?.toUpperCase() ?? generateCode(input.name);
        const result = await tables.transaction().execute(async (tx) => {
          const programme = programmeId === null ? undefined : await requireProgramme(tx, ctx, programmeId);
          if (tierId !== null) await requireTier(tx, ctx, programmeId, tierId);
          const values: NewPartner = {
            id: newId(),
            contact_id: input.contact_id ?? null,
            name: input.name.trim(),
            email: input.email?.toLowerCase() ?? null,
            code,
            commission_type: rateOrDefault?.commission_type ?? null,
            commission_percent: rateOrDefault?.commission_percent ?? null,
            commission_amount_cents: rateOrDefault?.commission_amount_cents ?? null,
            currency: currency ?? programme?.currency ?? DEFAULT_CURRENCY,
            status: input.status ?? 'active',
            programme_id: programmeId,
            tier_id: tierId,
            cookie_days: input.cookie_days ?? null,
            recurring_months: normalizeRecurring(input.recurring_months) ?? null,
            portal_enabled: input.portal_enabled ?? false,
            notes: input.notes ?? null,
            created_at: ctx.now,
            updated_at: ctx.now,
          };
          const row = await repository.insertPartner(tx, ctx, values);
          if (!row) return undefined;
          await events.record(tx, ctx, 'affiliates.partner.created', await presenter.presentOne(tx, ctx, row));
          return presenter.presentOne(tx, ctx, row, false);
        });
        if (result) return result;
        if (input.code !== undefined || attempt >= CODE_ATTEMPTS) throw codeTaken(code);
      }
    },

    async getPartner(ctx: RequestContext, id: string): Promise<PartnerView> {
      const row = isUuid(id) ? await repository.findPartner(tables, ctx, id) : undefined;
      if (!row) throw affiliateNotFound();
      return presenter.presentOne(tables, ctx, row);
    },

    async listPartners(ctx: RequestContext, filters: { status?: PartnerStatus; programme_id?: string; search?: string }, page: PageRequest) {
      const { rows, total } = await repository.listPartners(
        tables,
        ctx,
        { status: filters.status, programmeId: filters.programme_id, search: filters.search?.trim() || undefined },
        page,
      );
      return { rows: await presenter.presentMany(tables, ctx, rows), total };
    },

    async updatePartner(ctx: RequestContext, id: string, input: UpdatePartnerInput): Promise<PartnerView> {
      await requireContact(ctx, input.contact_id);
      const currency = input.currency === undefined ? undefined : normalizeCurrency(input.currency);
      if (input.currency !== undefined && !currency) throw invalidField('currency', 'invalid', 'Not an ISO 4217 currency code.');
      const code = input.code?.toUpperCase();
      try {
        return await updateWithin(ctx, id, input, currency, code);
      } catch (error) {
        if (code !== undefined && isUniqueViolation(error, repository.PARTNER_CODE_INDEX)) throw codeTaken(code);
        throw error;
      }
    },

    /** active -> paused; a paused partner stays paused (200, no change). */
    pausePartner(ctx: RequestContext, id: string): Promise<PartnerView> {
      return setStatus(ctx, id, 'paused', 'affiliates.partner.paused');
    },

    /** paused -> active; an active partner stays active (200, no change); unknown id 404 affiliate_not_found. */
    reactivatePartner(ctx: RequestContext, id: string): Promise<PartnerView> {
      return setStatus(ctx, id, 'active', 'affiliates.partner.reactivated');
    },
  };
}
