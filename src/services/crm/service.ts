import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { isUuid, newId } from '../../lib/ids.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import type { EventLog } from '../../platform/events/event-log.js';
import { invalidField, notFound } from '../../platform/errors/app-error.js';
import * as repository from './repository.js';
import type { CompanyRow, ContactRow, CrmDb } from './repository.js';
import type { CompanyView, ContactView, CreateCompanyInput, CreateContactInput, UpdateCompanyInput, UpdateContactInput } from './schemas.js';

/** Contacts and companies: the records other services point at and show names of. */
export function createCrmService({ db, events }: { db: Db; events: EventLog }) {
  const crm = repository.crmDb(db);

  async function requireCompanyForContact(tx: CrmDb, owner: Owner, companyId: string | null | undefined): Promise<void> {
    if (companyId === undefined || companyId === null) return;
    if (!(await repository.findCompany(tx, owner, companyId))) throw invalidField('company_id', 'not_found', 'No company with this id.');
  }

  return {
    async createCompany(ctx: RequestContext, input: CreateCompanyInput): Promise<CompanyView> {
      const row = await repository.insertCompany(crm, ctx, {
        id: newId(),
        name: input.name.trim(),
        domain: input.domain?.toLowerCase() ?? null,
        created_at: ctx.now,
        updated_at: ctx.now,
      });
      return presentCompany(row);
    },

    async getCompany(ctx: RequestContext, id: string): Promise<CompanyView> {
      const row = await repository.findCompany(crm, ctx, id);
      if (!row) throw notFound('Company');
      return presentCompany(row);
    },

    async listCompanies(ctx: RequestContext, filters: { search?: string }, page: PageRequest) {
      const { rows, total } = await repository.listCompanies(crm, ctx, filters, page);
      return { rows: rows.map(presentCompany), total };
    },

    async updateCompany(ctx: RequestContext, id: string, input: UpdateCompanyInput): Promise<CompanyView> {
      return crm.transaction().execute(async (tx) => {
        const current = await repository.findCompany(tx, ctx, id, { forUpdate: true });
        if (!current) throw notFound('Company');
        assertFresh(input.expected_updated_at, current.updated_at);
        const row = await repository.updateCompany(tx, ctx, id, {
          ...(input.name !== undefined ? { name: input.name.trim() } : {}),
          ...(input.domain !== undefined ? { domain: input.domain?.toLowerCase() ?? null } : {}),
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        return presentCompany(row);
      });
    },

    async createContact(ctx: RequestContext, input: CreateContactInput): Promise<ContactView> {
      return crm.transaction().execute(async (tx) => {
        await requireCompanyForContact(tx, ctx, input.company_id);
        const row = await repository.insertContact(tx, ctx, {
          id: newId(),
          name: input.name.trim(),
          email: input.email?.toLowerCase() ?? null,
          phone: input.phone?.trim() ?? null,
          company_id: input.company_id ?? null,
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        const contact = presentContact(row);
        await events.record(tx, ctx, 'crm.contact.created', contact);
        return contact;
      });
    },

    async getContact(ctx: RequestContext, id: string): Promise<ContactView> {
      const row = await repository.findContact(crm, ctx, id);
      if (!row) throw notFound('Contact');
      return presentContact(row);
    },

    async listContacts(ctx: RequestContext, filters: { search?: string; company_id?: string }, page: PageRequest) {
      const { rows, total } = await repository.listContacts(crm, ctx, filters, page);
      return { rows: rows.map(presentContact), total };
    },

    async updateContact(ctx: RequestContext, id: string, input: UpdateContactInput): Promise<ContactView> {
      return crm.transaction().execute(async (tx) => {
        const current = await repository.findContact(tx, ctx, id, { forUpdate: true });
        if (!current) throw notFound('Contact');
        assertFresh(input.expected_updated_at, current.updated_at);
        await requireCompanyForContact(tx, ctx, input.company_id);
        const row = await repository.updateContact(tx, ctx, id, {
          ...(input.name !== undefined ? { name: input.name.trim() } : {}),
          ...(input.email !== undefined ? { email: input.email?.toLowerCase() ?? null } : {}),
          ...(input.phone !== undefined ? { phone: input.phone?.trim() ?? null } : {}),
          ...(input.company_id !== undefined ? { company_id: input.company_id } : {}),
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        return presentContact(row);
      });
    },

    /** For other services: names of contacts by id (unknown ids are simply absent). */
    async contactsById(owner: Owner, ids: string[]): Promise<Map<string, ContactView>> {
      const rows = await repository.findContacts(crm, owner, ids.filter(isUuid));
      return new Map(rows.map((row) => [row.id, presentContact(row)]));
    },

    /** For other services: companies by id (unknown ids are simply absent). */
    async companiesById(owner: Owner, ids: string[]): Promise<Map<string, CompanyView>> {
      const rows = await repository.findCompanies(crm, owner, ids.filter(isUuid));
      return new Map(rows.map((row) => [row.id, presentCompany(row)]));
    },
  };
}

export type CrmService = ReturnType<typeof createCrmService>;

/** Rows are already in the API's shape (the reply serialiser writes their timestamps). */
function presentCompany(row: CompanyRow): CompanyView {
  return row;
}

function presentContact(row: ContactRow): ContactView {
  return row;
}
