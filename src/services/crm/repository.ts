import type { Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { ownedTables, type OwnedInsert, type OwnedRow, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { containsPattern } from '../../lib/search.js';
import type { CrmCompaniesTable, CrmContactsTable, CrmTables } from './tables.js';

export type CompanyRow = OwnedRow<CrmCompaniesTable>;
export type ContactRow = OwnedRow<CrmContactsTable>;

const COMPANY_COLUMNS = ['id', 'name', 'domain', 'created_at', 'updated_at'] as const;
const CONTACT_COLUMNS = ['id', 'name', 'email', 'phone', 'company_id', 'created_at', 'updated_at'] as const;

export type CrmDb = Kysely<CrmTables>;

export function crmDb(db: Db): CrmDb {
  return serviceDb(db);
}

const owned = ownedTables<CrmTables>();
const companies = owned('crm_companies');
const contacts = owned('crm_contacts');

// Companies

export function insertCompany(db: CrmDb, owner: Owner, row: OwnedInsert<CrmCompaniesTable>): Promise<CompanyRow> {
  return companies.insert(db, owner, row).returning(COMPANY_COLUMNS).executeTakeFirstOrThrow();
}

const companyById = companies.statement((from, values: { id: string }) => from.select(COMPANY_COLUMNS).where('id', '=', values.id));
const companyByIdForUpdate = companies.statement((from, values: { id: string }) => from.select(COMPANY_COLUMNS).where('id', '=', values.id).forUpdate());

export function findCompany(db: CrmDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<CompanyRow | undefined> {
  return (options.forUpdate ? companyByIdForUpdate : companyById).first(db, owner, { id });
}

export function findCompanies(db: CrmDb, owner: Owner, ids: string[]): Promise<CompanyRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return companies.select(db, owner).select(COMPANY_COLUMNS).where('id', 'in', ids).execute();
}

const companyList = companies.list<{ pattern?: string }, CompanyRow>({
  filters: { pattern: (eb, pattern) => eb.or([eb('name', 'ilike', pattern), eb('domain', 'ilike', pattern)]) },
  select: (from) => from.select(COMPANY_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listCompanies(db: CrmDb, owner: Owner, filters: { search?: string }, page: PageRequest) {
  return companyList.page(db, owner, { pattern: filters.search ? containsPattern(filters.search) : undefined }, page);
}

export function updateCompany(db: CrmDb, owner: Owner, id: string, changes: Partial<CrmCompaniesTable>): Promise<CompanyRow> {
  return companies.update(db, owner).set(changes).where('id', '=', id).returning(COMPANY_COLUMNS).executeTakeFirstOrThrow();
}

// Contacts

export function insertContact(db: CrmDb, owner: Owner, row: OwnedInsert<CrmContactsTable>): Promise<ContactRow> {
  return contacts.insert(db, owner, row).returning(CONTACT_COLUMNS).executeTakeFirstOrThrow();
}

const contactById = contacts.statement((from, values: { id: string }) => from.select(CONTACT_COLUMNS).where('id', '=', values.id));
const contactByIdForUpdate = contacts.statement((from, values: { id: string }) => from.select(CONTACT_COLUMNS).where('id', '=', values.id).forUpdate());

export function findContact(db: CrmDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<ContactRow | undefined> {
  return (options.forUpdate ? contactByIdForUpdate : contactById).first(db, owner, { id });
}

export function findContacts(db: CrmDb, owner: Owner, ids: string[]): Promise<ContactRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return contacts.select(db, owner).select(CONTACT_COLUMNS).where('id', 'in', ids).execute();
}

const contactList = contacts.list<{ pattern?: string; company_id?: string }, ContactRow>({
  filters: {
    pattern: (eb, pattern) => eb.or([eb('name', 'ilike', pattern), eb('email', 'ilike', pattern)]),
    company_id: (eb, companyId) => eb('company_id', '=', companyId),
  },
  select: (from) => from.select(CONTACT_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listContacts(db: CrmDb, owner: Owner, filters: { search?: string; company_id?: string }, page: PageRequest) {
  return contactList.page(db, owner, { pattern: filters.search ? containsPattern(filters.search) : undefined, company_id: filters.company_id }, page);
}

export function updateContact(db: CrmDb, owner: Owner, id: string, changes: Partial<CrmContactsTable>): Promise<ContactRow> {
  return contacts.update(db, owner).set(changes).where('id', '=', id).returning(CONTACT_COLUMNS).executeTakeFirstOrThrow();
}
