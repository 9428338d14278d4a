import { Type, type Static } from 'typebox';
import { ExpectedUpdatedAt } from '../../platform/concurrency.js';
import { CURRENCY_FORMAT, Nullable, Timestamp } from '../../platform/http/schemas.js';
import { ListQuery } from '../../platform/pagination/index.js';
import { MAX_AMOUNT_TEXT } from './amounts.js';
import { APPROVAL_STATUSES, INVOICE_STATUSES } from './tables.js';

/** Text on one line: no control characters. */
const ONE_LINE = '^[^\\u0000-\\u001f\\u007f]*$';
/** Text on one line with at least one visible character. */
const ONE_LINE_NOT_BLANK = '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$';
/** Free text that may span lines (tabs and newlines allowed, other control characters not). */
const MULTI_LINE = '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$';

const Text = (maxLength: number, description: string, examples?: string[]) => Type.String({ maxLength, pattern: ONE_LINE, description, ...(examples ? { examples } : {}) });

/** Integer ids as the spec types them (bigint identities; JSON-safe). */
const Id = (description: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description, examples: [42] });
/** An id sent in a body or a query: a positive integer within JSON's exact range. */
const IdInput = (description: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description, examples: [42] });

/** Money and other decimals are sent as numeric strings (or JSON numbers) in major units. */
const DecimalInput = (description: string, examples: string[]) => Type.Union([Type.String({ minLength: 1, maxLength: 40 }), Type.Number()], { description, examples });

/** An ISO 4217 code in any case (unknown codes are 400); stored and returned upper-case. */
const Currency = (description: string) => Type.String({ format: CURRENCY_FORMAT, minLength: 3, maxLength: 3, description, examples: ['USD'] });

/** Major units with the currency's decimals: "120.00" in USD, "1500" in JPY (ISO 4217, at most 2). */
const Money = (description: string) => Type.String({ maxLength: 40, pattern: '^-?\\d+(\\.\\d{2})?$', description, examples: ['120.00'] });

const CalendarDate = (description: string) =>
  Type.String({
    format: 'date',
    maxLength: 10,
    // Years 1900-2999: beyond any real invoice, and always a date PostgreSQL can store.
    pattern: '^(19|2\\d)\\d\\d-\\d\\d-\\d\\d$',
    description,
    examples: ['2026-11-21'],
  });

export const Deleted = Type.Object({ id: Id('The id of what was deleted.'), deleted: Type.Literal(true) }, { title: 'DeletedInvoicingObject', additionalProperties: false });

/** Action routes take no fields; a body, if sent, must be an empty object. */

// Customers

const customerProperties = {
  id: Id('Customer id.'),
  display_name: Type.String({ maxLength: 200, description: 'Name shown on invoices; trimmed.' }),
  email: Nullable(Type.String({ maxLength: 320, description: 'Primary accounts-receivable email, lower-cased.' })),
  phone: Nullable(Type.String({ maxLength: 50 })),
  billing_address_line1: Nullable(Type.String({ maxLength: 200 })),
  billing_city: Nullable(Type.String({ maxLength: 100 })),
  billing_postal_code: Nullable(Type.String({ maxLength: 20 })),
  billing_country: Nullable(Type.String({ maxLength: 2, description: 'ISO 3166-1 alpha-2, upper-case.' })),
  tax_id: Nullable(Type.String({ maxLength: 50, description: 'Tax / VAT id.' })),
  default_payment_terms_days: Type.Integer({ minimum: 0, maximum: 365, description: 'Days from issue date to due date on new invoices.' }),
  default_currency: Type.String({ maxLength: 3, description: 'ISO 4217, upper-case; the currency of new invoices.' }),
  is_active: Type.Boolean({ description: 'False once archived.' }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

/** The customer as read, listed and updated: with `notes`. */
export const Customer = Type.Object(
  {
    ...customerProperties,
    notes: Nullable(Type.String({ maxLength: 5000, description: 'Private notes.' })),
  },
  { title: 'Customer', additionalProperties: false },
);

/** The customer in the create reply: the spec leaves `notes` out (no key at all). */
export const CreatedCustomer = Type.Object(customerProperties, {
  title: 'CreatedCustomer',
  additionalProperties: false,
  description: 'The customer; `notes` is accepted on create but not returned in this reply (read the customer to see it).',
});

const customerInputs = {
  display_name: Type.String({ minLength: 1, maxLength: 200, pattern: ONE_LINE_NOT_BLANK, description: 'Required; trimmed.', examples: ['Acme Ltd'] }),
  email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 320, description: 'Stored lower-cased.', examples: ['billing@acme.example'] }))),
  phone: Type.Optional(Nullable(Text(50, 'Free text; trimmed.', ['+44 20 7946 0958']))),
  billing_address_line1: Type.Optional(Nullable(Text(200, 'Street address; trimmed.'))),
  billing_city: Type.Optional(Nullable(Text(100, 'City; trimmed.'))),
  billing_postal_code: Type.Optional(Nullable(Text(20, 'Postal code; trimmed.'))),
  billing_country: Type.Optional(
    Nullable(Type.String({ minLength: 2, maxLength: 2, description: 'ISO 3166-1 alpha-2 country code, any case; stored upper-case.', examples: ['GB'] })),
  ),
  tax_id: Type.Optional(Nullable(Text(50, 'Tax / VAT id; trimmed.', ['GB123456789']))),
  default_payment_terms_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 365, description: 'Whole days, 0 to 365. Default 30.' })),
  default_currency: Type.Optional(Currency('ISO 4217, any case. Default USD.')),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 5000, pattern: MULTI_LINE, description: 'Private notes; not returned in the create reply.' }))),
};

export const CreateCustomerBody = Type.Object(customerInputs, {
  additionalProperties: false,
  description: 'Blank optional texts are stored as null.',
  examples: [{ display_name: 'Acme Ltd', email: 'Billing@Acme.example', billing_country: 'gb', default_currency: 'GBP', default_payment_terms_days: 14 }],
});

export const UpdateCustomerBody = Type.Object(
  {
    ...customerInputs,
    display_name: Type.Optional(customerInputs.display_name),
    expected_updated_at: ExpectedUpdatedAt,
  },
  {
    additionalProperties: false,
    description: 'Only the fields sent change; null clears a nullable field. Archive and unarchive with their own routes.',
    examples: [{ email: 'ap@acme.example', default_payment_terms_days: 30 }],
  },
);

export const ListCustomersQuery = ListQuery({
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive match anywhere in display_name or email.' })),
  is_active: Type.Optional(Type.Enum(['true', 'false'], { description: 'true: active customers only; false: archived only.' })),
});

// Invoices

const InvoiceStatus = Type.Enum([...INVOICE_STATUSES], {
  description: 'draft (editable) -> open (finalized) -> partially_paid / paid (by payments); void from draft or open.',
});

export const LineItem = Type.Object(
  {
    id: Id('Line item id.'),
    description: Type.String({ maxLength: 1000 }),
    quantity: Type.String({ maxLength: 40, description: 'Decimal, up to 4 places.', examples: ['3'] }),
    unit_price: Type.String({ maxLength: 40, description: "Major units, at least the currency's places (2; JPY 0), up to 4.", examples: ['33.333'] }),
    tax_rate: Nullable(Type.String({ maxLength: 40, description: 'Percent, up to 4 places; null for no tax.', examples: ['20'] })),
    subtotal: Money("round_half_up(quantity x unit_price, d), d = the currency's decimals (2; JPY 0)."),
    tax: Money('round_half_up(subtotal x tax_rate / 100, d).'),
    total: Money('subtotal + tax.'),
  },
  { title: 'InvoiceLineItem', additionalProperties: false },
);

const paymentProperties = {
  id: Id('Payment id (the customer_payment_id of a refund).'),
  invoice_id: Id('Invoice the payment was applied to.'),
  amount: Money('Amount received.'),
  refunded_amount: Money('Sum of succeeded refunds of this payment.'),
  pending_refund_amount: Money('Refunds waiting for approval; reserved, so they cannot be refunded twice.'),
  refundable_amount: Money('amount - refunded_amount - pending_refund_amount.'),
  currency: Type.String({ maxLength: 3, description: 'Always the invoice currency.' }),
  method: Type.String({ maxLength: 50, description: 'How it was paid (free text).' }),
  reference: Nullable(Type.String({ maxLength: 200, description: 'Bank or processor reference.' })),
  paid_at: Timestamp,
  created_at: Timestamp,
};

export const Payment = Type.Object(paymentProperties, { title: 'InvoicePayment', additionalProperties: false });

export const Invoice = Type.Object(
  {
    id: Id('Invoice id.'),
    number: Type.String({ maxLength: 32, description: 'Sequential per tenant and mode, assigned at creation, never reused.', examples: ['INV-000001'] }),
    customer_id: Id('Customer billed.'),
    status: InvoiceStatus,
    currency: Type.String({ maxLength: 3, description: 'ISO 4217, upper-case.' }),
    issue_date: Type.String({ format: 'date', maxLength: 10, description: 'YYYY-MM-DD.' }),
    due_date: Type.String({ format: 'date', maxLength: 10, description: 'YYYY-MM-DD.' }),
    notes: Nullable(Type.String({ maxLength: 5000 })),
    line_items: Type.Array(LineItem, { maxItems: 100 }),
    subtotal: Money('Sum of line subtotals.'),
    tax_total: Money('Sum of line taxes.'),
    total: Money('subtotal + tax_total.'),
    amount_paid: Money('Sum of payments received (refunds do not lower it).'),
    amount_refunded: Money('Sum of succeeded refunds.'),
    amount_due: Money('total - amount_paid; 0 on paid and void invoices. Refunds do not make an invoice due again.'),
    payments: Type.Array(Payment),
    finalized_at: Nullable(Timestamp),
    paid_at: Nullable(Timestamp),
    voided_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Invoice', additionalProperties: false },
);

const LineItemInput = Type.Object(
  {
    description: Type.String({ minLength: 1, maxLength: 1000, pattern: ONE_LINE_NOT_BLANK, description: 'What is billed; trimmed.', examples: ['Consulting, November'] }),
    quantity: DecimalInput('Greater than 0, up to 4 decimal places, at most 1,000,000,000; a numeric string (or number).', ['3', '1.5']),
    unit_price: DecimalInput('Major units, 0 or more, up to 4 decimal places (whole numbers in currencies without a minor unit, such as JPY); a numeric string (or number).', [
      '33.333',
      '120.00',
    ]),
    tax_rate: Type.Optional(Nullable(DecimalInput('Percent, 0 to 100, up to 4 decimal places; null or absent for no tax.', ['20', '8.875']))),
  },
  { additionalProperties: false },
);

const LineItemsInput = Type.Array(LineItemInput, { maxItems: 100, description: 'Up to 100 lines, in order. Replaces all lines on update.' });

const invoiceInputs = {
  customer_id: IdInput('An active customer of the same tenant and mode.'),
  currency: Type.Optional(Currency("ISO 4217, any case. Default: the customer's default_currency.")),
  issue_date: Type.Optional(CalendarDate('YYYY-MM-DD. Default: today (UTC).')),
  due_date: Type.Optional(CalendarDate("YYYY-MM-DD, not before issue_date. Default: issue_date + the customer's payment terms.")),
  line_items: Type.Optional(LineItemsInput),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 5000, pattern: MULTI_LINE, description: 'Shown on the invoice.' }))),
};

export const CreateInvoiceBody = Type.Object(invoiceInputs, {
  additionalProperties: false,
  description:
    'Creates a draft with the next number. Amounts: per line round_half_up(quantity x unit_price, d), tax round_half_up(subtotal x rate / 100, d), d = the currency decimals (2; JPY 0); totals are sums.',
  examples: [
    {
      customer_id: 1,
      issue_date: '2026-11-01',
      line_items: [
        { description: 'Consulting', quantity: '3', unit_price: '33.333' },
        { description: 'Licence', quantity: '1', unit_price: '19.99', tax_rate: '8.875' },
      ],
    },
  ],
});

export const UpdateInvoiceBody = Type.Object(
  {
    ...invoiceInputs,
    customer_id: Type.Optional(invoiceInputs.customer_id),
    expected_updated_at: ExpectedUpdatedAt,
  },
  {
    additionalProperties: false,
    description: 'Drafts only. Only the fields sent change; line_items replaces every line.',
    examples: [{ due_date: '2026-12-15', line_items: [{ description: 'Consulting', quantity: '4', unit_price: '120.00', tax_rate: '20' }] }],
  },
);

export const ListInvoicesQuery = ListQuery({
  status: Type.Optional(InvoiceStatus),
  customer_id: Type.Optional(IdInput('Invoices of this customer.')),
});

export const RecordPaymentBody = Type.Object(
  {
    amount: DecimalInput(`Major units: greater than 0, at most 2 decimal places (0 in JPY and other currencies without a minor unit), at most the amount due.`, ['50.00']),
    currency: Type.Optional(Currency('Must be the invoice currency if sent.')),
    method: Type.Optional(Type.String({ minLength: 1, maxLength: 50, pattern: ONE_LINE_NOT_BLANK, description: 'Free text; default manual.', examples: ['bank_transfer'] })),
    paid_at: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'When the money arrived; not in the future. Default now.' })),
    reference: Type.Optional(Nullable(Text(200, 'Bank or processor reference; trimmed.', ['BACS 4471']))),
  },
  { additionalProperties: false, examples: [{ amount: '50.00', method: 'bank_transfer', reference: 'BACS 4471' }] },
);

export const RecordedPayment = Type.Object(
  { ...paymentProperties, invoice: Invoice },
  { title: 'RecordedPayment', additionalProperties: false, description: 'The payment, with the invoice as it is after it.' },
);

// Refunds

export const Refund = Type.Object(
  {
    id: Id('Refund id.'),
    invoice_id: Id('Invoice the payment was applied to.'),
    customer_payment_id: Id('Payment refunded.'),
    amount: Money('Numeric string, major units.'),
    status: Type.Literal('succeeded', { description: 'Refunds are recorded (money returned outside the API), so they are succeeded when created.' }),
    currency: Type.String({ maxLength: 3 }),
    method: Type.String({ maxLength: 50 }),
    reason: Nullable(Type.String({ maxLength: 500 })),
    approval_id: Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The approval that released this refund, if one was needed.' })),
    created_at: Timestamp,
  },
  { title: 'Refund', additionalProperties: false },
);

export const PendingApproval = Type.Object(
  {
    pending_approval: Type.Literal(true),
    approval_instance_id: Id('Approval id; poll approval_status_url.'),
    approval_status_url: Type.String({ maxLength: 2048, format: 'uri', description: 'Absolute URL of GET /invoicing/approvals/{id}.' }),
    message: Type.String({ maxLength: 500 }),
  },
  { title: 'PendingApproval', additionalProperties: false },
);

export const CreateRefundBody = Type.Object(
  {
    invoice_id: IdInput('Invoice the payment was applied to.'),
    customer_payment_id: IdInput('Payment to refund (an id from the invoice payments list).'),
    amount: DecimalInput(
      `Major units: greater than 0, at most 2 decimal places (0 in JPY and other currencies without a minor unit), not above the refundable balance (payment amount - refunds - refunds awaiting approval). Numeric strings accepted.`,
      ['25.00'],
    ),
    currency: Type.Optional(Currency('Defaults to the payment currency; must match it.')),
    method: Type.Optional(Type.String({ minLength: 1, maxLength: 50, pattern: ONE_LINE_NOT_BLANK, description: 'Free text; default manual.', examples: ['bank_transfer'] })),
    reason: Type.Optional(Nullable(Type.String({ maxLength: 500, pattern: MULTI_LINE, description: 'Why; free text.', examples: ['Damaged in transit'] }))),
  },
  { additionalProperties: false, examples: [{ invoice_id: 12, customer_payment_id: 31, amount: '25.00', reason: 'Damaged in transit' }] },
);

export const ListRefundsQuery = ListQuery({
  invoice_id: Type.Optional(IdInput('Refunds of this invoice.')),
  customer_payment_id: Type.Optional(IdInput('Refunds of this payment.')),
});

// Approval policies and approvals

export const ApprovalPolicy = Type.Object(
  {
    id: Id('Policy id.'),
    action: Type.Literal('refund'),
    min_amount: Money('Refunds of this amount or more need approval.'),
    currency: Nullable(Type.String({ maxLength: 3, description: 'Only refunds in this currency; null: any currency (amounts compared as numbers).' })),
    created_at: Timestamp,
  },
  { title: 'ApprovalPolicy', additionalProperties: false },
);

export const CreateApprovalPolicyBody = Type.Object(
  {
    action: Type.Literal('refund', { description: 'The action that needs approval; only refund exists.' }),
    min_amount: DecimalInput(
      `Major units, 0 or more (0: every refund), at most 2 decimal places (0 with a currency without a minor unit, such as JPY), at most ${MAX_AMOUNT_TEXT}.`,
      ['500.00'],
    ),
    currency: Type.Optional(Currency('Only refunds in this currency match; absent: refunds in any currency.')),
  },
  {
    additionalProperties: false,
    examples: [
      { action: 'refund', min_amount: '500.00' },
      { action: 'refund', min_amount: '1000', currency: 'EUR' },
    ],
  },
);

export const ListApprovalPoliciesQuery = ListQuery({});

const ApprovalStatus = Type.Enum([...APPROVAL_STATUSES], { description: 'pending until approved or rejected; deciding happens once.' });

export const Approval = Type.Object(
  {
    id: Id('Approval id (approval_instance_id).'),
    status: ApprovalStatus,
    action: Type.Literal('refund'),
    policy_id: Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The policy that matched (it may since have been deleted).' })),
    request: Type.Object(
      {
        invoice_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
        customer_payment_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
        amount: Money('Reserved on the payment while pending.'),
        currency: Type.String({ maxLength: 3 }),
        method: Type.String({ maxLength: 50 }),
        reason: Nullable(Type.String({ maxLength: 500 })),
      },
      { additionalProperties: false, description: 'The refund request held for approval.' },
    ),
    requested_by_key_id: Type.String({ maxLength: 36, description: 'API key that asked for the refund.' }),
    decided_by_key_id: Nullable(Type.String({ maxLength: 36, description: 'API key that approved or rejected it.' })),
    decided_at: Nullable(Timestamp),
    decision_note: Nullable(Type.String({ maxLength: 1000 })),
    refund: Nullable(Refund),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Approval', additionalProperties: false },
);

export const DecideApprovalBody = Type.Object(
  { note: Type.Optional(Nullable(Type.String({ maxLength: 1000, pattern: MULTI_LINE, description: 'Why; stored as decision_note.' }))) },
  { additionalProperties: false, description: 'The body may be omitted.', examples: [{ note: 'Checked with the customer.' }] },
);

export const ListApprovalsQuery = ListQuery({ status: Type.Optional(ApprovalStatus) });

export type CustomerView = Static<typeof Customer>;
export type CreatedCustomerView = Static<typeof CreatedCustomer>;
export type CreateCustomerInput = Static<typeof CreateCustomerBody>;
export type UpdateCustomerInput = Static<typeof UpdateCustomerBody>;
export type InvoiceView = Static<typeof Invoice>;
export type LineItemView = Static<typeof LineItem>;
export type PaymentView = Static<typeof Payment>;
export type RecordedPaymentView = Static<typeof RecordedPayment>;
export type CreateInvoiceInput = Static<typeof CreateInvoiceBody>;
export type UpdateInvoiceInput = Static<typeof UpdateInvoiceBody>;
export type LineItemInputValue = Static<typeof LineItemInput>;
export type RecordPaymentInput = Static<typeof RecordPaymentBody>;
export type RefundView = Static<typeof Refund>;
export type PendingApprovalView = Static<typeof PendingApproval>;
export type CreateRefundInput = Static<typeof CreateRefundBody>;
export type ApprovalPolicyView = Static<typeof ApprovalPolicy>;
export type CreateApprovalPolicyInput = Static<typeof CreateApprovalPolicyBody>;
export type ApprovalView = Static<typeof Approval>;
export type DecideApprovalInput = Static<typeof DecideApprovalBody>;
