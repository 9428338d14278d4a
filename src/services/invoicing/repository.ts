import { sql, type Kysely, type Selectable } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import type { Owner } from '../../platform/context.js';
import type { Mode } from '../../db/types.js';
import { containsPattern } from '../../lib/search.js';
import { selectPage } from '../../db/paging.js';
import type { PageRequest } from '../../platform/pagination/index.js';
import type {
  ApprovalStatus,
  InvoiceStatus,
  InvoicingApprovalPoliciesTable,
  InvoicingApprovalsTable,
  InvoicingCustomersTable,
  InvoicingInvoicesTable,
  InvoicingLineItemsTable,
  InvoicingPaymentsTable,
  InvoicingRefundsTable,
  InvoicingTables,
} from './tables.js';

export type { Owner };

export type InvoicingDb = Kysely<InvoicingTables>;

export function invoicingDb(db: Db): InvoicingDb {
  return serviceDb(db);
}

/*
 * Rows as the service sees them: ids as decimal strings (exact for any bigint), money as
 * BigInt minor units, dates as YYYY-MM-DD. node-postgres and the embedded database read
 * bigint differently (string vs number), so every read goes through these normalisers.
 */

type Raw = string | number | bigint;
const id = (value: Raw): string => String(value);
const minor = (value: Raw): bigint => BigInt(value);

export interface CustomerRow extends Omit<Selectable<InvoicingCustomersTable>, 'id' | 'tenant_id' | 'mode'> {
  id: string;
}

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

export interface LineItemRow {
  id: string;
  invoice_id: string;
  position: number;
  description: string;
  quantity: string;
  unit_price: string;
  tax_rate: string | null;
  subtotal_minor: bigint;
  tax_minor: bigint;
}

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

export interface PolicyRow {
  id: string;
  action: 'refund';
  min_amount_minor: bigint;
  currency: string | null;
  created_at: Date;
}

export interface ApprovalRow {
  id: string;
  action: 'refund';
  status: ApprovalStatus;
  policy_id: string | null;
  invoice_id: string;
  customer_payment_id: string;
  amount_minor: bigint;
  currency: string;
  method: string;
  reason: string | null;
  requested_by_key_id: string;
  decided_by_key_id: string | null;
  decided_at: Date | null;
  decision_note: string | null;
  created_at: Date;
  updated_at: Date;
}

export { isUniqueViolation } from '../../db/errors.js';

// Customers

const CUSTOMER_COLUMNS = [
  'id',
  'display_name',
  'email',
  'phone',
  'billing_address_line1',
  'billing_city',
  'billing_postal_code',
  'billing_country',
  'tax_id',
  'default_payment_terms_days',
  'default_currency',
  'notes',
  'is_active',
  'created_at',
  'updated_at',
] as const;

type RawCustomer = Pick<Selectable<InvoicingCustomersTable>, (typeof CUSTOMER_COLUMNS)[number]>;

function toCustomer(row: RawCustomer): CustomerRow {
  return { ...row, id: id(row.id) };
}

export type NewCustomer = Omit<InvoicingCustomersTable, 'id'>;

export async function insertCustomer(db: InvoicingDb, row: NewCustomer): Promise<CustomerRow> {
  return toCustomer(await db.insertInto('invoicing_customers').values(row).returning(CUSTOMER_COLUMNS).executeTakeFirstOrThrow());
}

export async function findCustomer(
  db: InvoicingDb,
  owner: Owner,
  customerId: string,
  options: { lock?: 'update' | 'share' } = {},
): Promise<CustomerRow | undefined> {
  let query = db
    .selectFrom('invoicing_customers')
    .select(CUSTOMER_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', customerId as never);
  if (options.lock === 'update') query = query.forUpdate();
  if (options.lock === 'share') query = query.forShare();
  const row = await query.executeTakeFirst();
  return row && toCustomer(row);
}

export async function listCustomers(db: InvoicingDb, owner: Owner, filters: { search?: string; isActive?: boolean }, page: PageRequest) {
  let base = db.selectFrom('invoicing_customers').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.search) {
    const pattern = containsPattern(filters.search);
    base = base.where((eb) => eb.or([eb('display_name', 'ilike', pattern), eb('email', 'ilike', pattern)]));
  }
  if (filters.isActive !== undefined) base = base.where('is_active', '=', filters.isActive);
  const { rows, total } = await selectPage(db, base, base.select(CUSTOMER_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
  return { rows: rows.map(toCustomer), total };
}

export async function updateCustomer(db: InvoicingDb, owner: Owner, customerId: string, changes: Partial<NewCustomer>): Promise<CustomerRow> {
  const row = await db
    .updateTable('invoicing_customers')
    .set(changes)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', customerId as never)
    .returning(CUSTOMER_COLUMNS)
    .executeTakeFirstOrThrow();
  return toCustomer(row);
}

// Invoice numbers

/**
 * The next invoice number of the tenant and mode: one upsert on the counter row, inside
 * the caller's transaction. The row stays locked until that transaction ends, so two
 * creates never get the same number, and a rolled-back create gives its number back.
 */
export async function nextInvoiceNumber(db: InvoicingDb, owner: Owner): Promise<bigint> {
  const row = await db
    .insertInto('invoicing_invoice_counters')
    .values({ tenant_id: owner.tenantId, mode: owner.mode, last_number: '1' })
    .onConflict((conflict) =>
      conflict.columns(['tenant_id', 'mode']).doUpdateSet({ last_number: sql<string>`invoicing_invoice_counters.last_number + 1` }),
    )
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

type RawInvoice = Pick<Selectable<InvoicingInvoicesTable>, (typeof INVOICE_COLUMNS)[number]> & { issue_date: string; due_date: string };

function toInvoice(row: RawInvoice): InvoiceRow {
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
  tenant_id: string;
  mode: Mode;
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

type BigintAsText<V> = V extends bigint ? string : V;

/** Bigint-valued fields go to the database as decimal text. */
function asText<T extends object>(values: T): { [K in keyof T]: BigintAsText<T[K]> } {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined) out[key] = typeof value === 'bigint' ? value.toString() : value;
  }
  return out as never;
}

export async function insertInvoice(db: InvoicingDb, row: NewInvoice): Promise<InvoiceRow> {
  const inserted = await db
    .insertInto('invoicing_invoices')
    .values({ ...asText(row), amount_paid_minor: '0', amount_refunded_minor: '0' })
    .returning([...INVOICE_COLUMNS, issueDate, dueDate])
    .executeTakeFirstOrThrow();
  return toInvoice(inserted);
}

export async function findInvoice(db: InvoicingDb, owner: Owner, invoiceId: string, options: { forUpdate?: boolean } = {}): Promise<InvoiceRow | undefined> {
  let query = db
    .selectFrom('invoicing_invoices')
    .select([...INVOICE_COLUMNS, issueDate, dueDate])
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', invoiceId as never);
  if (options.forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row && toInvoice(row);
}

export async function listInvoices(db: InvoicingDb, owner: Owner, filters: { status?: InvoiceStatus; customerId?: string }, page: PageRequest) {
  let base = db.selectFrom('invoicing_invoices').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.status) base = base.where('status', '=', filters.status);
  if (filters.customerId) base = base.where('customer_id', '=', filters.customerId);
  const { rows, total } = await selectPage(db, base, base.select([...INVOICE_COLUMNS, issueDate, dueDate]).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
  return { rows: rows.map(toInvoice), total };
}

export async function updateInvoice(db: InvoicingDb, owner: Owner, invoiceId: string, changes: InvoiceChanges): Promise<InvoiceRow> {
  const row = await db
    .updateTable('invoicing_invoices')
    .set(asText(changes))
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', invoiceId as never)
    .returning([...INVOICE_COLUMNS, issueDate, dueDate])
    .executeTakeFirstOrThrow();
  return toInvoice(row);
}

/** Deletes a draft (its lines go with it); undefined when there is no such draft. */
export async function deleteDraftInvoice(db: InvoicingDb, owner: Owner, invoiceId: string): Promise<boolean> {
  const row = await db
    .deleteFrom('invoicing_invoices')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', invoiceId as never)
    .where('status', '=', 'draft')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

// Line items

const LINE_COLUMNS = ['id', 'invoice_id', 'position', 'description', 'quantity', 'unit_price', 'tax_rate', 'subtotal_minor', 'tax_minor'] as const;

type RawLine = Pick<Selectable<InvoicingLineItemsTable>, (typeof LINE_COLUMNS)[number]>;

function toLine(row: RawLine): LineItemRow {
  return { ...row, id: id(row.id), invoice_id: id(row.invoice_id), subtotal_minor: minor(row.subtotal_minor), tax_minor: minor(row.tax_minor) };
}

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
  await db
    .deleteFrom('invoicing_line_items')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('invoice_id', '=', invoiceId as never)
    .execute();
  if (lines.length === 0) return;
  await db
    .insertInto('invoicing_line_items')
    .values(lines.map((line) => ({ ...asText(line), tenant_id: owner.tenantId, mode: owner.mode, invoice_id: invoiceId })))
    .execute();
}

export async function findLines(db: InvoicingDb, owner: Owner, invoiceIds: readonly string[]): Promise<LineItemRow[]> {
  if (invoiceIds.length === 0) return [];
  const rows = await db
    .selectFrom('invoicing_line_items')
    .select(LINE_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('invoice_id', 'in', invoiceIds as never[])
    .orderBy('invoice_id')
    .orderBy('position')
    .execute();
  return rows.map(toLine);
}

// Payments

const PAYMENT_COLUMNS = [
  'id',
  'invoice_id',
  'amount_minor',
  'refunded_minor',
  'reserved_minor',
  'currency',
  'method',
  'reference',
  'paid_at',
  'created_at',
  'updated_at',
] as const;

type RawPayment = Pick<Selectable<InvoicingPaymentsTable>, (typeof PAYMENT_COLUMNS)[number]>;

function toPayment(row: RawPayment): PaymentRow {
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
  const row = await db
    .insertInto('invoicing_payments')
    .values({ ...asText(payment), tenant_id: owner.tenantId, mode: owner.mode, refunded_minor: '0', reserved_minor: '0' })
    .returning(PAYMENT_COLUMNS)
    .executeTakeFirstOrThrow();
  return toPayment(row);
}

/** A payment of the given invoice; `forUpdate` locks it for a refund or a reservation. */
export async function findPayment(
  db: InvoicingDb,
  owner: Owner,
  invoiceId: string,
  paymentId: string,
  options: { forUpdate?: boolean } = {},
): Promise<PaymentRow | undefined> {
  let query = db
    .selectFrom('invoicing_payments')
    .select(PAYMENT_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('invoice_id', '=', invoiceId as never)
    .where('id', '=', paymentId as never);
  if (options.forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row && toPayment(row);
}

export async function findPayments(db: InvoicingDb, owner: Owner, invoiceIds: readonly string[]): Promise<PaymentRow[]> {
  if (invoiceIds.length === 0) return [];
  const rows = await db
    .selectFrom('invoicing_payments')
    .select(PAYMENT_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('invoice_id', 'in', invoiceIds as never[])
    .orderBy('invoice_id')
    .orderBy('id')
    .execute();
  return rows.map(toPayment);
}

/**
 * Moves a payment's refunded and reserved amounts by the given deltas. The table's CHECK
 * (refunded + reserved <= amount) is the last line of defence against overdrawing.
 */
export async function adjustPaymentRefunds(
  db: InvoicingDb,
  owner: Owner,
  paymentId: string,
  delta: { refunded: bigint; reserved: bigint },
  updatedAt: Date,
): Promise<PaymentRow> {
  const row = await db
    .updateTable('invoicing_payments')
    .set({
      refunded_minor: sql<string>`refunded_minor + ${delta.refunded.toString()}::bigint`,
      reserved_minor: sql<string>`reserved_minor + ${delta.reserved.toString()}::bigint`,
      updated_at: updatedAt,
    })
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', paymentId as never)
    .returning(PAYMENT_COLUMNS)
    .executeTakeFirstOrThrow();
  return toPayment(row);
}

// Refunds

const REFUND_COLUMNS = ['id', 'invoice_id', 'customer_payment_id', 'amount_minor', 'status', 'currency', 'method', 'reason', 'approval_id', 'created_at'] as const;

type RawRefund = Pick<Selectable<InvoicingRefundsTable>, (typeof REFUND_COLUMNS)[number]>;

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

export const REFUND_APPROVAL_INDEX = 'invoicing_refunds_approval';

export async function insertRefund(db: InvoicingDb, owner: Owner, refund: NewRefund): Promise<RefundRow> {
  const row = await db
    .insertInto('invoicing_refunds')
    .values({ ...asText(refund), tenant_id: owner.tenantId, mode: owner.mode, status: 'succeeded' })
    .returning(REFUND_COLUMNS)
    .executeTakeFirstOrThrow();
  return toRefund(row);
}

export async function findRefund(db: InvoicingDb, owner: Owner, refundId: string): Promise<RefundRow | undefined> {
  const row = await db
    .selectFrom('invoicing_refunds')
    .select(REFUND_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', refundId as never)
    .executeTakeFirst();
  return row && toRefund(row);
}

export async function findRefundsByApproval(db: InvoicingDb, owner: Owner, approvalIds: readonly string[]): Promise<RefundRow[]> {
  if (approvalIds.length === 0) return [];
  const rows = await db
    .selectFrom('invoicing_refunds')
    .select(REFUND_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('approval_id', 'in', approvalIds as never[])
    .execute();
  return rows.map(toRefund);
}

export async function listRefunds(db: InvoicingDb, owner: Owner, filters: { invoiceId?: string; paymentId?: string }, page: PageRequest) {
  let base = db.selectFrom('invoicing_refunds').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.invoiceId) base = base.where('invoice_id', '=', filters.invoiceId);
  if (filters.paymentId) base = base.where('customer_payment_id', '=', filters.paymentId);
  const { rows, total } = await selectPage(db, base, base.select(REFUND_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
  return { rows: rows.map(toRefund), total };
}

// Approval policies

const POLICY_COLUMNS = ['id', 'action', 'min_amount_minor', 'currency', 'created_at'] as const;

type RawPolicy = Pick<Selectable<InvoicingApprovalPoliciesTable>, (typeof POLICY_COLUMNS)[number]>;

function toPolicy(row: RawPolicy): PolicyRow {
  return { ...row, id: id(row.id), min_amount_minor: minor(row.min_amount_minor) };
}

export async function insertPolicy(
  db: InvoicingDb,
  owner: Owner,
  policy: { action: 'refund'; min_amount_minor: bigint; currency: string | null; created_at: Date },
): Promise<PolicyRow> {
  const row = await db
    .insertInto('invoicing_approval_policies')
    .values({ ...asText(policy), tenant_id: owner.tenantId, mode: owner.mode })
    .returning(POLICY_COLUMNS)
    .executeTakeFirstOrThrow();
  return toPolicy(row);
}

export async function findPolicy(db: InvoicingDb, owner: Owner, policyId: string): Promise<PolicyRow | undefined> {
  const row = await db
    .selectFrom('invoicing_approval_policies')
    .select(POLICY_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', policyId as never)
    .executeTakeFirst();
  return row && toPolicy(row);
}

export async function listPolicies(db: InvoicingDb, owner: Owner, page: PageRequest) {
  const base = db.selectFrom('invoicing_approval_policies').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  const { rows, total } = await selectPage(db, base, base.select(POLICY_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
  return { rows: rows.map(toPolicy), total };
}

export async function deletePolicy(db: InvoicingDb, owner: Owner, policyId: string): Promise<boolean> {
  const row = await db
    .deleteFrom('invoicing_approval_policies')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', policyId as never)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The policy a refund of `amountMinor` in `currency` falls under, if any: the one with the
 * highest threshold at or below the amount, a currency-specific one before a generic one.
 */
export async function findMatchingPolicy(db: InvoicingDb, owner: Owner, amountMinor: bigint, currency: string): Promise<PolicyRow | undefined> {
  const row = await db
    .selectFrom('invoicing_approval_policies')
    .select(POLICY_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('action', '=', 'refund')
    .where('min_amount_minor', '<=', amountMinor.toString())
    .where((eb) => eb.or([eb('currency', 'is', null), eb('currency', '=', currency)]))
    .orderBy('min_amount_minor', 'desc')
    .orderBy(sql`currency is null`)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row && toPolicy(row);
}

// Approvals

const APPROVAL_COLUMNS = [
  'id',
  'action',
  'status',
  'policy_id',
  'invoice_id',
  'customer_payment_id',
  'amount_minor',
  'currency',
  'method',
  'reason',
  'requested_by_key_id',
  'decided_by_key_id',
  'decided_at',
  'decision_note',
  'created_at',
  'updated_at',
] as const;

type RawApproval = Pick<Selectable<InvoicingApprovalsTable>, (typeof APPROVAL_COLUMNS)[number]>;

function toApproval(row: RawApproval): ApprovalRow {
  return {
    ...row,
    id: id(row.id),
    policy_id: row.policy_id === null ? null : id(row.policy_id),
    invoice_id: id(row.invoice_id),
    customer_payment_id: id(row.customer_payment_id),
    amount_minor: minor(row.amount_minor),
  };
}

export interface NewApproval {
  policy_id: string;
  invoice_id: string;
  customer_payment_id: string;
  amount_minor: bigint;
  currency: string;
  method: string;
  reason: string | null;
  requested_by_key_id: string;
  created_at: Date;
  updated_at: Date;
}

export async function insertApproval(db: InvoicingDb, owner: Owner, approval: NewApproval): Promise<ApprovalRow> {
  const row = await db
    .insertInto('invoicing_approvals')
    .values({ ...asText(approval), tenant_id: owner.tenantId, mode: owner.mode, action: 'refund', status: 'pending' })
    .returning(APPROVAL_COLUMNS)
    .executeTakeFirstOrThrow();
  return toApproval(row);
}

export async function findApproval(db: InvoicingDb, owner: Owner, approvalId: string, options: { forUpdate?: boolean } = {}): Promise<ApprovalRow | undefined> {
  let query = db
    .selectFrom('invoicing_approvals')
    .select(APPROVAL_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', approvalId as never);
  if (options.forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row && toApproval(row);
}

export async function listApprovals(db: InvoicingDb, owner: Owner, filters: { status?: ApprovalStatus }, page: PageRequest) {
  let base = db.selectFrom('invoicing_approvals').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.status) base = base.where('status', '=', filters.status);
  const { rows, total } = await selectPage(db, base, base.select(APPROVAL_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
  return { rows: rows.map(toApproval), total };
}

export async function decideApproval(
  db: InvoicingDb,
  owner: Owner,
  approvalId: string,
  decision: { status: 'approved' | 'rejected'; decided_by_key_id: string; decided_at: Date; decision_note: string | null; updated_at: Date },
): Promise<ApprovalRow> {
  const row = await db
    .updateTable('invoicing_approvals')
    .set(decision)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', approvalId as never)
    .where('status', '=', 'pending')
    .returning(APPROVAL_COLUMNS)
    .executeTakeFirstOrThrow();
  return toApproval(row);
}
