import type { OwnedInsert, OwnedRow, Owner } from '../../../db/owned.js';
import type { PageRequest } from '../../../db/paging.js';
import { containsPattern } from '../../../lib/search.js';
import type { InvoicingCustomersTable } from '../tables.js';
import { customers, id, type InvoicingDb } from './db.js';

export interface CustomerRow extends Omit<OwnedRow<InvoicingCustomersTable>, 'id'> {
  id: string;
}

export type NewCustomer = OwnedInsert<InvoicingCustomersTable>;

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

type RawCustomer = Pick<OwnedRow<InvoicingCustomersTable>, (typeof CUSTOMER_COLUMNS)[number]>;

function toCustomer(row: RawCustomer): CustomerRow {
  return { ...row, id: id(row.id) };
}

export async function insertCustomer(db: InvoicingDb, owner: Owner, row: NewCustomer): Promise<CustomerRow> {
  return toCustomer(await customers.insert(db, owner, row).returning(CUSTOMER_COLUMNS).executeTakeFirstOrThrow());
}

const customerById = customers.statement((from, values: { id: string }) => from.select(CUSTOMER_COLUMNS).where('id', '=', values.id));
const customerByIdForUpdate = customers.statement((from, values: { id: string }) => from.select(CUSTOMER_COLUMNS).where('id', '=', values.id).forUpdate());
const customerByIdForShare = customers.statement((from, values: { id: string }) => from.select(CUSTOMER_COLUMNS).where('id', '=', values.id).forShare());

/** By id; `lock: 'update'` for edits of the customer, `'share'` to invoice it while an archive waits. */
export async function findCustomer(db: InvoicingDb, owner: Owner, customerId: string, options: { lock?: 'update' | 'share' } = {}): Promise<CustomerRow | undefined> {
  const statement = options.lock === 'update' ? customerByIdForUpdate : options.lock === 'share' ? customerByIdForShare : customerById;
  const row = await statement.first(db, owner, { id: customerId });
  return row && toCustomer(row);
}

const customerList = customers.list<{ pattern?: string; isActive?: boolean }, RawCustomer>({
  filters: {
    pattern: (eb, pattern) => eb.or([eb('display_name', 'ilike', pattern), eb('email', 'ilike', pattern)]),
    isActive: (eb, isActive) => eb('is_active', '=', isActive),
  },
  select: (from) => from.select(CUSTOMER_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listCustomers(db: InvoicingDb, owner: Owner, filters: { search?: string; isActive?: boolean }, page: PageRequest) {
  const pattern = filters.search ? containsPattern(filters.search) : undefined;
  const { rows, total } = await customerList.page(db, owner, { pattern, isActive: filters.isActive }, page);
  return { rows: rows.map(toCustomer), total };
}

export async function updateCustomer(db: InvoicingDb, owner: Owner, customerId: string, changes: Partial<NewCustomer>): Promise<CustomerRow> {
  const row = await customers.update(db, owner).set(changes).where('id', '=', customerId).returning(CUSTOMER_COLUMNS).executeTakeFirstOrThrow();
  return toCustomer(row);
}
