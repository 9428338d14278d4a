import { Type, type Static } from 'typebox';
import { ExpectedUpdatedAt } from '../../platform/concurrency.js';
import { CurrencyCode, Nullable, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { ListQuery } from '../../platform/pagination/index.js';
import { MAX_INTERVAL_COUNT } from './billing.js';
import { BILLING_INTERVALS, DISCOUNT_TYPES, SUBSCRIPTION_STATUSES } from './tables.js';

/** Largest unit price and coupon amount, in minor units (100,000,000.00). */
export const MAX_AMOUNT_CENTS = 10_000_000_000;
export const MAX_QUANTITY = 10_000;
export const MAX_TRIAL_DAYS = 730;
export const MAX_REDEMPTIONS = 1_000_000_000;

/** No control characters, and at least one visible character. */
const PRINTABLE_TEXT = '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$';

const Instant = (description: string) => Type.String({ format: 'date-time', maxLength: 64, description, examples: ['2026-12-01T00:00:00.000Z'] });
/** An id sent in a body: any string, so an unknown or malformed id is answered with a not_found detail. */
const BodyId = (description: string) => Type.String({ minLength: 1, maxLength: 200, description, examples: ['3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c'] });
/** A uuid filter of a list: malformed is 400, as every list filter. */
const UuidFilter = (description: string) => Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description }));
const BooleanFilter = (description: string) => Type.Optional(Type.Enum(['true', 'false'], { description }));

const BillingIntervalSchema = Type.Enum([...BILLING_INTERVALS], { description: 'How often it bills: day, week, month or year (times interval_count).' });
const SubscriptionStatusSchema = Type.Enum([...SUBSCRIPTION_STATUSES], {
  description: 'trialing (in its free trial), active (billing), paused (not billing), canceled (ended; final).',
});
const DiscountTypeSchema = Type.Enum([...DISCOUNT_TYPES], { description: 'percent (percent_off) or amount (amount_off_cents in currency).' });

// Products and prices

const ProductName = Type.String({ minLength: 1, maxLength: 200, pattern: PRINTABLE_TEXT, description: 'Name shown to customers, 1-200 characters; trimmed.' });
const ProductDescription = Type.String({ maxLength: 5000, description: 'Up to 5,000 characters; trimmed, blank becomes null.' });
const FreeTrialDays = (options: { default?: number } = {}) =>
  Type.Integer({
    minimum: 0,
    maximum: MAX_TRIAL_DAYS,
    description: 'Days of free trial every new subscription starts with (0 = none, at most 730).',
    ...options,
  });
/** The largest interval_count of any interval (days); each interval's own limit is checked when a price is added. */
const MAX_INTERVALS = Math.max(...Object.values(MAX_INTERVAL_COUNT));
const intervalLimits = Object.entries(MAX_INTERVAL_COUNT)
  .map(([unit, max]) => `${max} for ${unit}`)
  .join(', ');

export const Price = Type.Object(
  {
    id: Uuid,
    product_id: Uuid,
    unit_price_cents: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT_CENTS, description: 'Price of one unit per billing period, in minor units.' }),
    currency: Type.String({ maxLength: 3, description: 'ISO 4217, upper-case.' }),
    billing_interval: BillingIntervalSchema,
    interval_count: Type.Integer({ minimum: 1, maximum: MAX_INTERVALS, description: 'Intervals per billing period (3 with month: quarterly).' }),
    default: Type.Boolean({ description: "Whether this is the product's default price (used when a subscription names none)." }),
    created_at: Timestamp,
  },
  { title: 'Price', additionalProperties: false },
);

export const Product = Type.Object(
  {
    id: Uuid,
    name: Type.String({ maxLength: 200 }),
    description: Nullable(Type.String({ maxLength: 5000 })),
    free_trial_days: Type.Integer({ minimum: 0, maximum: MAX_TRIAL_DAYS, description: '0 = no trial.' }),
    active: Type.Boolean({ description: 'Inactive products take no new subscriptions; existing ones go on.' }),
    default_price_id: Nullable(Uuid),
    prices: Type.Array(Price, { maxItems: 100, description: 'Every price of the product, oldest first.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Product', additionalProperties: false },
);

export const CreateProductBody = Type.Object(
  {
    name: ProductName,
    description: Type.Optional(Nullable(ProductDescription)),
    free_trial_days: Type.Optional(FreeTrialDays({ default: 0 })),
    active: Type.Optional(Type.Boolean({ default: true, description: 'Default true.' })),
  },
  { additionalProperties: false, examples: [{ name: 'Pro plan', description: 'Everything in Basic, plus priority support.', free_trial_days: 14 }] },
);

export const UpdateProductBody = Type.Object(
  {
    name: Type.Optional(ProductName),
    description: Type.Optional(Nullable(ProductDescription)),
    free_trial_days: Type.Optional(FreeTrialDays()),
    active: Type.Optional(Type.Boolean()),
    default_price_id: Type.Optional(BodyId("One of the product's prices; becomes its default.")),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, description: 'Only the fields sent change. Trial and price changes apply to new subscriptions only.' },
);

export const CreatePriceBody = Type.Object(
  {
    unit_price_cents: Type.Integer({
      minimum: 0,
      maximum: MAX_AMOUNT_CENTS,
      description: 'Price of one unit per period in ISO 4217 minor units (yen for JPY; fils for KWD, a multiple of 10), 0 to 10,000,000,000.',
    }),
    currency: CurrencyCode,
    billing_interval: BillingIntervalSchema,
    interval_count: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_INTERVALS, default: 1, description: `Intervals per billing period, default 1; at most three years (${intervalLimits}).` }),
    ),
    default: Type.Optional(Type.Boolean({ description: "true makes this the product's default price. A product's first price is always its default." })),
  },
  { additionalProperties: false, examples: [{ unit_price_cents: 2900, currency: 'usd', billing_interval: 'month' }] },
);

export const ListProductsQuery = ListQuery({ active: BooleanFilter('true: active products only; false: inactive only.') });

// Coupons

const CouponCode = Type.String({
  minLength: 1,
  maxLength: 80,
  pattern: '^\\s*[A-Za-z0-9_-]{1,64}\\s*$',
  description: 'The code customers enter: 1-64 letters, digits, - or _; trimmed. Unique per tenant and mode regardless of case, and matched case-insensitively.',
  examples: ['SUMMER25'],
});
const CouponDescription = Type.String({ maxLength: 1000, description: 'Internal note, up to 1,000 characters; trimmed, blank becomes null.' });
const MaxRedemptions = Type.Integer({ minimum: 1, maximum: MAX_REDEMPTIONS, description: 'How many subscriptions may use it; null = no limit.' });

export const Coupon = Type.Object(
  {
    id: Uuid,
    code: Type.String({ maxLength: 80, description: 'As written when created (trimmed); matched case-insensitively.' }),
    description: Nullable(Type.String({ maxLength: 1000 })),
    discount_type: DiscountTypeSchema,
    percent_off: Nullable(Type.Number({ description: '1 to 100 (up to 2 decimals); null for an amount discount.' })),
    amount_off_cents: Nullable(Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_CENTS, description: 'Minor units; null for a percentage discount.' })),
    currency: Nullable(Type.String({ maxLength: 3, description: 'Currency of an amount discount, upper-case; null for a percentage.' })),
    max_redemptions: Nullable(Type.Integer({ minimum: 1, maximum: MAX_REDEMPTIONS })),
    redeemed_count: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Subscriptions started with this code.' }),
    starts_at: Nullable(Timestamp),
    expires_at: Nullable(Timestamp),
    active: Type.Boolean({ description: 'Whether the code is switched on (false once retired).' }),
    redeemable: Type.Boolean({ description: 'True only if active, started (starts_at null or past), not expired (expires_at null or future) and under max_redemptions.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Coupon', additionalProperties: false },
);

export const CreateCouponBody = Type.Object(
  {
    code: CouponCode,
    description: Type.Optional(Nullable(CouponDescription)),
    discount_type: Type.Optional(DiscountTypeSchema),
    percent_off: Type.Optional(Type.Number({ minimum: 1, maximum: 100, description: '1 to 100, at most 2 decimals. Send this or amount_off_cents.' })),
    amount_off_cents: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_AMOUNT_CENTS,
        description: 'ISO 4217 minor units off each billing period (yen for JPY; fils for KWD, a multiple of 10); needs currency. Send this or percent_off.',
      }),
    ),
    currency: Type.Optional(CurrencyCode),
    max_redemptions: Type.Optional(Nullable(MaxRedemptions)),
    starts_at: Type.Optional(Nullable(Instant('Redeemable from this instant; null = at once.'))),
    expires_at: Type.Optional(Nullable(Instant('Redeemable until just before this instant; must be in the future and after starts_at; null = never expires.'))),
    active: Type.Optional(Type.Boolean({ default: true, description: 'Default true.' })),
  },
  {
    additionalProperties: false,
    description: 'discount_type may be left out: it follows from percent_off or amount_off_cents (exactly one of them).',
    examples: [
      { code: 'SUMMER25', discount_type: 'percent', percent_off: 25, max_redemptions: 100, expires_at: '2026-09-01T00:00:00.000Z' },
      { code: 'TENOFF', amount_off_cents: 1000, currency: 'usd' },
    ],
  },
);

export const UpdateCouponBody = Type.Object(
  {
    description: Type.Optional(Nullable(CouponDescription)),
    max_redemptions: Type.Optional(Nullable(MaxRedemptions)),
    starts_at: Type.Optional(Nullable(Instant('Redeemable from this instant; null = at once.'))),
    expires_at: Type.Optional(Nullable(Instant('Must be in the future and after starts_at; null = never expires.'))),
    active: Type.Optional(Type.Boolean({ description: 'Switch the code on or off.' })),
    expected_updated_at: ExpectedUpdatedAt,
  },
  {
    additionalProperties: false,
    description: 'Only the fields sent change. The code and the discount itself cannot change (subscriptions keep the discount they were started with).',
  },
);

export const ListCouponsQuery = ListQuery({
  active: BooleanFilter('true: switched-on codes only; false: switched off (retired) only.'),
  code: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'Exact code, case-insensitive.' })),
});

// Subscriptions

export const Discount = Type.Object(
  {
    discount_type: DiscountTypeSchema,
    percent_off: Nullable(Type.Number()),
    amount_off_cents: Nullable(Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_CENTS })),
    currency: Nullable(Type.String({ maxLength: 3 })),
  },
  { title: 'Discount', additionalProperties: false, description: "The coupon's discount as it was when redeemed; kept even if the coupon is retired." },
);

export const Subscription = Type.Object(
  {
    id: Uuid,
    product_id: Uuid,
    product_name: Nullable(Type.String({ maxLength: 200, description: "The product's current name." })),
    price_id: Uuid,
    contact_id: Nullable(Uuid),
    contact_name: Nullable(Type.String({ maxLength: 200, description: "The crm contact's current name." })),
    company_id: Nullable(Uuid),
    company_name: Nullable(Type.String({ maxLength: 200, description: "The crm company's current name." })),
    coupon_id: Nullable(Uuid),
    coupon_code: Nullable(Type.String({ maxLength: 80, description: 'The discount code applied, as the coupon spells it.' })),
    discount: Nullable(Discount),
    status: SubscriptionStatusSchema,
    quantity: Type.Integer({ minimum: 1, maximum: MAX_QUANTITY, description: 'Units billed, 1 to 10000.' }),
    unit_price_cents: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT_CENTS, description: 'Price of one unit per period, before any discount, in minor units.' }),
    currency: Type.String({ maxLength: 3 }),
    billing_interval: BillingIntervalSchema,
    interval_count: Type.Integer({ minimum: 1, maximum: MAX_INTERVALS }),
    billing_cycle_anchor: Timestamp,
    current_period_start: Timestamp,
    current_period_end: Timestamp,
    cancel_at_period_end: Type.Boolean({ description: 'Ends (status canceled) at current_period_end instead of renewing.' }),
    canceled_at: Nullable(Timestamp),
    trial_end: Nullable(Timestamp),
    pause_resumes_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Subscription', additionalProperties: false },
);

export const StartSubscriptionBody = Type.Object(
  {
    product_id: BodyId('An active product of the same tenant and mode.'),
    price_id: Type.Optional(BodyId("One of the product's prices; defaults to its default price.")),
    contact_id: Type.Optional(BodyId('A crm contact; send this or company_id.')),
    company_id: Type.Optional(BodyId('A crm company; send this or contact_id.')),
    quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_QUANTITY, default: 1, description: 'Whole number 1 to 10000; default 1.' })),
    coupon_code: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 80,
        description: 'A redeemable discount code of the workspace (any case); 400 coupon_not_redeemable if off, not started, expired or used up.',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ product_id: '3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c', contact_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', quantity: 3, coupon_code: 'SUMMER25' }],
  },
);

export const PauseSubscriptionBody = Type.Object(
  {
    resumes_at: Type.Optional(Nullable(Instant('When the subscription resumes by itself (must be in the future); null or absent = until resumed.'))),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, description: 'May be omitted.', examples: [{ resumes_at: '2026-12-01T00:00:00.000Z' }] },
);

export const CancelSubscriptionBody = Type.Object(
  {
    at_period_end: Type.Optional(Type.Boolean({ description: 'true: keep it until current_period_end, then end it (cancel_at_period_end); false or absent: end it now.' })),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, description: 'May be omitted (cancels now).', examples: [{ at_period_end: true }] },
);

export const ListSubscriptionsQuery = ListQuery({
  status: Type.Optional(SubscriptionStatusSchema),
  contact_id: UuidFilter('Subscriptions of this crm contact.'),
  company_id: UuidFilter('Subscriptions of this crm company.'),
  product_id: UuidFilter('Subscriptions of this product.'),
});

export type PriceView = Static<typeof Price>;
export type ProductView = Static<typeof Product>;
export type CouponView = Static<typeof Coupon>;
export type SubscriptionView = Static<typeof Subscription>;
export type CreateProductInput = Static<typeof CreateProductBody>;
export type UpdateProductInput = Static<typeof UpdateProductBody>;
export type CreatePriceInput = Static<typeof CreatePriceBody>;
export type CreateCouponInput = Static<typeof CreateCouponBody>;
export type UpdateCouponInput = Static<typeof UpdateCouponBody>;
export type StartSubscriptionInput = Static<typeof StartSubscriptionBody>;
export type PauseSubscriptionInput = Static<typeof PauseSubscriptionBody>;
export type CancelSubscriptionInput = Static<typeof CancelSubscriptionBody>;
