import type { Owner } from '../../db/owned.js';
import * as repository from './repository.js';
import type { AffiliatesDb, ConversionRow, PartnerRow, ProgrammeRow, ReferralRow, TierRow } from './repository.js';
import { effectiveRate, sameRate } from './rates.js';
import type { ConversionView, PartnerView, ProgrammeView, ReferralView, TierView } from './schemas.js';

export function presentProgramme(row: ProgrammeRow): ProgrammeView {
  return row;
}

export function presentTier(row: TierRow): TierView {
  return row;
}

export function presentReferral(row: ReferralRow): ReferralView {
  return row;
}

export function presentConversion(row: ConversionRow): ConversionView {
  return row;
}

/** The public referral link of a code. */
export function referralUrl(publicBaseUrl: string, code: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/r/${encodeURIComponent(code)}`;
}

/**
 * Partners as the API shows them: the rate they earn now (their own, their tier's or their
 * programme's), whether it is exactly the programme's, and the tier name unless `withTierName`
 * is false (create and update replies carry null, as the spec says).
 */
export function partnerPresenter(publicBaseUrl: string) {
  function present(row: PartnerRow, programme: ProgrammeRow | undefined, tier: TierRow | undefined, withTierName: boolean): PartnerView {
    const rate = effectiveRate(row, programme, tier);
    return {
      id: row.id,
      contact_id: row.contact_id,
      name: row.name,
      email: row.email,
      code: row.code,
      commission_type: rate.commission_type,
      commission_percent: rate.commission_percent,
      commission_amount_cents: rate.commission_amount_cents,
      currency: row.currency,
      status: row.status,
      programme_id: row.programme_id,
      tier_id: row.tier_id,
      tier_name: withTierName ? (tier?.name ?? null) : null,
      cookie_days: row.cookie_days,
      recurring_months: row.recurring_months,
      uses_programme_rate: programme !== undefined && sameRate(rate, programme),
      rate_source: rate.source,
      portal_enabled: row.portal_enabled,
      notes: row.notes,
      referral_url: referralUrl(publicBaseUrl, row.code),
      lifetime_revenue_cents: row.lifetime_revenue_cents,
      lifetime_commission_cents: row.lifetime_commission_cents,
      click_count: row.click_count,
      conversion_count: row.conversion_count,
      earned: { pending: row.earned_pending_cents, approved: row.earned_approved_cents, paid: row.earned_paid_cents },
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  /** Partners with their programmes and tiers looked up together (one query each). */
  async function presentMany(db: AffiliatesDb, owner: Owner, rows: PartnerRow[], withTierName = true): Promise<PartnerView[]> {
    const programmeIds = [...new Set(rows.flatMap((row) => (row.programme_id ? [row.programme_id] : [])))];
    const tierIds = [...new Set(rows.flatMap((row) => (row.tier_id ? [row.tier_id] : [])))];
    const [programmes, tiers] = await Promise.all([repository.programmesByIds(db, owner, programmeIds), repository.tiersByIds(db, owner, tierIds)]);
    return rows.map((row) => present(row, row.programme_id ? programmes.get(row.programme_id) : undefined, row.tier_id ? tiers.get(row.tier_id) : undefined, withTierName));
  }

  async function presentOne(db: AffiliatesDb, owner: Owner, row: PartnerRow, withTierName = true): Promise<PartnerView> {
    return (await presentMany(db, owner, [row], withTierName))[0]!;
  }

  return { present, presentMany, presentOne };
}

export type PartnerPresenter = ReturnType<typeof partnerPresenter>;
