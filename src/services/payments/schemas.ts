import { Type, type Static } from 'typebox';
import { ExpectedUpdatedAt } from '../../platform/concurrency.js';
import { CurrencyCode, Nullable, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { ListQuery } from '../../platform/pagination/index.js';

/** Largest amount of one unit, and of a whole session (Stripe's 99,999,999 minor-unit cap). */
export const MAX_AMOUNT_CENTS = 99_999_999;
export const MAX_QUANTITY = 10_000;
export const MAX_LINE_ITEMS = 100;
export const MAX_METADATA_KEYS = 50;
export const MAX_METADATA_KEY_LENGTH = 40;
export const MAX_METADATA_VALUE_LENGTH = 500;
export const MAX_URL_LENGTH = 2048;

const PRINTABLE_TEXT = '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$';

const ItemName = Type.String({
  minLength: 1,
  maxLength: 250,
  pattern: PRINTABLE_TEXT,
  description: 'What the buyer pays for, shown on the checkout page; trimmed, 1-250 characters.',
  examples: ['Cotton T-shirt'],
});
const AmountCents = Type.Integer({
  minimum: 1,
  maximum: MAX_AMOUNT_CENTS,
  description: 'Integer in ISO 4217 minor units of the currency (cents for USD, yen for JPY, fils for KWD: a multiple of 10, as amounts have at most 2 decimals), 1 to 99,999,999.',
  examples: [2500],
});
const Quantity = Type.Integer({ minimum: 1, maximum: MAX_QUANTITY, description: 'Whole units, 1 to 10,000.', examples: [2] });

const LineItemInput = Type.Object({ name: ItemName, unit_amount_cents: AmountCents, quantity: Quantity }, { additionalProperties: false });
const LineItemsInput = Type.Array(LineItemInput, {
  minItems: 1,
  maxItems: MAX_LINE_ITEMS,
  description: 'What is sold, 1 to 100 lines. Send either line_items or amount_cents with description, not both.',
});
const Description = Type.String({
  minLength: 1,
  maxLength: 250,
  pattern: PRINTABLE_TEXT,
  description: 'With amount_cents: what the single amount is for (becomes the one line item, quantity 1).',
  examples: ['Consulting, March'],
});

const LinkDescription = {
  ...Description,
  description: "With amount_cents: what the single amount is for (becomes the one line item, quantity 1); defaults to the link's name.",
};

/** An absolute http(s) URL; checked again with the URL parser by the service. */
export const HttpUrl = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]+([/?#]\\S*)?$',
  description: 'Absolute http(s) URL, at most 2048 characters.',
  examples: ['https://shop.example.com/thanks?session_id={CHECKOUT_SESSION_ID}'],
});

const Metadata = Type.Unsafe<Record<string, string>>({
  type: 'object',
  maxProperties: MAX_METADATA_KEYS,
  propertyNames: { minLength: 1, maxLength: MAX_METADATA_KEY_LENGTH },
  additionalProperties: { type: 'string', maxLength: MAX_METADATA_VALUE_LENGTH },
  description: 'Your own key-value pairs, returned as sent: up to 50 keys of 1-40 characters, string values up to 500 characters.',
  examples: [{ order_id: '6735' }],
});

export const LineItem = Type.Object(
  {
    name: Type.String({ maxLength: 250 }),
    unit_amount_cents: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_CENTS }),
    quantity: Type.Integer({ minimum: 1, maximum: MAX_QUANTITY }),
    amount_total_cents: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_CENTS, description: 'unit_amount_cents x quantity.' }),
  },
  { title: 'CheckoutLineItem', additionalProperties: false },
);

// Checkout sessions

export const CheckoutSession = Type.Object(
  {
    id: Uuid,
    status: Type.Union([Type.Literal('open'), Type.Literal('complete'), Type.Literal('expired')], {
      description: 'open until paid (complete) or 24 hours have passed (expired).',
    }),
    payment_status: Type.Union([Type.Literal('unpaid'), Type.Literal('paid')]),
    amount_total_cents: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_CENTS, description: 'Sum of the line items, in minor units.' }),
    currency: Type.String({ maxLength: 3, description: 'ISO 4217, upper-case.', examples: ['USD'] }),
    url: Type.String({ maxLength: 2048, description: 'The hosted checkout page; send the buyer here.' }),
    expires_at: Timestamp,
    created_at: Timestamp,
    line_items: Type.Array(LineItem, { maxItems: 100 }),
    description: Nullable(Type.String({ maxLength: 250, description: 'Set when the session was created with amount_cents + description.' })),
    success_url: Nullable(Type.String({ maxLength: 2048, description: 'Where the buyer goes after paying; null for payment-link sessions without after_completion_url.' })),
    cancel_url: Nullable(Type.String({ maxLength: 2048 })),
    customer_email: Nullable(Type.String({ maxLength: 320 })),
    metadata: Metadata,
    payment_link_id: Nullable(Uuid),
    completed_at: Nullable(Timestamp),
    payment_intent_id: Nullable(Type.String({ maxLength: 255, description: "The processor's payment id, once a payment was attempted." })),
    card_brand: Nullable(Type.String({ maxLength: 32, description: 'Brand of the card that paid (visa, mastercard, amex, discover, ...).' })),
    card_last4: Nullable(Type.String({ maxLength: 4, description: 'Last four digits of the card that paid; the number itself is never stored.' })),
    amount_refunded_cents: Type.Integer({
      minimum: 0,
      maximum: MAX_AMOUNT_CENTS,
      description: 'Sum of the refunds of this session (POST /payments/refunds), in minor units; 0 until one is made. Equal to amount_total_cents once fully refunded.',
      examples: [0],
    }),
  },
  { title: 'CheckoutSession', additionalProperties: false },
);

export const CreateCheckoutSessionBody = Type.Object(
  {
    line_items: Type.Optional(LineItemsInput),
    amount_cents: Type.Optional(AmountCents),
    description: Type.Optional(Description),
    currency: CurrencyCode,
    success_url: {
      ...HttpUrl,
      description: 'Where the buyer is sent after paying. `{CHECKOUT_SESSION_ID}` is replaced by the session id; without it, `session_id=<id>` is added to the query.',
    },
    cancel_url: Type.Optional(Nullable({ ...HttpUrl, description: 'Where the "Cancel" link of the page leads; without it the page has no cancel link.' })),
    customer_email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 320, description: 'Stored lower-cased.', examples: ['ada@example.com'] }))),
    metadata: Type.Optional(Metadata),
  },
  {
    additionalProperties: false,
    examples: [
      {
        line_items: [
          { name: 'Cotton T-shirt', unit_amount_cents: 2500, quantity: 2 },
          { name: 'Gift wrap', unit_amount_cents: 300, quantity: 1 },
        ],
        currency: 'usd',
        success_url: 'https://shop.example.com/thanks?session_id={CHECKOUT_SESSION_ID}',
        cancel_url: 'https://shop.example.com/cart',
        customer_email: 'ada@example.com',
        metadata: { order_id: '6735' },
      },
      { amount_cents: 15000, description: 'Consulting, March', currency: 'EUR', success_url: 'https://example.com/paid' },
    ],
  },
);

export const ListCheckoutSessionsQuery = ListQuery({
  status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('complete'), Type.Literal('expired')])),
  payment_link_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Sessions started from this payment link.' })),
});

// Refunds

const RefundReason = Type.Union([Type.Literal('duplicate'), Type.Literal('fraudulent'), Type.Literal('requested_by_customer')], {
  description: "Why the money goes back, as Stripe's refund reasons: duplicate, fraudulent or requested_by_customer.",
  examples: ['requested_by_customer'],
});

export const Refund = Type.Object(
  {
    id: Uuid,
    checkout_session_id: { ...Uuid, description: 'The paid checkout session this refund gives money back from.' },
    amount_cents: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_CENTS, description: 'Refunded amount, in minor units of the currency.', examples: [2500] }),
    currency: Type.String({ maxLength: 3, description: "The session's currency, ISO 4217 upper-case.", examples: ['USD'] }),
    status: Type.Union([Type.Literal('succeeded'), Type.Literal('pending')], {
      description:
        'succeeded: the money is on its way back (always at once in test mode). pending: the processor accepted the refund and has not finished it (live mode; it still counts against the refundable amount).',
      examples: ['succeeded'],
    }),
    reason: Nullable(RefundReason),
    metadata: Metadata,
    payment_intent_id: Type.String({ maxLength: 255, description: "The session's payment at the processor that was refunded.", examples: ['pi_3OqXyZ2eZvKYlo2C0abc1234'] }),
    processor_refund_id: Type.String({
      maxLength: 255,
      description: "The processor's id of the refund (Stripe's re_...; re_sandbox_... in test mode).",
      examples: ['re_3OqXyZ2eZvKYlo2C0xyz9876'],
    }),
    session_amount_total_cents: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_CENTS, description: "The session's amount_total_cents (what was paid).", examples: [5300] }),
    session_amount_refunded_cents: Type.Integer({
      minimum: 1,
      maximum: MAX_AMOUNT_CENTS,
      description: "The session's amount_refunded_cents just after this refund; equal to session_amount_total_cents when this refund completed a full refund.",
      examples: [5300],
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'PaymentRefund', additionalProperties: false },
);

export const CreateRefundBody = Type.Object(
  {
    checkout_session_id: { ...Uuid, description: 'The checkout session to refund; it must be complete (paid).' },
    amount_cents: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_AMOUNT_CENTS,
        description: 'How much to give back, in minor units: more than 0 and at most what the session can still refund. Default: everything it can still refund.',
        examples: [1000],
      }),
    ),
    reason: Type.Optional(RefundReason),
    metadata: Type.Optional(Metadata),
  },
  {
    additionalProperties: false,
    examples: [
      { checkout_session_id: '0b7a2f4e-6c1d-4e8a-9f3b-2d5c7e9a1b4f' },
      { checkout_session_id: '0b7a2f4e-6c1d-4e8a-9f3b-2d5c7e9a1b4f', amount_cents: 1000, reason: 'requested_by_customer', metadata: { ticket: 'T-4411' } },
    ],
  },
);

export const ListRefundsQuery = ListQuery({
  checkout_session_id: Type.Optional(
    Type.String({ format: 'uuid', maxLength: 36, description: 'Refunds of this checkout session.', examples: ['0b7a2f4e-6c1d-4e8a-9f3b-2d5c7e9a1b4f'] }),
  ),
});

// Payment links

export const PaymentLink = Type.Object(
  {
    id: Uuid,
    name: Type.String({ maxLength: 250 }),
    line_items: Type.Array(LineItem, { maxItems: 100 }),
    amount_cents: Nullable(Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_CENTS, description: 'Set when the link was given amount_cents + description.' })),
    description: Nullable(Type.String({ maxLength: 250 })),
    amount_total_cents: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_CENTS, description: 'Sum of the line items at their default quantities.' }),
    currency: Type.String({ maxLength: 3, examples: ['USD'] }),
    active: Type.Boolean({ description: 'Switched off, the link page says it is not available.' }),
    available: Type.Boolean({ description: 'Whether visiting the link can start a payment now: active and not used up.' }),
    url: Type.String({ maxLength: 2048, description: 'Share this; every visit starts a new checkout session.' }),
    allow_quantity: Type.Boolean({ description: 'The buyer picks the quantity (1 to 10,000) of the single line before paying.' }),
    max_uses: Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'Completed payments after which the link stops taking payments; null for no limit.' })),
    use_count: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Completed payments (plus any being processed at this moment).' }),
    after_completion_url: Nullable(Type.String({ maxLength: 2048, description: 'Where buyers go after paying; null shows a hosted thank-you page.' })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'PaymentLink', additionalProperties: false },
);

const LinkName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: PRINTABLE_TEXT,
  description: 'Your label for the link, shown as the title of its page; trimmed.',
  examples: ['Spring workshop ticket'],
});
const MaxUses = Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'Stop after this many completed payments; null for no limit.' });
const ALLOW_QUANTITY = 'Let the buyer choose the quantity (1 to 10,000) on the link page; needs exactly one line item.';
const AllowQuantity = Type.Boolean({ description: ALLOW_QUANTITY });

export const CreatePaymentLinkBody = Type.Object(
  {
    name: LinkName,
    line_items: Type.Optional(LineItemsInput),
    amount_cents: Type.Optional(AmountCents),
    description: Type.Optional(LinkDescription),
    currency: CurrencyCode,
    active: Type.Optional(Type.Boolean({ description: 'Default true.' })),
    allow_quantity: Type.Optional(Type.Boolean({ description: `${ALLOW_QUANTITY} Default false.` })),
    max_uses: Type.Optional(Nullable(MaxUses)),
    after_completion_url: Type.Optional(
      Nullable({ ...HttpUrl, description: 'Where buyers go after paying (`{CHECKOUT_SESSION_ID}` is replaced); null shows a hosted thank-you page.' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Spring workshop ticket',
        line_items: [{ name: 'Workshop ticket', unit_amount_cents: 4900, quantity: 1 }],
        currency: 'EUR',
        allow_quantity: true,
        max_uses: 30,
        after_completion_url: 'https://example.com/see-you-there',
      },
    ],
  },
);

export const UpdatePaymentLinkBody = Type.Object(
  {
    name: Type.Optional(LinkName),
    line_items: Type.Optional(LineItemsInput),
    amount_cents: Type.Optional(AmountCents),
    description: Type.Optional(LinkDescription),
    currency: Type.Optional(CurrencyCode),
    active: Type.Optional(Type.Boolean()),
    allow_quantity: Type.Optional(AllowQuantity),
    max_uses: Type.Optional(Nullable(MaxUses)),
    after_completion_url: Type.Optional(Nullable(HttpUrl)),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ active: false }, { max_uses: null, name: 'Workshop ticket (no limit)' }] },
);

export const ListPaymentLinksQuery = ListQuery({
  active: Type.Optional(Type.Boolean({ description: 'Only active (true) or inactive (false) links.' })),
});

export type LineItemView = Static<typeof LineItem>;
export type CheckoutSessionView = Static<typeof CheckoutSession>;
export type CreateCheckoutSessionInput = Static<typeof CreateCheckoutSessionBody>;
export type ListCheckoutSessionsFilters = Omit<Static<typeof ListCheckoutSessionsQuery>, 'limit' | 'offset'>;
export type RefundView = Static<typeof Refund>;
export type CreateRefundInput = Static<typeof CreateRefundBody>;
export type ListRefundsFilters = Omit<Static<typeof ListRefundsQuery>, 'limit' | 'offset'>;
export type PaymentLinkView = Static<typeof PaymentLink>;
export type CreatePaymentLinkInput = Static<typeof CreatePaymentLinkBody>;
export type UpdatePaymentLinkInput = Static<typeof UpdatePaymentLinkBody>;
export type ListPaymentLinksFilters = Omit<Static<typeof ListPaymentLinksQuery>, 'limit' | 'offset'>;
