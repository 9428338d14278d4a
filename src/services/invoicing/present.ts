import { decimalsAllowed, trimDecimalText } from '../../lib/money.js';
import { money, type StoredAmount } from './amounts.js';
import type { ApprovalRow, CustomerRow, InvoiceRow, LineItemRow, PaymentRow, PolicyRow, RefundRow, StoredInvoice, StoredPayment } from './repository.js';
import type { ApprovalPolicyView, ApprovalView, CreatedCustomerView, CustomerView, InvoiceView, LineItemView, PaymentView, RefundView } from './schemas.js';

/** JSON ids are numbers; every id the API shows fits in JSON's exact range. */
function jsonId(value: string | number | bigint): number {
  return Number(value);
}

function isZero(amount: StoredAmount): boolean {
  return amount === '0' || amount === 0 || amount === 0n;
}

/** Field by field in the schema's order (notes last), so the reply is written without a copy. */
export function presentCustomer(row: CustomerRow): CustomerView {
  return {
    id: jsonId(row.id),
    display_name: row.display_name,
    email: row.email,
    phone: row.phone,
    billing_address_line1: row.billing_address_line1,
    billing_city: row.billing_city,
    billing_postal_code: row.billing_postal_code,
    billing_country: row.billing_country,
    tax_id: row.tax_id,
    default_payment_terms_days: row.default_payment_terms_days,
    default_currency: row.default_currency,
    is_active: row.is_active,
    created_at: row.created_at,
    updated_at: row.updated_at,
    notes: row.notes,
  };
}

/** The create reply: the spec leaves `notes` out of it entirely. */
export function presentCreatedCustomer(row: CustomerRow): CreatedCustomerView {
  const { notes: _notes, ...view } = presentCustomer(row);
  return view;
}

/** A line as shown in its invoice's currency. */
export function presentLine(row: LineItemRow, currency: string): LineItemView {
  const subtotal = money(row.subtotal_minor, currency);
  return {
    id: jsonId(row.id),
    description: row.description,
    quantity: trimDecimalText(row.quantity),
    unit_price: trimDecimalText(row.unit_price, decimalsAllowed(currency)),
    tax_rate: row.tax_rate === null ? null : trimDecimalText(row.tax_rate),
    subtotal,
    tax: money(row.tax_minor, currency),
    total: isZero(row.tax_minor) ? subtotal : money(BigInt(row.subtotal_minor) + BigInt(row.tax_minor), currency),
  };
}

/** A payment as the rules hold it or as read (lists of an invoice's payments are not converted). */
export function presentPayment(row: PaymentRow | StoredPayment): PaymentView {
  const refundable = BigInt(row.amount_minor) - BigInt(row.refunded_minor) - BigInt(row.reserved_minor);
  return {
    id: jsonId(row.id),
    invoice_id: jsonId(row.invoice_id),
    amount: money(row.amount_minor, row.currency),
    refunded_amount: money(row.refunded_minor, row.currency),
    pending_refund_amount: money(row.reserved_minor, row.currency),
    refundable_amount: money(refundable, row.currency),
    currency: row.currency,
    method: row.method,
    reference: row.reference,
    paid_at: row.paid_at,
    created_at: row.created_at,
  };
}

/** What is still owed: nothing on paid or void invoices; refunds never make it due again. */
export function amountDueMinor(row: Pick<InvoiceRow | StoredInvoice, 'status' | 'total_minor' | 'amount_paid_minor'>): bigint {
  return row.status === 'void' ? 0n : BigInt(row.total_minor) - BigInt(row.amount_paid_minor);
}

/** An invoice as the rules hold it, or as read for a list page (then its ids and amounts are not converted first). */
export function presentInvoice(row: InvoiceRow | StoredInvoice, lines: readonly LineItemRow[], payments: readonly (PaymentRow | StoredPayment)[]): InvoiceView {
  const total = money(row.total_minor, row.currency);
  // Most invoices have nothing paid: what is due is then the total, the same string.
  const amountDue = row.status !== 'void' && isZero(row.amount_paid_minor) ? total : money(amountDueMinor(row), row.currency);
  return {
    id: jsonId(row.id),
    number: row.number,
    customer_id: jsonId(row.customer_id),
    status: row.status,
    currency: row.currency,
    issue_date: row.issue_date,
    due_date: row.due_date,
    notes: row.notes,
    line_items: lines.map((line) => presentLine(line, row.currency)),
    subtotal: money(row.subtotal_minor, row.currency),
    tax_total: money(row.tax_total_minor, row.currency),
    total,
    amount_paid: money(row.amount_paid_minor, row.currency),
    amount_refunded: money(row.amount_refunded_minor, row.currency),
    amount_due: amountDue,
    payments: payments.map(presentPayment),
    finalized_at: row.finalized_at,
    paid_at: row.paid_at,
    voided_at: row.voided_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentRefund(row: RefundRow): RefundView {
  return {
    id: jsonId(row.id),
    invoice_id: jsonId(row.invoice_id),
    customer_payment_id: jsonId(row.customer_payment_id),
    amount: money(row.amount_minor, row.currency),
    status: row.status,
    currency: row.currency,
    method: row.method,
    reason: row.reason,
    approval_id: row.approval_id === null ? null : jsonId(row.approval_id),
    created_at: row.created_at,
  };
}

export function presentPolicy(row: PolicyRow): ApprovalPolicyView {
  return {
    id: jsonId(row.id),
    action: row.action,
    min_amount: money(row.min_amount_minor, row.currency),
    currency: row.currency,
    created_at: row.created_at,
  };
}

export function presentApproval(row: ApprovalRow, refund: RefundRow | undefined): ApprovalView {
  return {
    id: jsonId(row.id),
    status: row.status,
    action: row.action,
    policy_id: row.policy_id === null ? null : jsonId(row.policy_id),
    request: {
      invoice_id: jsonId(row.invoice_id),
      customer_payment_id: jsonId(row.customer_payment_id),
      amount: money(row.amount_minor, row.currency),
      currency: row.currency,
      method: row.method,
      reason: row.reason,
    },
    requested_by_key_id: row.requested_by_key_id,
    decided_by_key_id: row.decided_by_key_id,
    decided_at: row.decided_at,
    decision_note: row.decision_note,
    refund: refund ? presentRefund(refund) : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
