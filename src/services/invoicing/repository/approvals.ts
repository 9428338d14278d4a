import { sql } from 'kysely';
import type { OwnedRow, Owner } from '../../../db/owned.js';
import type { PageRequest } from '../../../db/paging.js';
import type { ApprovalStatus, InvoicingApprovalPoliciesTable, InvoicingApprovalsTable } from '../tables.js';
import { approvalPolicies, approvals, asText, id, minor, type InvoicingDb } from './db.js';

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

// Approval policies

const POLICY_COLUMNS = ['id', 'action', 'min_amount_minor', 'currency', 'created_at'] as const;

type RawPolicy = Pick<OwnedRow<InvoicingApprovalPoliciesTable>, (typeof POLICY_COLUMNS)[number]>;

function toPolicy(row: RawPolicy): PolicyRow {
  return { ...row, id: id(row.id), min_amount_minor: minor(row.min_amount_minor) };
}

export async function insertPolicy(
  db: InvoicingDb,
  owner: Owner,
  policy: { action: 'refund'; min_amount_minor: bigint; currency: string | null; created_at: Date },
): Promise<PolicyRow> {
  const row = await approvalPolicies.insert(db, owner, asText(policy)).returning(POLICY_COLUMNS).executeTakeFirstOrThrow();
  return toPolicy(row);
}

const policyById = approvalPolicies.statement((from, values: { id: string }) => from.select(POLICY_COLUMNS).where('id', '=', values.id));

export async function findPolicy(db: InvoicingDb, owner: Owner, policyId: string): Promise<PolicyRow | undefined> {
  const row = await policyById.first(db, owner, { id: policyId });
  return row && toPolicy(row);
}

const policyList = approvalPolicies.list<Record<string, never>, RawPolicy>({
  filters: {},
  select: (from) => from.select(POLICY_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listPolicies(db: InvoicingDb, owner: Owner, page: PageRequest) {
  const { rows, total } = await policyList.page(db, owner, {}, page);
  return { rows: rows.map(toPolicy), total };
}

export async function deletePolicy(db: InvoicingDb, owner: Owner, policyId: string): Promise<boolean> {
  const row = await approvalPolicies.delete(db, owner).where('id', '=', policyId).returning('id').executeTakeFirst();
  return row !== undefined;
}

const policyForRefund = approvalPolicies.statement((from, values: { amountMinor: string; currency: string }) =>
  from
    .select(POLICY_COLUMNS)
    .where('action', '=', 'refund')
    .where('min_amount_minor', '<=', values.amountMinor)
    .where((eb) => eb.or([eb('currency', 'is', null), eb('currency', '=', values.currency)]))
    .orderBy('min_amount_minor', 'desc')
    .orderBy(sql`currency is null`)
    .orderBy('id')
    .limit(1),
);

/**
 * The policy a refund of `amountMinor` in `currency` falls under, if any: the one with the
 * highest threshold at or below the amount, a currency-specific one before a generic one.
 */
export async function findMatchingPolicy(db: InvoicingDb, owner: Owner, amountMinor: bigint, currency: string): Promise<PolicyRow | undefined> {
  const row = await policyForRefund.first(db, owner, { amountMinor: amountMinor.toString(), currency });
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

type RawApproval = Pick<OwnedRow<InvoicingApprovalsTable>, (typeof APPROVAL_COLUMNS)[number]>;

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
  const row = await approvals
    .insert(db, owner, { ...asText(approval), action: 'refund', status: 'pending' })
    .returning(APPROVAL_COLUMNS)
    .executeTakeFirstOrThrow();
  return toApproval(row);
}

const approvalById = approvals.statement((from, values: { id: string }) => from.select(APPROVAL_COLUMNS).where('id', '=', values.id));
const approvalByIdForUpdate = approvals.statement((from, values: { id: string }) => from.select(APPROVAL_COLUMNS).where('id', '=', values.id).forUpdate());

/** By id; `forUpdate` locks it for a decision (the first lock of every refund path that takes it). */
export async function findApproval(db: InvoicingDb, owner: Owner, approvalId: string, options: { forUpdate?: boolean } = {}): Promise<ApprovalRow | undefined> {
  const row = await (options.forUpdate ? approvalByIdForUpdate : approvalById).first(db, owner, { id: approvalId });
  return row && toApproval(row);
}

const approvalList = approvals.list<{ status?: ApprovalStatus }, RawApproval>({
  filters: { status: (eb, status) => eb('status', '=', status) },
  select: (from) => from.select(APPROVAL_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listApprovals(db: InvoicingDb, owner: Owner, filters: { status?: ApprovalStatus }, page: PageRequest) {
  const { rows, total } = await approvalList.page(db, owner, filters, page);
  return { rows: rows.map(toApproval), total };
}

/** Records the decision of a pending approval (the status condition makes it once). */
export async function decideApproval(
  db: InvoicingDb,
  owner: Owner,
  approvalId: string,
  decision: { status: 'approved' | 'rejected'; decided_by_key_id: string; decided_at: Date; decision_note: string | null; updated_at: Date },
): Promise<ApprovalRow> {
  const row = await approvals.update(db, owner).set(decision).where('id', '=', approvalId).where('status', '=', 'pending').returning(APPROVAL_COLUMNS).executeTakeFirstOrThrow();
  return toApproval(row);
}
