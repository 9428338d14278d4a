import type { Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { addMilliseconds, DAY_MS, type Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { RequestContext } from '../../platform/context.js';
import { invalidField, notFound, validationFailed } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { ServiceRegistry } from '../registry.js';
import { affiliateNotFound } from './partners.js';
import { presentReferral } from './present.js';
import * as repository from './repository.js';
import type { AffiliatesDb, ReferralRow } from './repository.js';
import type { CreateReferralInput, ReferralView } from './schemas.js';

/** The query parameter that carries the first-party referral id to the landing page. */
export const REFERRAL_PARAMETER = 'affiliate_referral_id';

/** Where a click on a referral link goes, or why it goes nowhere. */
export type ClickOutcome = { location: string } | { missing: 'code' | 'landing_url' };

/** Referral links (public clicks) and referrals (a visitor or customer attributed to a partner). */
export function createTrackingRules(tables: AffiliatesDb, events: EventLog, services: ServiceRegistry, clock: Clock) {
  async function requireContact(ctx: RequestContext, contactId: string | undefined): Promise<void> {
    if (contactId === undefined) return;
    const found = await services.get('crm').contactsById(ctx, [contactId]);
    if (!found.has(contactId)) throw invalidField('contact_id', 'not_found', 'No CRM contact with this id.');
  }

  return {
    /**
     * A click on `/r/{code}`: records a referral (the first-party id handed to the landing page)
     * and a click on the partner, and says where to send the visitor. The code names no
     * workspace: `partnerId` (query `a`) picks one when several share the code.
     */
    async click(code: string, partnerId: string | undefined): Promise<ClickOutcome> {
      const upper = code.toUpperCase();
      let matches = await repository.partnersWithCode(tables, upper);
      if (partnerId !== undefined) matches = matches.filter((row) => row.id === partnerId);
      if (matches.length !== 1) return { missing: 'code' };
      const match = matches[0]!;
      const owner: Owner = { tenantId: match.tenant_id, mode: match.mode };
      const now = clock.now();
      return tables.transaction().execute(async (tx) => {
        const partner = await repository.findPartner(tx, owner, match.id);
        if (!partner) return { missing: 'code' as const };
        const programme = partner.programme_id ? await repository.findProgramme(tx, owner, partner.programme_id) : undefined;
        if (!programme?.landing_url) return { missing: 'landing_url' as const };
        const cookieDays = partner.cookie_days ?? programme.cookie_days;
        const referral = await repository.insertReferral(tx, owner, {
          id: newId(),
          affiliate_id: partner.id,
          source: 'link',
          visitor_id: null,
          contact_id: null,
          email: null,
          customer_ref: null,
          clicked_at: now,
          expires_at: addMilliseconds(now, cookieDays * DAY_MS),
          attributed_at: null,
          created_at: now,
          updated_at: now,
        });
        await repository.addToTotals(tx, owner, partner.id, { clicks: 1 });
        const target = new URL(programme.landing_url);
        target.searchParams.set(REFERRAL_PARAMETER, referral.id);
        return { location: target.toString() };
      });
    },

    /**
     * Attributes a visitor or customer: to the partner of a click's referral (within its
     * cookie_days), or directly to a partner named by id or code.
     */
    async createReferral(ctx: RequestContext, input: CreateReferralInput): Promise<ReferralView> {
      const named = (['referral_id', 'affiliate_id', 'code'] as const).filter((field) => input[field] !== undefined);
      if (named.length !== 1) {
        throw validationFailed(
          [{ path: named[1] ?? 'referral_id', code: named.length === 0 ? 'required' : 'conflicting', message: 'Send exactly one of referral_id, affiliate_id or code.' }],
          'Send exactly one of referral_id, affiliate_id or code.',
        );
      }
      await requireContact(ctx, input.contact_id);
      const customer = {
        contact_id: input.contact_id ?? null,
        email: input.email?.toLowerCase() ?? null,
        visitor_id: input.visitor_id ?? null,
        customer_ref: input.customer_ref ?? null,
      };
      const identifiesCustomer = Object.values(customer).some((value) => value !== null);
      return tables.transaction().execute(async (tx) => {
        if (input.referral_id !== undefined) {
          const current = await repository.findReferral(tx, ctx, input.referral_id, { forUpdate: true });
          if (!current) throw invalidField('referral_id', 'not_found', 'No referral with this id.');
          if (current.attributed_at === null && current.expires_at !== null && current.expires_at.getTime() <= ctx.now.getTime()) {
            throw invalidField('referral_id', 'expired', 'The click is older than the partner’s cookie_days: it credits the partner no more.');
          }
          if (!identifiesCustomer) return presentReferral(current);
          const changes: Partial<ReferralRow> = { updated_at: ctx.now, attributed_at: current.attributed_at ?? ctx.now, expires_at: null };
          for (const [key, value] of Object.entries(customer)) if (value !== null) (changes as Record<string, unknown>)[key] = value;
          const view = presentReferral(await repository.updateReferral(tx, ctx, current.id, changes));
          await events.record(tx, ctx, 'affiliates.referral.attributed', view);
          return view;
        }
        const partner =
          input.affiliate_id !== undefined ? await repository.findPartner(tx, ctx, input.affiliate_id) : await repository.findPartnerByCode(tx, ctx, input.code!.toUpperCase());
        if (!partner) throw affiliateNotFound();
        const view = presentReferral(
          await repository.insertReferral(tx, ctx, {
            id: newId(),
            affiliate_id: partner.id,
            source: 'api',
            ...customer,
            clicked_at: null,
            expires_at: null,
            attributed_at: identifiesCustomer ? ctx.now : null,
            created_at: ctx.now,
            updated_at: ctx.now,
          }),
        );
        await events.record(tx, ctx, 'affiliates.referral.created', view);
        return view;
      });
    },

    async getReferral(ctx: RequestContext, id: string): Promise<ReferralView> {
      const row = isUuid(id) ? await repository.findReferral(tables, ctx, id) : undefined;
      if (!row) throw notFound('Referral');
      return presentReferral(row);
    },

    async listReferrals(ctx: RequestContext, filters: { affiliate_id?: string }, page: PageRequest) {
      const { rows, total } = await repository.listReferrals(tables, ctx, { affiliateId: filters.affiliate_id }, page);
      return { rows: rows.map(presentReferral), total };
    },
  };
}
