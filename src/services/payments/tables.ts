import type { ColumnType, Generated } from 'kysely';
import type { Mode } from '../../db/types.js';

export type SessionStatus = 'open' | 'complete' | 'expired';
export type PaymentStatus = 'unpaid' | 'paid';
export type RefundStatus = 'succeeded' | 'pending';
export type RefundReason = 'duplicate' | 'fraudulent' | 'requested_by_customer';

/** One line of a link or session, as stored (a snapshot). */
export interface StoredLineItem {
  name: string;
  unit_amount_cents: number;
  quantity: number;
}

/** JSON columns are written as JSON text and read back parsed, on both database backends. */
type Json<T> = ColumnType<T, string, string>;
/** bigint comes back as a string from pg and a number from PGlite; written as a number. */
type BigIntColumn = ColumnType<string | number, number, number>;

export interface PaymentLinksTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  name: string;
  line_items: Json<StoredLineItem[]>;
  description: string | null;
  currency: string;
  amount_total_cents: BigIntColumn;
  active: boolean;
  allow_quantity: boolean;
  max_uses: number | null;
  use_count: Generated<number>;
  after_completion_url: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface PaymentCheckoutSessionsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  status: SessionStatus;
  payment_status: PaymentStatus;
  line_items: Json<StoredLineItem[]>;
  description: string | null;
  currency: string;
  amount_total_cents: BigIntColumn;
  success_url: string | null;
  cancel_url: string | null;
  customer_email: string | null;
  metadata: Json<Record<string, string>>;
  payment_link_id: string | null;
  expires_at: Date;
  completed_at: Date | null;
  processing_until: Date | null;
  payment_intent_id: string | null;
  card_brand: string | null;
  card_last4: string | null;
  /** Sum of the session's refunds (succeeded or pending at the processor). */
  amount_refunded_cents: ColumnType<string | number, number | undefined, number>;
  created_at: Date;
  updated_at: Date;
}

export interface PaymentRefundsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  checkout_session_id: string;
  amount_cents: BigIntColumn;
  currency: string;
  status: RefundStatus;
  reason: RefundReason | null;
  metadata: Json<Record<string, string>>;
  payment_intent_id: string;
  processor_refund_id: string;
  session_amount_total_cents: BigIntColumn;
  session_amount_refunded_cents: BigIntColumn;
  created_at: Date;
  updated_at: Date;
}

export interface PaymentTables {
  payment_links: PaymentLinksTable;
  payment_checkout_sessions: PaymentCheckoutSessionsTable;
  payment_refunds: PaymentRefundsTable;
}
