import type { Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { normalizeCurrency } from '../../lib/currency.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound, validationFailed } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import { affiliateNotFound } from './partners.js';
import { presentConversion } from './present.js';
import { commissionOf, DEFAULT_RECURRING_MONTHS, effectiveRate, periodEarns } from './rates.js';
import * as repository from './repository.js';
import type { AffiliatesDb, ConversionRow, PartnerRow, ReferralRow, TotalsDelta } from './repository.js';
import type { ConversionView, CreateConversionInput } from './schemas.js';
import type { CommissionStatus, ConversionSource } from './tables.js';

/** A sale to credit: who (one of the four), how much, and which sale it is. */
export interface SaleInput {
  source: ConversionSource;
  referralId?: string;
  affiliateId?: string;
  code?: string;
  contactId?: string;
  amountCents: number;
  currency?: string;
  externalId?: string;
  subscriptionId?: string;
}

/** What a commission moving from `from` to `to` does to the partner's totals. */
function moveDelta(from: CommissionStatus, to: CommissionStatus, conversion: ConversionRow): TotalsDelta {
  const cents = conversion.commission_cents;
  const delta: Record<string, number> = {};
  if (from !== 'voided') delta[from] = -cents;
  if (to !== 'voided') delta[to] = (delta[to] ?? 0) + cents;
  else Object.assign(delta, { commission: -cents, revenue: -conversion.amount_cents });
  return delta;
}

/**
 * The commission engine. A conversion locks its partner's row first (the lock order of every
 * write here: partner, then conversion), so the period count of a subscription is exact; every
 * total moves by `x = x + n` in the same transaction, and exactly-once per sale rests on unique
 * indexes (source + external id; subscription + period).
 */
export function createConversionRules(tables: AffiliatesDb, events: EventLog) {
  async function resolvePartner(tx: AffiliatesDb, owner: Owner, sale: SaleInput): Promise<{ partner: PartnerRow; referral: ReferralRow | undefined }> {
    let referral: ReferralRow | undefined;
    let partnerId: string | undefined;
    if (sale.referralId !== undefined) {
      referral = await repository.findReferral(tx, owner, sale.referralId);
      if (!referral) throw invalidField('referral_id', 'not_found', 'No referral with this id.');
      partnerId = referral.affiliate_id;
    } else if (sale.contactId !== undefined) {
      referral = await repository.latestReferralOfContact(tx, owner, sale.contactId);
      if (!referral) throw invalidField('contact_id', 'not_referred', 'The contact was never attributed to a partner.');
      partnerId = referral.affiliate_id;
    } else if (sale.affiliateId !== undefined) {
      partnerId = sale.affiliateId;
    } else if (sale.code !== undefined) {
      partnerId = (await repository.findPartnerByCode(tx, owner, sale.code.toUpperCase()))?.id;
    }
    const partner = partnerId === undefined || !isUuid(partnerId) ? undefined : await repository.findPartner(tx, owner, partnerId, { forUpdate: true });
    if (!partner) throw affiliateNotFound();
    return { partner, referral };
  }

  /**
   * Records a sale and its commission inside `tx`. Returns undefined when the sale (external id
   * or subscription period) is already recorded. Only an active partner earns, and a
   * subscription period only within recurring_months; otherwise the conversion is kept, voided
   * with its reason and commission 0, and no total moves.
   */
  async function record(tx: AffiliatesDb, owner: Owner, now: Date, sale: SaleInput): Promise<ConversionView | undefined> {
    const { partner, referral } = await resolvePartner(tx, owner, sale);
    if (referral && referral.attributed_at === null && referral.expires_at !== null && referral.expires_at.getTime() <= now.getTime()) {
      throw invalidField('referral_id', 'expired', 'The click is older than the partner’s cookie_days: it credits the partner no more.');
    }
    const currency = sale.currency === undefined ? partner.currency : normalizeCurrency(sale.currency);
    if (currency !== partner.currency) throw invalidField('currency', 'mismatch', `The partner earns in ${partner.currency}.`);
    const programme = partner.programme_id ? await repository.findProgramme(tx, owner, partner.programme_id) : undefined;
    const tier = partner.tier_id ? (await repository.tiersByIds(tx, owner, [partner.tier_id])).get(partner.tier_id) : undefined;
    const recurring = partner.recurring_months ?? programme?.recurring_months ?? DEFAULT_RECURRING_MONTHS;
    const period = sale.subscriptionId === undefined ? null : (await repository.lastPeriod(tx, owner, sale.subscriptionId)) + 1;
    const voidReason = partner.status !== 'active' ? 'affiliate_paused' : period !== null && !periodEarns(recurring, period) ? 'recurring_limit' : null;
    const commission = voidReason === null ? commissionOf(effectiveRate(partner, programme, tier), sale.amountCents) : 0;
    const row = await repository.insertConversion(tx, owner, {
      id: newId(),
      affiliate_id: partner.id,
      referral_id: referral?.id ?? null,
      source: sale.source,
      external_id: sale.externalId ?? null,
      subscription_id: sale.subscriptionId ?? null,
      period,
      amount_cents: sale.amountCents,
      currency,
      commission_cents: commission,
      status: voidReason === null ? 'pending' : 'voided',
      void_reason: voidReason,
      approved_at: null,
      paid_at: null,
      voided_at: voidReason === null ? null : now,
      created_at: now,
      updated_at: now,
    });
    if (!row) return undefined;
    if (voidReason === null) await repository.addToTotals(tx, owner, partner.id, { revenue: sale.amountCents, commission, conversions: 1, pending: commission });
    const view = presentConversion(row);
    await events.record(tx, owner, 'affiliates.conversion.created', view);
    return view;
  }

  /** Moves a commission; the same status again is a no-op (200, no event); other moves 409 invalid_status_transition. */
  async function move(ctx: RequestContext, id: string, to: CommissionStatus, allowedFrom: readonly CommissionStatus[], eventType: string): Promise<ConversionView> {
    const found = isUuid(id) ? await repository.findConversion(tables, ctx, id) : undefined;
    if (!found) throw notFound('Conversion');
    return tables.transaction().execute(async (tx) => {
      // Lock order: the partner, then the conversion.
      await repository.findPartner(tx, ctx, found.affiliate_id, { forUpdate: true });
      const current = (await repository.findConversion(tx, ctx, id, { forUpdate: true }))!;
      if (current.status === to) return presentConversion(current);
      if (!allowedFrom.includes(current.status)) throw new AppError('invalid_status_transition', `A ${current.status} commission cannot become ${to}.`);
      const stamp = to === 'approved' ? { approved_at: ctx.now } : to === 'paid' ? { paid_at: ctx.now } : { voided_at: ctx.now, void_reason: 'refunded' };
      const row = await repository.updateConversion(tx, ctx, id, { status: to, updated_at: ctx.now, ...stamp });
      await repository.addToTotals(tx, ctx, current.affiliate_id, moveDelta(current.status, to, current));
      const view = presentConversion(row);
      await events.record(tx, ctx, eventType, view);
      return view;
    });
  }

  /**
   * Voids the commission of a sale refunded in full (the reader of platform events calls it in
   * its transaction): a pending or approved commission becomes voided with reason `refunded`,
   * its revenue and commission leave the totals. A paid commission is left as it is (taking it
   * back is a manual clawback), as is one already voided; an unknown sale is nothing to void.
   */
  async function voidRefundedSale(tx: AffiliatesDb, owner: Owner, now: Date, source: ConversionSource, externalId: string): Promise<ConversionView | undefined> {
    const found = await repository.findConversionByExternal(tx, owner, source, externalId);
    if (!found || (found.status !== 'pending' && found.status !== 'approved')) return undefined;
    // Lock order: the partner, then the conversion (read again under the lock).
    await repository.findPartner(tx, owner, found.affiliate_id, { forUpdate: true });
    const current = (await repository.findConversion(tx, owner, found.id, { forUpdate: true }))!;
    if (current.status !== 'pending' && current.status !== 'approved') return undefined;
    const row = await repository.updateConversion(tx, owner, current.id, { status: 'voided', void_reason: 'refunded', voided_at: now, updated_at: now });
    await repository.addToTotals(tx, owner, current.affiliate_id, moveDelta(current.status, 'voided', current));
    const view = presentConversion(row);
    await events.record(tx, owner, 'affiliates.conversion.voided', view);
    return view;
  }

  return {
    record,
    voidRefundedSale,

    async createConversion(ctx: RequestContext, input: CreateConversionInput): Promise<ConversionView> {
      const named = (['referral_id', 'affiliate_id', 'code', 'contact_id'] as const).filter((field) => input[field] !== undefined);
      if (named.length !== 1) {
        const message = 'Send exactly one of referral_id, affiliate_id, code or contact_id.';
        throw validationFailed([{ path: named[1] ?? 'referral_id', code: named.length === 0 ? 'required' : 'conflicting', message }], message);
      }
      if (input.currency !== undefined && !normalizeCurrency(input.currency)) throw invalidField('currency', 'invalid', 'Not an ISO 4217 currency code.');
      const view = await tables.transaction().execute((tx) =>
        record(tx, ctx, ctx.now, {
          source: 'api',
          referralId: input.referral_id,
          affiliateId: input.affiliate_id,
          code: input.code,
          contactId: input.contact_id,
          amountCents: input.amount_cents,
          currency: input.currency,
          externalId: input.external_id,
          subscriptionId: input.subscription_id,
        }),
      );
      if (!view) {
        throw new AppError('conflict', 'This sale is already recorded.', [
          input.external_id !== undefined
            ? { path: 'external_id', code: 'taken', message: 'A conversion with this external_id exists.' }
            : { path: 'subscription_id', code: 'taken', message: 'This period of the subscription was recorded at the same time; send it again.' },
        ]);
      }
      return view;
    },

    async getConversion(ctx: RequestContext, id: string): Promise<ConversionView> {
      const row = isUuid(id) ? await repository.findConversion(tables, ctx, id) : undefined;
      if (!row) throw notFound('Conversion');
      return presentConversion(row);
    },

    async listConversions(ctx: RequestContext, filters: { affiliate_id?: string; status?: CommissionStatus; subscription_id?: string }, page: PageRequest) {
      const { rows, total } = await repository.listConversions(
        tables,
        ctx,
        { affiliateId: filters.affiliate_id, status: filters.status, subscriptionId: filters.subscription_id },
        page,
      );
      return { rows: rows.map(presentConversion), total };
    },

    approveConversion: (ctx: RequestContext, id: string) => move(ctx, id, 'approved', ['pending'], 'affiliates.conversion.approved'),
    markConversionPaid: (ctx: RequestContext, id: string) => move(ctx, id, 'paid', ['approved'], 'affiliates.conversion.paid'),
    voidConversion: (ctx: RequestContext, id: string) => move(ctx, id, 'voided', ['pending', 'approved'], 'affiliates.conversion.voided'),
  };
}
