import type { Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import type { Owner } from '../../platform/context.js';
import { containsPattern } from '../../lib/search.js';
import { selectPreparedPage } from '../../db/paging.js';
import { PreparedQuery, PreparedQueryVariants } from '../../db/prepared.js';
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

type CompanyListValues = { tenantId: string; mode: Owner['mode']; pattern: string; limit: number; offset: number };

function companyListBase(db: CrmDb, search: boolean, value: <K extends keyof CompanyListValues>(name: K) => CompanyListValues[K]) {
  const base = db.selectFrom('crm_companies').where('tenant_id', '=', value('tenantId')).where('mode', '=', value('mode'));
  return search ? base.where((eb) => eb.or([eb('name', 'ilike', value('pattern')), eb('domain', 'ilike', value('pattern'))])) : base;
}

const companyPage = new PreparedQueryVariants(
  (shape: 'search' | 'all') =>
    new PreparedQuery<CompanyListValues, CompanyRow>((db: CrmDb, value) =>
      companyListBase(db, shape === 'search', value).select(COMPANY_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(value('limit')).offset(value('offset')),
    ),
);
const companyCount = new PreparedQueryVariants(
  (shape: 'search' | 'all') =>
    new PreparedQuery<CompanyListValues, { total: string }>((db: CrmDb, value) =>
      companyListBase(db, shape === 'search', value).select((eb) => eb.fn.countAll<string>().as('total')),
    ),
);

/** Lists are the hottest reads, so their statements are prepared once (see db/prepared.ts). */
export async function listCompanies(db: CrmDb, owner: Owner, filters: { search?: string }, page: PageRequest) {
  const shape = filters.search ? 'search' : 'all';
  const values: CompanyListValues = {
    tenantId: owner.tenantId,
    mode: owner.mode,
    pattern: filters.search ? containsPattern(filters.search) : '',
    limit: page.limit,
    offset: page.offset,
  };
  return selectPreparedPage(db, companyPage.for(shape), companyCount.for(shape), values);
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

type ContactListShape = `${'search' | 'all'}:${'company' | 'any'}`;
type ContactListValues = { tenantId: string; mode: Owner['mode']; pattern: string; companyId: string; limit: number; offset: number };

function contactListBase(db: CrmDb, shape: ContactListShape, value: <K extends keyof ContactListValues>(name: K) => ContactListValues[K]) {
  let base = db.selectFrom('crm_contacts').where('tenant_id', '=', value('tenantId')).where('mode', '=', value('mode'));
  if (shape.startsWith('search')) base = base.where((eb) => eb.or([eb('name', 'ilike', value('pattern')), eb('email', 'ilike', value('pattern'))]));
  if (shape.endsWith('company')) base = base.where('company_id', '=', value('companyId'));
  return base;
}

const contactPage = new PreparedQueryVariants(
  (shape: ContactListShape) =>
    new PreparedQuery<ContactListValues, ContactRow>((db: CrmDb, value) =>
      contactListBase(db, shape, value).select(CONTACT_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(value('limit')).offset(value('offset')),
    ),
);
const contactCount = new PreparedQueryVariants(
  (shape: ContactListShape) =>
    new PreparedQuery<ContactListValues, { total: string }>((db: CrmDb, value) => contactListBase(db, shape, value).select((eb) => eb.fn.countAll<string>().as('total'))),
);

export async function listContacts(db: CrmDb, owner: Owner, filters: { search?: string; company_id?: string }, page: PageRequest) {
  const shape: ContactListShape = `${filters.search ? 'search' : 'all'}:${filters.company_id ? 'company' : 'any'}`;
  const values: ContactListValues = {
    tenantId: owner.tenantId,
    mode: owner.mode,
    pattern: filters.search ? containsPattern(filters.search) : '',
    companyId: filters.company_id ?? '',
    limit: page.limit,
    offset: page.offset,
  };
  return selectPreparedPage(db, contactPage.for(shape), contactCount.for(shape), values);
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
