import { sql } from 'kysely';
import type { OwnedRow, Owner } from '../../../db/owned.js';
import type { PageRequest } from '../../../db/paging.js';
import type { InvoiceStatus, InvoicingInvoicesTable, InvoicingLineItemsTable } from '../tables.js';
import { anyOf, asText, id, invoiceCounters, invoices, lineItems, minor, type InvoicingDb } from './db.js';

export interface InvoiceRow {
  id: string;
  number: string;
  customer_id: string;
  status: InvoiceStatus;
  currency: string;
  issue_date: string;
  due_date: string;
  notes: string | null;
  subtotal_minor: bigint;
  tax_total_minor: bigint;
  total_minor: bigint;
  amount_paid_minor: bigint;
  amount_refunded_minor: bigint;
  finalized_at: Date | null;
  paid_at: Date | null;
  voided_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

// Invoice numbers

/**
 * The next invoice number of the tenant and mode: one upsert on the counter row, inside
 * the caller's transaction. The row stays locked until that transaction ends, so two
 * creates never get the same number, and a rolled-back create gives its number back.
 */
export async function nextInvoiceNumber(db: InvoicingDb, owner: Owner): Promise<bigint> {
  const row = await invoiceCounters
    .insert(db, owner, { last_number: '1' })
    // The counter's primary key is its owner (tenant and mode): one row each.
    .onConflict((conflict) => conflict.constraint('invoicing_invoice_counters_pkey').doUpdateSet({ last_number: sql<string>`invoicing_invoice_counters.last_number + 1` }))
    .returning('last_number')
    .executeTakeFirstOrThrow();
  return minor(row.last_number);
}

// Invoices

const INVOICE_COLUMNS = [
  'id',
  'number',
  'customer_id',
  'status',
  'currency',
  'notes',
  'subtotal_minor',
  'tax_total_minor',
  'total_minor',
  'amount_paid_minor',
  'amount_refunded_minor',
  'finalized_at',
  'paid_at',
  'voided_at',
  'created_at',
  'updated_at',
] as const;

const issueDate = sql<string>`to_char(issue_date, 'YYYY-MM-DD')`.as('issue_date');
const dueDate = sql<string>`to_char(due_date, 'YYYY-MM-DD')`.as('due_date');
const INVOICE_SELECTION = [...INVOICE_COLUMNS, issueDate, dueDate] as const;

/** An invoice as read: ids and amounts as the driver hands them over (see `id` and `minor`). */
export type StoredInvoice = Pick<OwnedRow<InvoicingInvoicesTable>, (typeof INVOICE_COLUMNS)[number]> & { issue_date: string; due_date: string };

function toInvoice(row: StoredInvoice): InvoiceRow {
  return {
    ...row,
    id: id(row.id),
    customer_id: id(row.customer_id),
    subtotal_minor: minor(row.subtotal_minor),
    tax_total_minor: minor(row.tax_total_minor),
    total_minor: minor(row.total_minor),
    amount_paid_minor: minor(row.amount_paid_minor),
    amount_refunded_minor: minor(row.amount_refunded_minor),
  };
}

export interface NewInvoice {
  number: string;
  customer_id: string;
  status: InvoiceStatus;
  currency: string;
  issue_date: string;
  due_date: string;
  notes: string | null;
  subtotal_minor: bigint;
  tax_total_minor: bigint;
  total_minor: bigint;
  created_at: Date;
  updated_at: Date;
}

export interface InvoiceChanges {
  customer_id?: string;
  status?: InvoiceStatus;
  currency?: string;
  issue_date?: string;
  due_date?: string;
  notes?: string | null;
  subtotal_minor?: bigint;
  tax_total_minor?: bigint;
  total_minor?: bigint;
  amount_paid_minor?: bigint;
  amount_refunded_minor?: bigint;
  finalized_at?: Date | null;
  paid_at?: Date | null;
  voided_at?: Date | null;
  updated_at: Date;
}

export async function insertInvoice(db: InvoicingDb, owner: Owner, row: NewInvoice): Promise<InvoiceRow> {
  const inserted = await invoices
    .insert(db, owner, { ...asText(row), amount_paid_minor: '0', amount_refunded_minor: '0' })
    .returning(INVOICE_SELECTION)
    .executeTakeFirstOrThrow();
  return toInvoice(inserted);
}

const invoiceById = invoices.statement((from, values: { id: string }) => from.select(INVOICE_SELECTION).where('id', '=', values.id));
const invoiceByIdForUpdate = invoices.statement((from, values: { id: string }) => from.select(INVOICE_SELECTION).where('id', '=', values.id).forUpdate());

/** By id; `forUpdate` locks it for a change of the invoice or of what was paid or refunded on it. */
export async function findInvoice(db: InvoicingDb, owner: Owner, invoiceId: string, options: { forUpdate?: boolean } = {}): Promise<InvoiceRow | undefined> {
  const row = await (options.forUpdate ? invoiceByIdForUpdate : invoiceById).first(db, owner, { id: invoiceId });
  return row && toInvoice(row);
}

const invoiceList = invoices.list<{ status?: InvoiceStatus; customerId?: string }, StoredInvoice>({
  filters: {
    status: (eb, status) => eb('status', '=', status),
    customerId: (eb, customerId) => eb('customer_id', '=', customerId),
  },
  select: (from) => from.select(INVOICE_SELECTION).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

/**
 * A page of invoices as read, for display only: ids and amounts as the driver reads them
 * (`StoredInvoice`), not converted into `InvoiceRow`, so a page costs no copy of its rows.
 */
export async function listInvoices(
  db: InvoicingDb,
  owner: Owner,
  filters: { status?: InvoiceStatus; customerId?: string },
  page: PageRequest,
): Promise<{ rows: StoredInvoice[]; total: number }> {
  return invoiceList.page(db, owner, filters, page);
}

export async function updateInvoice(db: InvoicingDb, owner: Owner, invoiceId: string, changes: InvoiceChanges): Promise<InvoiceRow> {
  const row = await invoices.update(db, owner).set(asText(changes)).where('id', '=', invoiceId).returning(INVOICE_SELECTION).executeTakeFirstOrThrow();
  return toInvoice(row);
}

/** Deletes a draft (its lines go with it); false when there is no such draft. */
export async function deleteDraftInvoice(db: InvoicingDb, owner: Owner, invoiceId: string): Promise<boolean> {
  const row = await invoices.delete(db, owner).where('id', '=', invoiceId).where('status', '=', 'draft').returning('id').executeTakeFirst();
  return row !== undefined;
}

// Line items

const LINE_COLUMNS = ['id', 'invoice_id', 'position', 'description', 'quantity', 'unit_price', 'tax_rate', 'subtotal_minor', 'tax_minor'] as const;

/**
 * A line as read (ids and amounts as the driver hands them over): lines are only shown and
 * re-priced from their text fields, never computed with, so they are not converted.
 */
export type LineItemRow = Pick<OwnedRow<InvoicingLineItemsTable>, (typeof LINE_COLUMNS)[number]>;

export interface NewLine {
  position: number;
  description: string;
  quantity: string;
  unit_price: string;
  tax_rate: string | null;
  subtotal_minor: bigint;
  tax_minor: bigint;
}

export async function replaceLines(db: InvoicingDb, owner: Owner, invoiceId: string, lines: readonly NewLine[]): Promise<void> {
  await lineItems.delete(db, owner).where('invoice_id', '=', invoiceId).execute();
  if (lines.length === 0) return;
  await lineItems
    .insert(
      db,
      owner,
      lines.map((line) => ({ ...asText(line), invoice_id: invoiceId })),
    )
    .execute();
}

const linesOfInvoices = lineItems.statement((from, values: { invoiceIds: readonly string[] }) =>
  from.select(LINE_COLUMNS).where('invoice_id', '=', anyOf(values.invoiceIds)).orderBy('invoice_id').orderBy('position'),
);

/** The lines of the given invoices, in invoice and position order. */
export async function findLines(db: InvoicingDb, owner: Owner, invoiceIds: readonly string[]): Promise<LineItemRow[]> {
  if (invoiceIds.length === 0) return [];
  return linesOfInvoices.all(db, owner, { invoiceIds });
}
