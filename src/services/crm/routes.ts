import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, IdParams } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import { Company, Contact, CreateCompanyBody, CreateContactBody, ListCompaniesQuery, ListContactsQuery, UpdateCompanyBody, UpdateContactBody } from './schemas.js';
import type { CrmService } from './service.js';

const VIEW = 'service.crm.view';
const MANAGE = 'service.crm.manage';

export function crmRoutes(crm: CrmService) {
  return async function registerCrmRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const contacts = { tags: ['CRM: contacts'] };
    const companies = { tags: ['CRM: companies'] };

    routes.post('/contacts', {
      config: { scope: MANAGE },
      schema: { ...contacts, operationId: 'crmCreateContact', summary: 'Create a contact', body: CreateContactBody, response: { 201: DataEnvelope(Contact) } },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await crm.createContact(requestContext(request), request.body) };
      },
    });

    routes.get('/contacts', {
      config: { scope: VIEW },
      schema: { ...contacts, operationId: 'crmListContacts', summary: 'List contacts, newest first', querystring: ListContactsQuery, response: { 200: ListEnvelope(Contact) } },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await crm.listContacts(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/contacts/:id', {
      config: { scope: VIEW },
      schema: { ...contacts, operationId: 'crmGetContact', summary: 'Fetch a contact', params: IdParams, response: { 200: DataEnvelope(Contact) } },
      handler: async (request) => ({ data: await crm.getContact(requestContext(request), request.params.id) }),
    });

    routes.patch('/contacts/:id', {
      config: { scope: MANAGE },
      schema: {
        ...contacts,
        operationId: 'crmUpdateContact',
        summary: 'Update a contact',
        params: IdParams,
        body: UpdateContactBody,
        response: { 200: DataEnvelope(Contact) },
      },
      handler: async (request) => ({ data: await crm.updateContact(requestContext(request), request.params.id, request.body) }),
    });

    routes.post('/companies', {
      config: { scope: MANAGE },
      schema: { ...companies, operationId: 'crmCreateCompany', summary: 'Create a company', body: CreateCompanyBody, response: { 201: DataEnvelope(Company) } },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await crm.createCompany(requestContext(request), request.body) };
      },
    });

    routes.get('/companies', {
      config: { scope: VIEW },
      schema: { ...companies, operationId: 'crmListCompanies', summary: 'List companies, newest first', querystring: ListCompaniesQuery, response: { 200: ListEnvelope(Company) } },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await crm.listCompanies(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/companies/:id', {
      config: { scope: VIEW },
      schema: { ...companies, operationId: 'crmGetCompany', summary: 'Fetch a company', params: IdParams, response: { 200: DataEnvelope(Company) } },
      handler: async (request) => ({ data: await crm.getCompany(requestContext(request), request.params.id) }),
    });

    routes.patch('/companies/:id', {
      config: { scope: MANAGE },
      schema: {
        ...companies,
        operationId: 'crmUpdateCompany',
        summary: 'Update a company',
        params: IdParams,
        body: UpdateCompanyBody,
        response: { 200: DataEnvelope(Company) },
      },
      handler: async (request) => ({ data: await crm.updateCompany(requestContext(request), request.params.id, request.body) }),
    });
  };
}
