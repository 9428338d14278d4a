import type { ColumnType } from 'kysely';
import type { Mode } from '../../db/types.js';

/** A bigint column: read as string or number depending on the driver, written as a number or decimal text. */
export type Int8 = ColumnType<string | number | bigint, string | number, string | number>;
/** numeric(5,2): read as text, written as text. */
export type Numeric = ColumnType<string | number, string, string>;

export const COMMISSION_TYPES = ['percent', 'amount'] as const;
export type CommissionType = (typeof COMMISSION_TYPES)[number];
export const PARTNER_STATUSES = ['active', 'paused'] as const;
export type PartnerStatus = (typeof PARTNER_STATUSES)[number];
export const COMMISSION_STATUSES = ['pending', 'approved', 'paid', 'voided'] as const;
export type CommissionStatus = (typeof COMMISSION_STATUSES)[number];
export type ConversionSource = 'api' | 'payments' | 'catalog';
export type ReferralSource = 'link' | 'api';

export interface AffiliatesProgrammesTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  name: string;
  commission_type: CommissionType;
  commission_percent: Numeric | null;
  commission_amount_cents: Int8 | null;
  currency: string;
  cookie_days: number;
  recurring_months: number;
  landing_url: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface AffiliatesTiersTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  programme_id: string;
  name: string;
  commission_type: CommissionType;
  commission_percent: Numeric | null;
  commission_amount_cents: Int8 | null;
  created_at: Date;
  updated_at: Date;
}

export interface AffiliatesPartnersTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  contact_id: string | null;
  name: string;
  email: string | null;
  code: string;
  commission_type: CommissionType | null;
  commission_percent: Numeric | null;
  commission_amount_cents: Int8 | null;
  currency: string;
  status: PartnerStatus;
  programme_id: string | null;
  tier_id: string | null;
  cookie_days: number | null;
  recurring_months: number | null;
  portal_enabled: boolean;
  notes: string | null;
  lifetime_revenue_cents: ColumnType<string | number, never, never>;
  lifetime_commission_cents: ColumnType<string | number, never, never>;
  click_count: ColumnType<string | number, never, never>;
  conversion_count: ColumnType<string | number, never, never>;
  earned_pending_cents: ColumnType<string | number, never, never>;
  earned_approved_cents: ColumnType<string | number, never, never>;
  earned_paid_cents: ColumnType<string | number, never, never>;
  created_at: Date;
  updated_at: Date;
}

export interface AffiliatesReferralsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  affiliate_id: string;
  source: ReferralSource;
  visitor_id: string | null;
  contact_id: string | null;
  email: string | null;
  customer_ref: string | null;
  clicked_at: Date | null;
  expires_at: Date | null;
  attributed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface AffiliatesConversionsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  affiliate_id: string;
  referral_id: string | null;
  source: ConversionSource;
  external_id: string | null;
  subscription_id: string | null;
  period: number | null;
  amount_cents: Int8;
  currency: string;
  commission_cents: Int8;
  status: CommissionStatus;
  void_reason: string | null;
  approved_at: Date | null;
  paid_at: Date | null;
  voided_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface AffiliatesSeenEventsTable {
  event_id: string;
  tenant_id: string;
  mode: Mode;
  event_created_at: Date;
  seen_at: Date;
}

export interface AffiliatesTables {
  affiliates_programmes: AffiliatesProgrammesTable;
  affiliates_tiers: AffiliatesTiersTable;
  affiliates_partners: AffiliatesPartnersTable;
  affiliates_referrals: AffiliatesReferralsTable;
  affiliates_conversions: AffiliatesConversionsTable;
  affiliates_seen_events: AffiliatesSeenEventsTable;
}
