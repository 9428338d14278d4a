import type { CouponRow, PriceRow, ProductRow, SubscriptionRow } from './repository.js';
import type { CouponView, PriceView, ProductView, SubscriptionView } from './schemas.js';

/** A bigint or numeric column as a JS number (every value the checks allow is exact in a double). */
function toNumber(value: string | number | bigint): number {
  return Number(value);
}

function toNullableNumber(value: string | number | bigint | null): number | null {
  return value === null ? null : Number(value);
}

export function presentPrice(row: PriceRow, defaultPriceId: string | null): PriceView {
  return {
    id: row.id,
    product_id: row.product_id,
    unit_price_cents: toNumber(row.unit_price_cents),
    currency: row.currency,
    billing_interval: row.billing_interval,
    interval_count: row.interval_count,
    default: row.id === defaultPriceId,
    created_at: row.created_at,
  };
}

export function presentProduct(row: ProductRow, prices: PriceRow[]): ProductView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    free_trial_days: row.free_trial_days,
    active: row.active,
    default_price_id: row.default_price_id,
    prices: prices.map((price) => presentPrice(price, row.default_price_id)),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The spec's rule: on, started, not expired and under its limit, at `now`. */
export function isRedeemable(row: CouponRow, now: Date): boolean {
  const t = now.getTime();
  return (
    row.active &&
    (row.starts_at === null || row.starts_at.getTime() <= t) &&
    (row.expires_at === null || row.expires_at.getTime() > t) &&
    (row.max_redemptions === null || row.redeemed_count < row.max_redemptions)
  );
}

export function presentCoupon(row: CouponRow, now: Date): CouponView {
  return {
    id: row.id,
    code: row.code,
    description: row.description,
    discount_type: row.discount_type,
    percent_off: toNullableNumber(row.percent_off),
    amount_off_cents: toNullableNumber(row.amount_off_cents),
    currency: row.currency,
    max_redemptions: row.max_redemptions,
    redeemed_count: row.redeemed_count,
    starts_at: row.starts_at,
    expires_at: row.expires_at,
    active: row.active,
    redeemable: isRedeemable(row, now),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export interface SubscriptionNames {
  product: string | null;
  contact: string | null;
  company: string | null;
}

export function presentSubscription(row: SubscriptionRow, names: SubscriptionNames): SubscriptionView {
  return {
    id: row.id,
    product_id: row.product_id,
    product_name: names.product,
    price_id: row.price_id,
    contact_id: row.contact_id,
    contact_name: row.contact_id === null ? null : names.contact,
    company_id: row.company_id,
    company_name: row.company_id === null ? null : names.company,
    coupon_id: row.coupon_id,
    coupon_code: row.coupon_code,
    discount:
      row.discount_type === null
        ? null
        : {
            discount_type: row.discount_type,
            percent_off: toNullableNumber(row.percent_off),
            amount_off_cents: toNullableNumber(row.amount_off_cents),
            currency: row.discount_currency,
          },
    status: row.status,
    quantity: row.quantity,
    unit_price_cents: toNumber(row.unit_price_cents),
    currency: row.currency,
    billing_interval: row.billing_interval,
    interval_count: row.interval_count,
    billing_cycle_anchor: row.billing_cycle_anchor,
    current_period_start: row.current_period_start,
    current_period_end: row.current_period_end,
    cancel_at_period_end: row.cancel_at_period_end,
    canceled_at: row.canceled_at,
    trial_end: row.trial_end,
    pause_resumes_at: row.pause_resumes_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
