import type { RefundRow, SessionRow } from './repository.js';
import type { CheckoutSessionView, LineItemView, RefundView } from './schemas.js';
import type { SessionStatus, StoredLineItem } from './tables.js';

/** An open session past its expiry is shown as expired before the expiry job gets to it. */
export function effectiveStatus(row: Pick<SessionRow, 'status' | 'expires_at'>, now: Date): SessionStatus {
  if (row.status === 'open' && row.expires_at.getTime() <= now.getTime()) return 'expired';
  return row.status;
}

/** Built field by field in the schema's order: stored as jsonb, an item comes back with its keys sorted by length. */
export function presentLineItem(item: StoredLineItem): LineItemView {
  return { name: item.name, unit_amount_cents: item.unit_amount_cents, quantity: item.quantity, amount_total_cents: item.unit_amount_cents * item.quantity };
}

/** Presents sessions as GET shows them at `now`, their page URLs under `publicBaseUrl`. */
export function sessionPresenter(publicBaseUrl: string) {
  return function presentSession(row: SessionRow, now: Date): CheckoutSessionView {
    return {
      id: row.id,
      status: effectiveStatus(row, now),
      payment_status: row.payment_status,
      amount_total_cents: Number(row.amount_total_cents),
      currency: row.currency,
      url: `${publicBaseUrl}/checkout/${row.id}`,
      expires_at: row.expires_at,
      created_at: row.created_at,
      line_items: row.line_items.map(presentLineItem),
      description: row.description,
      success_url: row.success_url,
      cancel_url: row.cancel_url,
      customer_email: row.customer_email,
      metadata: row.metadata,
      payment_link_id: row.payment_link_id,
      completed_at: row.completed_at,
      payment_intent_id: row.payment_intent_id,
      card_brand: row.card_brand,
      card_last4: row.card_last4,
      amount_refunded_cents: Number(row.amount_refunded_cents),
    };
  };
}

export function presentRefund(row: RefundRow): RefundView {
  return {
    id: row.id,
    checkout_session_id: row.checkout_session_id,
    amount_cents: Number(row.amount_cents),
    currency: row.currency,
    status: row.status,
    reason: row.reason,
    metadata: row.metadata,
    payment_intent_id: row.payment_intent_id,
    processor_refund_id: row.processor_refund_id,
    session_amount_total_cents: Number(row.session_amount_total_cents),
    session_amount_refunded_cents: Number(row.session_amount_refunded_cents),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
