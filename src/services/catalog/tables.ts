import type { ColumnType } from 'kysely';
import type { Mode } from '../../db/types.js';

/** A bigint column: read back as a string (pg) or a number/bigint (PGlite), written as a number. */
export type Int8 = ColumnType<string | number | bigint, number, number>;
/** An exact numeric: read back as decimal text, written as a number with at most 2 decimals. */
export type Numeric = ColumnType<string, number, number>;

export const BILLING_INTERVALS = ['day', 'week', 'month', 'year'] as const;
export type BillingInterval = (typeof BILLING_INTERVALS)[number];

export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'paused', 'canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const DISCOUNT_TYPES = ['percent', 'amount'] as const;
export type DiscountType = (typeof DISCOUNT_TYPES)[number];

export interface CatalogProductsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  name: string;
  description: string | null;
  free_trial_days: number;
  active: boolean;
  default_price_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface CatalogPricesTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  product_id: string;
  unit_price_cents: Int8;
  currency: string;
  billing_interval: BillingInterval;
  interval_count: number;
  created_at: Date;
}

export interface CatalogCouponsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  code: string;
  description: string | null;
  discount_type: DiscountType;
  percent_off: Numeric | null;
  amount_off_cents: Int8 | null;
  currency: string | null;
  max_redemptions: number | null;
  redeemed_count: number;
  starts_at: Date | null;
  expires_at: Date | null;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface CatalogSubscriptionsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  product_id: string;
  price_id: string;
  contact_id: string | null;
  company_id: string | null;
  coupon_id: string | null;
  coupon_code: string | null;
  discount_type: DiscountType | null;
  percent_off: Numeric | null;
  amount_off_cents: Int8 | null;
  discount_currency: string | null;
  status: SubscriptionStatus;
  quantity: number;
  unit_price_cents: Int8;
  currency: string;
  billing_interval: BillingInterval;
  interval_count: number;
  billing_cycle_anchor: Date;
  current_period_start: Date;
  current_period_end: Date;
  cancel_at_period_end: boolean;
  canceled_at: Date | null;
  trial_end: Date | null;
  pause_resumes_at: Date | null;
  next_event_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface CatalogTables {
  catalog_products: CatalogProductsTable;
  catalog_prices: CatalogPricesTable;
  catalog_coupons: CatalogCouponsTable;
  catalog_subscriptions: CatalogSubscriptionsTable;
}
