import { sql } from 'kysely';
import type { OwnedRow, Owner } from '../../../db/owned.js';
import type { InvoicingPaymentsTable } from '../tables.js';
import { anyOf, asText, id, minor, payments, type InvoicingDb } from './db.js';

export interface PaymentRow {
  id: string;
  invoice_id: string;
  amount_minor: bigint;
  refunded_minor: bigint;
  reserved_minor: bigint;
  currency: string;
  method: string;
  reference: string | null;
  paid_at: Date;
  created_at: Date;
  updated_at: Date;
}

const PAYMENT_COLUMNS = ['id', 'invoice_id', 'amount_minor', 'refunded_minor', 'reserved_minor', 'currency', 'method', 'reference', 'paid_at', 'created_at', 'updated_at'] as const;

/** A payment as read: ids and amounts as the driver hands them over (see `id` and `minor`). */
export type StoredPayment = Pick<OwnedRow<InvoicingPaymentsTable>, (typeof PAYMENT_COLUMNS)[number]>;

function toPayment(row: StoredPayment): PaymentRow {
  return {
    ...row,
    id: id(row.id),
    invoice_id: id(row.invoice_id),
    amount_minor: minor(row.amount_minor),
    refunded_minor: minor(row.refunded_minor),
    reserved_minor: minor(row.reserved_minor),
  };
}

export interface NewPayment {
  invoice_id: string;
  amount_minor: bigint;
  currency: string;
  method: string;
  reference: string | null;
  paid_at: Date;
  created_at: Date;
  updated_at: Date;
}

export async function insertPayment(db: InvoicingDb, owner: Owner, payment: NewPayment): Promise<PaymentRow> {
  const row = await payments
    .insert(db, owner, { ...asText(payment), refunded_minor: '0', reserved_minor: '0' })
    .returning(PAYMENT_COLUMNS)
    .executeTakeFirstOrThrow();
  return toPayment(row);
}

const paymentOfInvoice = payments.statement((from, values: { invoiceId: string; id: string }) =>
  from.select(PAYMENT_COLUMNS).where('invoice_id', '=', values.invoiceId).where('id', '=', values.id),
);
const paymentOfInvoiceForUpdate = payments.statement((from, values: { invoiceId: string; id: string }) =>
  from.select(PAYMENT_COLUMNS).where('invoice_id', '=', values.invoiceId).where('id', '=', values.id).forUpdate(),
);

/** A payment of the given invoice; `forUpdate` locks it for a refund or a reservation. */
export async function findPayment(db: InvoicingDb, owner: Owner, invoiceId: string, paymentId: string, options: { forUpdate?: boolean } = {}): Promise<PaymentRow | undefined> {
  const row = await (options.forUpdate ? paymentOfInvoiceForUpdate : paymentOfInvoice).first(db, owner, { invoiceId, id: paymentId });
  return row && toPayment(row);
}

const paymentsOfInvoices = payments.statement((from, values: { invoiceIds: readonly string[] }) =>
  from.select(PAYMENT_COLUMNS).where('invoice_id', '=', anyOf(values.invoiceIds)).orderBy('invoice_id').orderBy('id'),
);

/** The payments applied to the given invoices, in invoice and id order, as read (for display). */
export async function findPayments(db: InvoicingDb, owner: Owner, invoiceIds: readonly string[]): Promise<StoredPayment[]> {
  if (invoiceIds.length === 0) return [];
  return paymentsOfInvoices.all(db, owner, { invoiceIds });
}

/**
 * Moves a payment's refunded and reserved amounts by the given deltas. The table's CHECK
 * (refunded + reserved <= amount) is the last line of defence against overdrawing.
 */
export async function adjustPaymentRefunds(db: InvoicingDb, owner: Owner, paymentId: string, delta: { refunded: bigint; reserved: bigint }, updatedAt: Date): Promise<PaymentRow> {
  const row = await payments
    .update(db, owner)
    .set({
      refunded_minor: sql<string>`refunded_minor + ${delta.refunded.toString()}::bigint`,
      reserved_minor: sql<string>`reserved_minor + ${delta.reserved.toString()}::bigint`,
      updated_at: updatedAt,
    })
    .where('id', '=', paymentId)
    .returning(PAYMENT_COLUMNS)
    .executeTakeFirstOrThrow();
  return toPayment(row);
}
