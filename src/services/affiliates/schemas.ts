import { Type, type Static } from 'typebox';
import { CurrencyCode, Nullable, ONE_LINE_NOT_BLANK, PathParams, Timestamp, TimestampField } from '../../platform/http/schemas.js';
import { ListQuery } from '../../platform/pagination/index.js';

/** Most cents one sale or a fixed commission may carry: a billion in major units. */
export const MAX_CENTS = 100_000_000_000;
const UUID_EXAMPLE = '3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c';

const Id = (description: string) => Type.String({ format: 'uuid', maxLength: 36, description, examples: [UUID_EXAMPLE] });
const Cents = (description: string, example: number) => Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description, examples: [example] });
const SignedCents = (description: string, example: number) =>
  Type.Integer({ format: 'int64', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, description, examples: [example] });
const Name = (example: string) => Type.String({ minLength: 1, maxLength: 200, pattern: ONE_LINE_NOT_BLANK, description: 'Display name; trimmed.', examples: [example] });

const CommissionTypeSchema = Type.Union([Type.Literal('percent'), Type.Literal('amount')], {
  description: '`percent` (percentage of each sale) or `amount` (fixed amount per sale).',
  examples: ['percent'],
});
const PercentInput = Type.Number({
  minimum: 0,
  maximum: 100,
  description: 'Percentage of each sale, 0 to 100 with at most 2 decimals; used when commission_type is percent.',
  examples: [20],
});
const AmountInput = Type.Integer({
  format: 'int64',
  minimum: 0,
  maximum: MAX_CENTS,
  description: 'Fixed commission per sale in minor units; used when commission_type is amount.',
  examples: [1500],
});
const PercentOut = Nullable(Type.Number({ minimum: 0, maximum: 100, description: 'Used when commission_type is percent.', examples: [20] }));
const AmountOut = Nullable(Type.Integer({ format: 'int64', minimum: 0, maximum: MAX_CENTS, description: 'Used when commission_type is amount; minor units.', examples: [1500] }));
const CookieDaysInput = Type.Integer({
  format: 'int32',
  minimum: 0,
  maximum: 3650,
  description: 'Days a referral click keeps crediting the partner; 0 is kept as 0 (a click alone credits nothing).',
  examples: [30],
});
const RecurringInput = Type.Integer({
  format: 'int32',
  minimum: -1000,
  maximum: 1200,
  description: 'Billing periods of a subscription that earn commission: 0 first payment only, N that many periods, -1 (any negative number, kept as sent) every payment for life.',
  examples: [12],
});
const LandingUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]+([/?#]\\S*)?$',
  description: 'Absolute http(s) URL where referral links send visitors, with `affiliate_referral_id` added to its query.',
  examples: ['https://shop.example.com/'],
});

// Programmes

export const Programme = Type.Object(
  {
    id: Id('Programme id.'),
    name: Type.String({ maxLength: 200, description: 'Display name.', examples: ['Partner programme'] }),
    commission_type: CommissionTypeSchema,
    commission_percent: PercentOut,
    commission_amount_cents: AmountOut,
    currency: Type.String({ maxLength: 3, description: 'ISO 4217, upper-case.', examples: ['USD'] }),
    cookie_days: Type.Integer({ format: 'int32', minimum: 0, maximum: 3650, description: 'Default days a referral click keeps crediting a partner.', examples: [30] }),
    recurring_months: Type.Integer({
      format: 'int32',
      minimum: -1000,
      maximum: 1200,
      description: 'Default billing periods that earn: 0 first payment only, N periods, -1 (any negative number) for life.',
      examples: [12],
    }),
    landing_url: Nullable(Type.String({ maxLength: 2048, description: 'Where referral links send visitors.', examples: ['https://shop.example.com/'] })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'AffiliatesProgramme', additionalProperties: false },
);

const programmeFields = {
  commission_percent: Type.Optional(Nullable(PercentInput)),
  commission_amount_cents: Type.Optional(Nullable(AmountInput)),
  cookie_days: Type.Optional(CookieDaysInput),
  recurring_months: Type.Optional(RecurringInput),
  landing_url: Type.Optional(Nullable(LandingUrl)),
};

export const CreateProgrammeBody = Type.Object(
  {
    name: Name('Partner programme'),
    commission_type: CommissionTypeSchema,
    currency: Type.Optional({ ...CurrencyCode, description: 'ISO 4217 code, any case; default USD.' }),
    ...programmeFields,
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Partner programme',
        commission_type: 'percent',
        commission_percent: 20,
        currency: 'USD',
        cookie_days: 60,
        recurring_months: 12,
        landing_url: 'https://shop.example.com/',
      },
    ],
  },
);

export const UpdateProgrammeBody = Type.Object(
  { name: Type.Optional(Name('Partner programme')), commission_type: Type.Optional(CommissionTypeSchema), currency: Type.Optional(CurrencyCode), ...programmeFields },
  { additionalProperties: false, examples: [{ commission_percent: 25 }] },
);

export const ListProgrammesQuery = ListQuery({});

// Tiers

export const Tier = Type.Object(
  {
    id: Id('Tier id.'),
    programme_id: Id('Programme the tier belongs to.'),
    name: Type.String({ maxLength: 200, description: 'Display name, unique within the programme.', examples: ['Gold'] }),
    commission_type: CommissionTypeSchema,
    commission_percent: PercentOut,
    commission_amount_cents: AmountOut,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'AffiliatesTier', additionalProperties: false },
);

export const CreateTierBody = Type.Object(
  {
    name: Name('Gold'),
    commission_type: CommissionTypeSchema,
    commission_percent: Type.Optional(Nullable(PercentInput)),
    commission_amount_cents: Type.Optional(Nullable(AmountInput)),
  },
  { additionalProperties: false, examples: [{ name: 'Gold', commission_type: 'percent', commission_percent: 30 }] },
);

export const UpdateTierBody = Type.Object(
  {
    name: Type.Optional(Name('Gold')),
    commission_type: Type.Optional(CommissionTypeSchema),
    commission_percent: Type.Optional(Nullable(PercentInput)),
    commission_amount_cents: Type.Optional(Nullable(AmountInput)),
  },
  { additionalProperties: false, examples: [{ commission_percent: 35 }] },
);

export const ProgrammeIdParams = PathParams({ id: Type.String({ format: 'uuid', maxLength: 36, description: 'Programme id.', examples: [UUID_EXAMPLE] }) });
export const TierParams = PathParams({
  id: Type.String({ format: 'uuid', maxLength: 36, description: 'Programme id.', examples: [UUID_EXAMPLE] }),
  tier_id: Type.String({ format: 'uuid', maxLength: 36, description: 'Tier id.', examples: [UUID_EXAMPLE] }),
});
export const ListTiersQuery = ListQuery({});

// Partners

const Earned = Type.Object(
  {
    pending: Cents('Commission waiting for approval, minor units.', 2000),
    approved: Cents('Commission approved and not yet paid, minor units.', 4000),
    paid: Cents('Commission paid out, minor units.', 10000),
  },
  { additionalProperties: false, description: 'Commission earned by status, minor units.' },
);

export const Partner = Type.Object(
  {
    id: Id('Partner id.'),
    contact_id: Nullable(Id('Linked CRM contact.')),
    name: Type.String({ maxLength: 200, description: 'Display name.', examples: ['Ada Lovelace'] }),
    email: Nullable(Type.String({ maxLength: 320, description: 'Lower-cased.', examples: ['ada@example.com'] })),
    code: Type.String({ maxLength: 32, description: 'Referral code, upper-cased; unique per tenant and mode.', examples: ['ADA20'] }),
    commission_type: CommissionTypeSchema,
    commission_percent: PercentOut,
    commission_amount_cents: AmountOut,
    currency: Type.String({ maxLength: 3, description: 'ISO 4217, upper-case.', examples: ['USD'] }),
    status: Type.Union([Type.Literal('active'), Type.Literal('paused')], { description: 'Only `active` partners earn new commission.', examples: ['active'] }),
    programme_id: Nullable(Id('Programme the partner belongs to.')),
    tier_id: Nullable(Id('Tier of the programme.')),
    tier_name: Nullable(Type.String({ maxLength: 200, description: 'Filled in on reads; null in the reply to a create or update.', examples: ['Gold'] })),
    cookie_days: Nullable(
      Type.Integer({
        format: 'int32',
        minimum: 0,
        maximum: 3650,
        description: 'Days a referral click keeps crediting the partner; 0 is 0; null uses the programme setting.',
        examples: [30],
      }),
    ),
    recurring_months: Nullable(
      Type.Integer({
        format: 'int32',
        minimum: -1000,
        maximum: 1200,
        description: 'Null uses the programme setting; 0 first payment only; N periods; -1 (any negative number) every payment for life.',
        examples: [-1],
      }),
    ),
    uses_programme_rate: Type.Boolean({ description: 'True when the partner earns exactly the programme rate.', examples: [true] }),
    rate_source: Type.Union([Type.Literal('partner'), Type.Literal('tier'), Type.Literal('programme')], {
      description: 'Where the rate comes from: the partner’s own, its tier’s or its programme’s (followed when they change).',
      examples: ['programme'],
    }),
    portal_enabled: Type.Boolean({ description: 'Invited to a partner portal.', examples: [false] }),
    notes: Nullable(Type.String({ maxLength: 5000, description: 'Private notes.', examples: ['Met at the conference.'] })),
    referral_url: Type.String({
      maxLength: 2200,
      description: 'The partner’s public referral link: records a click and redirects to the landing URL.',
      examples: ['https://api.example.com/r/ADA20'],
    }),
    lifetime_revenue_cents: SignedCents('Revenue of the partner’s earning conversions, less voided ones; minor units.', 50000),
    lifetime_commission_cents: SignedCents('Commission of the partner’s conversions, less voided ones; minor units.', 10000),
    click_count: Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Referral link clicks.', examples: [120] }),
    conversion_count: Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Conversions that earned commission.', examples: [5] }),
    earned: Earned,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'AffiliatePartner', additionalProperties: false },
);

const Code = Type.String({
  minLength: 3,
  maxLength: 32,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'Referral code: letters, digits, - and _; upper-cased. Generated when not given.',
  examples: ['ada20'],
});
const Email = Type.String({ format: 'email', maxLength: 320, description: 'Stored lower-cased.', examples: ['ada@example.com'] });
const Notes = Type.String({ maxLength: 5000, description: 'Private notes.', examples: ['Met at the conference.'] });

const partnerFields = {
  contact_id: Type.Optional(Nullable(Id('A CRM contact of the same tenant and mode.'))),
  email: Type.Optional(Nullable(Email)),
  code: Type.Optional(Code),
  commission_type: Type.Optional(Nullable({ ...CommissionTypeSchema, description: 'The partner’s own rate; null (or left out on create) follows the tier, else the programme.' })),
  commission_percent: Type.Optional(Nullable(PercentInput)),
  commission_amount_cents: Type.Optional(Nullable(AmountInput)),
  currency: Type.Optional({ ...CurrencyCode, description: 'ISO 4217 code, any case; default the programme’s, else USD.' }),
  programme_id: Type.Optional(Nullable(Id('A programme of the same tenant and mode.'))),
  tier_id: Type.Optional(Nullable(Id('A tier of the partner’s programme.'))),
  cookie_days: Type.Optional(Nullable(CookieDaysInput)),
  recurring_months: Type.Optional(Nullable(RecurringInput)),
  portal_enabled: Type.Optional(Type.Boolean({ description: 'Invited to a partner portal; default false.', examples: [true] })),
  notes: Type.Optional(Nullable(Notes)),
};

export const CreatePartnerBody = Type.Object(
  {
    name: Name('Ada Lovelace'),
    ...partnerFields,
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused')], { description: 'Default active.', examples: ['active'] })),
  },
  { additionalProperties: false, examples: [{ name: 'Ada Lovelace', email: 'Ada@Example.com', code: 'ada20', programme_id: UUID_EXAMPLE, cookie_days: 0 }] },
);

export const UpdatePartnerBody = Type.Object(
  { name: Type.Optional(Name('Ada Lovelace')), ...partnerFields },
  { additionalProperties: false, examples: [{ recurring_months: -1, notes: 'Top partner.' }] },
);

export const PartnerParams = PathParams({
  id: Type.String({ minLength: 1, maxLength: 100, description: 'Partner id; an unknown one answers 404 affiliate_not_found.', examples: [UUID_EXAMPLE] }),
});

export const ListPartnersQuery = ListQuery({
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused')], { description: 'Only partners with this status.', examples: ['active'] })),
  programme_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only partners of this programme.', examples: [UUID_EXAMPLE] })),
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive match anywhere in name, email or code.', examples: ['ada'] })),
});

// Referrals

export const Referral = Type.Object(
  {
    id: Id('Referral id: the first-party id a referral link hands the landing page as `affiliate_referral_id`.'),
    affiliate_id: Id('The partner credited.'),
    source: Type.Union([Type.Literal('link'), Type.Literal('api')], {
      description: '`link`: a click on the referral link; `api`: POST /affiliates/referrals.',
      examples: ['link'],
    }),
    visitor_id: Nullable(Type.String({ maxLength: 200, description: 'Your id of the visitor.', examples: ['visitor-8812'] })),
    contact_id: Nullable(Id('The CRM contact the visitor became.')),
    email: Nullable(Type.String({ maxLength: 320, description: 'The customer’s email, lower-cased.', examples: ['buyer@example.com'] })),
    customer_ref: Nullable(Type.String({ maxLength: 200, description: 'Your id of the customer.', examples: ['cus_123'] })),
    clicked_at: Nullable(TimestampField('When the link was clicked.')),
    expires_at: Nullable(TimestampField('Until when the click credits the partner (clicked_at + cookie_days); null once attributed or when made by the API.')),
    attributed_at: Nullable(TimestampField('When the visitor was attributed to a customer.')),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'AffiliateReferral', additionalProperties: false },
);

const CustomerFields = {
  contact_id: Type.Optional(Id('A CRM contact of the same tenant and mode.')),
  email: Type.Optional(Email),
  visitor_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Your id of the visitor.', examples: ['visitor-8812'] })),
  customer_ref: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Your id of the customer.', examples: ['cus_123'] })),
};

export const CreateReferralBody = Type.Object(
  {
    referral_id: Type.Optional(Id('A click’s referral id (from the landing URL): attributes that visitor, within the partner’s cookie_days of the click.')),
    affiliate_id: Type.Optional(Id('Credits this partner directly (no click).')),
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'Credits the partner with this code directly (no click); any case.', examples: ['ADA20'] })),
    ...CustomerFields,
  },
  {
    additionalProperties: false,
    examples: [
      { referral_id: UUID_EXAMPLE, email: 'buyer@example.com' },
      { code: 'ADA20', contact_id: UUID_EXAMPLE },
    ],
  },
);

export const ReferralParams = PathParams({ id: Type.String({ format: 'uuid', maxLength: 36, description: 'Referral id.', examples: [UUID_EXAMPLE] }) });
export const ListReferralsQuery = ListQuery({
  affiliate_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only referrals of this partner.', examples: [UUID_EXAMPLE] })),
});

// Conversions and their commission

export const Conversion = Type.Object(
  {
    id: Id('Conversion id.'),
    affiliate_id: Id('The partner credited.'),
    referral_id: Nullable(Id('The referral that led to the sale.')),
    source: Type.Union([Type.Literal('api'), Type.Literal('payments'), Type.Literal('catalog')], {
      description: '`api`: an outside sale sent to POST /affiliates/conversions; `payments`: a paid checkout session; `catalog`: a subscription period.',
      examples: ['api'],
    }),
    external_id: Nullable(
      Type.String({
        maxLength: 200,
        description: 'The sale’s id: yours, or the checkout session / subscription period it came from. Unique per source.',
        examples: ['order-6735'],
      }),
    ),
    subscription_id: Nullable(Type.String({ maxLength: 200, description: 'The subscription whose period this is; periods are counted per subscription.', examples: ['sub_42'] })),
    period: Nullable(Type.Integer({ format: 'int32', minimum: 1, maximum: 1_000_000, description: 'Which billing period of the subscription, from 1.', examples: [1] })),
    amount_cents: Cents('Sale amount, minor units.', 10000),
    currency: Type.String({ maxLength: 3, description: 'ISO 4217, upper-case.', examples: ['USD'] }),
    commission_cents: Cents('Commission of the sale, minor units; 0 when it earned nothing.', 2000),
    status: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('paid'), Type.Literal('voided')], {
      description: 'Commission status: pending -> approved -> paid, or voided (refunded, or earned nothing).',
      examples: ['pending'],
    }),
    void_reason: Nullable(
      Type.String({
        maxLength: 40,
        description: '`refunded`, `affiliate_paused` (the partner was not active), `recurring_limit` (beyond recurring_months), `voided` (by request).',
        examples: ['refunded'],
      }),
    ),
    approved_at: Nullable(TimestampField('When the commission was approved.')),
    paid_at: Nullable(TimestampField('When the commission was marked paid.')),
    voided_at: Nullable(TimestampField('When the commission was voided.')),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'AffiliateConversion', additionalProperties: false },
);

export const CreateConversionBody = Type.Object(
  {
    referral_id: Type.Optional(Id('The referral of the buyer: its partner is credited.')),
    affiliate_id: Type.Optional(Id('Credits this partner directly.')),
    code: Type.Optional(
      Type.String({ minLength: 1, maxLength: 32, description: 'Credits the partner with this code directly (a coupon-style code); any case.', examples: ['ADA20'] }),
    ),
    contact_id: Type.Optional(Id('Credits the partner the contact was last attributed to.')),
    amount_cents: Type.Integer({ format: 'int64', minimum: 0, maximum: MAX_CENTS, description: 'Sale amount, minor units.', examples: [10000] }),
    currency: Type.Optional({ ...CurrencyCode, description: 'ISO 4217 code, any case; must be the partner’s currency (the default).' }),
    external_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Your id of the sale: a second conversion with it is refused (409 conflict).', examples: ['order-6735'] }),
    ),
    subscription_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'The subscription this payment belongs to: its periods are counted against recurring_months.',
        examples: ['sub_42'],
      }),
    ),
  },
  { additionalProperties: false, examples: [{ referral_id: UUID_EXAMPLE, amount_cents: 10000, currency: 'USD', external_id: 'order-6735' }] },
);

export const ConversionParams = PathParams({ id: Type.String({ format: 'uuid', maxLength: 36, description: 'Conversion id.', examples: [UUID_EXAMPLE] }) });
export const ListConversionsQuery = ListQuery({
  affiliate_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only conversions of this partner.', examples: [UUID_EXAMPLE] })),
  status: Type.Optional(
    Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('paid'), Type.Literal('voided')], {
      description: 'Only commissions with this status.',
      examples: ['pending'],
    }),
  ),
  subscription_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only periods of this subscription.', examples: ['sub_42'] })),
});

export const RedirectQuery = Type.Object(
  { a: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Partner id, when several workspaces use the same code.', examples: [UUID_EXAMPLE] })) },
  { additionalProperties: true },
);

export type ProgrammeView = Static<typeof Programme>;
export type TierView = Static<typeof Tier>;
export type PartnerView = Static<typeof Partner>;
export type ReferralView = Static<typeof Referral>;
export type ConversionView = Static<typeof Conversion>;
export type CreateProgrammeInput = Static<typeof CreateProgrammeBody>;
export type UpdateProgrammeInput = Static<typeof UpdateProgrammeBody>;
export type CreateTierInput = Static<typeof CreateTierBody>;
export type UpdateTierInput = Static<typeof UpdateTierBody>;
export type CreatePartnerInput = Static<typeof CreatePartnerBody>;
export type UpdatePartnerInput = Static<typeof UpdatePartnerBody>;
export type CreateReferralInput = Static<typeof CreateReferralBody>;
export type CreateConversionInput = Static<typeof CreateConversionBody>;
