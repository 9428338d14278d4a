import type { OwnedRow, Owner } from '../../../db/owned.js';
import type { PageRequest } from '../../../db/paging.js';
import type { InvoicingRefundsTable } from '../tables.js';
import { anyOf, asText, id, minor, refunds, type InvoicingDb } from './db.js';

export interface RefundRow {
  id: string;
  invoice_id: string;
  customer_payment_id: string;
  amount_minor: bigint;
  status: 'succeeded';
  currency: string;
  method: string;
  reason: string | null;
  approval_id: string | null;
  created_at: Date;
}

const REFUND_COLUMNS = ['id', 'invoice_id', 'customer_payment_id', 'amount_minor', 'status', 'currency', 'method', 'reason', 'approval_id', 'created_at'] as const;

type RawRefund = Pick<OwnedRow<InvoicingRefundsTable>, (typeof REFUND_COLUMNS)[number]>;

function toRefund(row: RawRefund): RefundRow {
  return {
    ...row,
    id: id(row.id),
    invoice_id: id(row.invoice_id),
    customer_payment_id: id(row.customer_payment_id),
    amount_minor: minor(row.amount_minor),
    approval_id: row.approval_id === null ? null : id(row.approval_id),
  };
}

export interface NewRefund {
  invoice_id: string;
  customer_payment_id: string;
  amount_minor: bigint;
  currency: string;
  method: string;
  reason: string | null;
  approval_id: string | null;
  created_at: Date;
}

/** The unique index that lets an approval create at most one refund. */
export const REFUND_APPROVAL_INDEX = 'invoicing_refunds_approval';

export async function insertRefund(db: InvoicingDb, owner: Owner, refund: NewRefund): Promise<RefundRow> {
  const row = await refunds
    .insert(db, owner, { ...asText(refund), status: 'succeeded' })
    .returning(REFUND_COLUMNS)
    .executeTakeFirstOrThrow();
  return toRefund(row);
}

const refundById = refunds.statement((from, values: { id: string }) => from.select(REFUND_COLUMNS).where('id', '=', values.id));

export async function findRefund(db: InvoicingDb, owner: Owner, refundId: string): Promise<RefundRow | undefined> {
  const row = await refundById.first(db, owner, { id: refundId });
  return row && toRefund(row);
}

const refundsOfApprovals = refunds.statement((from, values: { approvalIds: readonly string[] }) =>
  from.select(REFUND_COLUMNS).where('approval_id', '=', anyOf(values.approvalIds)),
);

/** The refunds the given approvals created (at most one each). */
export async function findRefundsByApproval(db: InvoicingDb, owner: Owner, approvalIds: readonly string[]): Promise<RefundRow[]> {
  if (approvalIds.length === 0) return [];
  return (await refundsOfApprovals.all(db, owner, { approvalIds })).map(toRefund);
}

const refundList = refunds.list<{ invoiceId?: string; paymentId?: string }, RawRefund>({
  filters: {
    invoiceId: (eb, invoiceId) => eb('invoice_id', '=', invoiceId),
    paymentId: (eb, paymentId) => eb('customer_payment_id', '=', paymentId),
  },
  select: (from) => from.select(REFUND_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listRefunds(db: InvoicingDb, owner: Owner, filters: { invoiceId?: string; paymentId?: string }, page: PageRequest) {
  const { rows, total } = await refundList.page(db, owner, filters, page);
  return { rows: rows.map(toRefund), total };
}
