import type { Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import type { Owner } from '../../platform/context.js';
import { containsPattern } from '../../lib/search.js';
import type { PageRequest } from '../../platform/pagination/index.js';
import type { CrmCompaniesTable, CrmContactsTable, CrmTables } from './tables.js';

export type { Owner };

export type CompanyRow = Omit<CrmCompaniesTable, 'tenant_id' | 'mode'>;
export type ContactRow = Omit<CrmContactsTable, 'tenant_id' | 'mode'>;

const COMPANY_COLUMNS = ['id', 'name', 'domain', 'created_at', 'updated_at'] as const;
const CONTACT_COLUMNS = ['id', 'name', 'email', 'phone', 'company_id', 'created_at', 'updated_at'] as const;

export type CrmDb = Kysely<CrmTables>;

export function crmDb(db: Db): CrmDb {
  return serviceDb(db);
}

export function insertCompany(db: CrmDb, row: CrmCompaniesTable): Promise<CompanyRow> {
  return db.insertInto('crm_companies').values(row).returning(COMPANY_COLUMNS).executeTakeFirstOrThrow();
}

export function findCompany(db: CrmDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<CompanyRow | undefined> {
  let query = db
    .selectFrom('crm_companies')
    .select(COMPANY_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export function findCompanies(db: CrmDb, owner: Owner, ids: string[]): Promise<CompanyRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('crm_companies')
    .select(COMPANY_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', 'in', ids)
    .execute();
}

export async function listCompanies(db: CrmDb, owner: Owner, filters: { search?: string }, page: PageRequest) {
  let base = db.selectFrom('crm_companies').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.search) {
    const pattern = containsPattern(filters.search);
    base = base.where((eb) => eb.or([eb('name', 'ilike', pattern), eb('domain', 'ilike', pattern)]));
  }
  const [rows, count] = await Promise.all([
    base.select(COMPANY_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

export function updateCompany(db: CrmDb, owner: Owner, id: string, changes: Partial<CrmCompaniesTable>): Promise<CompanyRow> {
  return db
    .updateTable('crm_companies')
    .set(changes)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .returning(COMPANY_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function insertContact(db: CrmDb, row: CrmContactsTable): Promise<ContactRow> {
  return db.insertInto('crm_contacts').values(row).returning(CONTACT_COLUMNS).executeTakeFirstOrThrow();
}

export function findContact(db: CrmDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<ContactRow | undefined> {
  let query = db
    .selectFrom('crm_contacts')
    .select(CONTACT_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export function findContacts(db: CrmDb, owner: Owner, ids: string[]): Promise<ContactRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('crm_contacts')
    .select(CONTACT_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', 'in', ids)
    .execute();
}

export async function listContacts(db: CrmDb, owner: Owner, filters: { search?: string; company_id?: string }, page: PageRequest) {
  let base = db.selectFrom('crm_contacts').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.search) {
    const pattern = containsPattern(filters.search);
    base = base.where((eb) => eb.or([eb('name', 'ilike', pattern), eb('email', 'ilike', pattern)]));
  }
  if (filters.company_id) base = base.where('company_id', '=', filters.company_id);
  const [rows, count] = await Promise.all([
    base.select(CONTACT_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

export function updateContact(db: CrmDb, owner: Owner, id: string, changes: Partial<CrmContactsTable>): Promise<ContactRow> {
  return db
    .updateTable('crm_contacts')
    .set(changes)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .returning(CONTACT_COLUMNS)
    .executeTakeFirstOrThrow();
}
