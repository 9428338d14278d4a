import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorReply } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  Conversion,
  ConversionParams,
  CreateConversionBody,
  CreatePartnerBody,
  CreateProgrammeBody,
  CreateReferralBody,
  CreateTierBody,
  ListConversionsQuery,
  ListPartnersQuery,
  ListProgrammesQuery,
  ListReferralsQuery,
  ListTiersQuery,
  Partner,
  PartnerParams,
  Programme,
  ProgrammeIdParams,
  Referral,
  ReferralParams,
  Tier,
  TierParams,
  UpdatePartnerBody,
  UpdateProgrammeBody,
  UpdateTierBody,
} from './schemas.js';
import type { AffiliatesService } from './service.js';

const VIEW = 'service.affiliates.view';
const MANAGE = 'service.affiliates.manage';

const PARTNER_NOT_FOUND = ErrorReply('affiliate_not_found: no partner has this id.');
const CODE_TAKEN = ErrorReply('conflict: the referral code is used by another partner of the workspace.');
const TRANSITION = ErrorReply('invalid_status_transition: the commission cannot move that way (pending -> approved -> paid; pending or approved -> voided).');

export function affiliatesRoutes(affiliates: AffiliatesService) {
  return async function registerAffiliatesRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const programmes = { tags: ['Affiliates: programmes'] };
    const partners = { tags: ['Affiliates: partners'] };
    const tracking = { tags: ['Affiliates: referrals'] };
    const commissions = { tags: ['Affiliates: conversions'] };

    // Programmes and tiers

    routes.post('/programmes', {
      config: { scope: MANAGE },
      schema: { ...programmes, operationId: 'affiliatesCreateProgramme', summary: 'Create a programme', body: CreateProgrammeBody, response: { 201: DataEnvelope(Programme) } },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await affiliates.createProgramme(requestContext(request), request.body) };
      },
    });

    routes.get('/programmes', {
      config: { scope: VIEW },
      schema: {
        ...programmes,
        operationId: 'affiliatesListProgrammes',
        summary: 'List programmes, newest first',
        querystring: ListProgrammesQuery,
        response: { 200: ListEnvelope(Programme) },
      },
      handler: async (request) => {
        const { limit, offset } = request.query;
        const { rows, total } = await affiliates.listProgrammes(requestContext(request), { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/programmes/:id', {
      config: { scope: VIEW },
      schema: { ...programmes, operationId: 'affiliatesGetProgramme', summary: 'Fetch a programme', params: ProgrammeIdParams, response: { 200: DataEnvelope(Programme) } },
      handler: async (request) => ({ data: await affiliates.getProgramme(requestContext(request), request.params.id) }),
    });

    routes.patch('/programmes/:id', {
      config: { scope: MANAGE },
      schema: {
        ...programmes,
        operationId: 'affiliatesUpdateProgramme',
        summary: 'Update a programme (partners following its rate earn the new one)',
        params: ProgrammeIdParams,
        body: UpdateProgrammeBody,
        response: { 200: DataEnvelope(Programme) },
      },
      handler: async (request) => ({ data: await affiliates.updateProgramme(requestContext(request), request.params.id, request.body) }),
    });

    routes.post('/programmes/:id/tiers', {
      config: { scope: MANAGE },
      schema: {
        ...programmes,
        operationId: 'affiliatesCreateTier',
        summary: 'Add a tier with its own rate to a programme',
        params: ProgrammeIdParams,
        body: CreateTierBody,
        response: { 201: DataEnvelope(Tier), 409: ErrorReply('conflict: the programme has a tier with this name.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await affiliates.createTier(requestContext(request), request.params.id, request.body) };
      },
    });

    routes.get('/programmes/:id/tiers', {
      config: { scope: VIEW },
      schema: {
        ...programmes,
        operationId: 'affiliatesListTiers',
        summary: 'List the tiers of a programme, newest first',
        params: ProgrammeIdParams,
        querystring: ListTiersQuery,
        response: { 200: ListEnvelope(Tier) },
      },
      handler: async (request) => {
        const { limit, offset } = request.query;
        const { rows, total } = await affiliates.listTiers(requestContext(request), request.params.id, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/programmes/:id/tiers/:tier_id', {
      config: { scope: VIEW },
      schema: { ...programmes, operationId: 'affiliatesGetTier', summary: 'Fetch a tier', params: TierParams, response: { 200: DataEnvelope(Tier) } },
      handler: async (request) => ({ data: await affiliates.getTier(requestContext(request), request.params.id, request.params.tier_id) }),
    });

    routes.patch('/programmes/:id/tiers/:tier_id', {
      config: { scope: MANAGE },
      schema: {
        ...programmes,
        operationId: 'affiliatesUpdateTier',
        summary: 'Update a tier (its partners earn the new rate)',
        params: TierParams,
        body: UpdateTierBody,
        response: { 200: DataEnvelope(Tier), 409: ErrorReply('conflict: the programme has a tier with this name.') },
      },
      handler: async (request) => ({ data: await affiliates.updateTier(requestContext(request), request.params.id, request.params.tier_id, request.body) }),
    });

    // Partners

    routes.post('/affiliates', {
      config: { scope: MANAGE },
      schema: {
        ...partners,
        operationId: 'affiliatesCreatePartner',
        summary: 'Create a partner (tier_name is null in this reply)',
        body: CreatePartnerBody,
        response: { 201: DataEnvelope(Partner), 409: CODE_TAKEN },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await affiliates.createPartner(requestContext(request), request.body) };
      },
    });

    routes.get('/affiliates', {
      config: { scope: VIEW },
      schema: {
        ...partners,
        operationId: 'affiliatesListPartners',
        summary: 'List affiliate partners, newest first, with commission earned by status',
        querystring: ListPartnersQuery,
        response: { 200: ListEnvelope(Partner) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await affiliates.listPartners(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/affiliates/:id', {
      config: { scope: VIEW },
      schema: {
        ...partners,
        operationId: 'affiliatesGetPartner',
        summary: 'Fetch a partner',
        params: PartnerParams,
        response: { 200: DataEnvelope(Partner), 404: PARTNER_NOT_FOUND },
      },
      handler: async (request) => ({ data: await affiliates.getPartner(requestContext(request), request.params.id) }),
    });

    routes.patch('/affiliates/:id', {
      config: { scope: MANAGE },
      schema: {
        ...partners,
        operationId: 'affiliatesUpdatePartner',
        summary: 'Update a partner (tier_name is null in this reply)',
        params: PartnerParams,
        body: UpdatePartnerBody,
        response: { 200: DataEnvelope(Partner), 404: PARTNER_NOT_FOUND, 409: CODE_TAKEN },
      },
      handler: async (request) => ({ data: await affiliates.updatePartner(requestContext(request), request.params.id, request.body) }),
    });

    routes.post('/affiliates/:id/pause', {
      config: { scope: MANAGE },
      schema: {
        ...partners,
        operationId: 'affiliatesPausePartner',
        summary: 'Pause a partner: it earns no new commission (a paused partner stays paused)',
        params: PartnerParams,
        response: { 200: DataEnvelope(Partner), 404: PARTNER_NOT_FOUND },
      },
      handler: async (request) => ({ data: await affiliates.pausePartner(requestContext(request), request.params.id) }),
    });

    routes.post('/affiliates/:id/reactivate', {
      config: { scope: MANAGE },
      schema: {
        ...partners,
        operationId: 'affiliatesReactivatePartner',
        summary: 'Reactivate a partner: paused becomes active; active stays active',
        params: PartnerParams,
        response: { 200: DataEnvelope(Partner), 404: PARTNER_NOT_FOUND },
      },
      handler: async (request) => ({ data: await affiliates.reactivatePartner(requestContext(request), request.params.id) }),
    });

    // Referrals

    routes.post('/referrals', {
      config: { scope: MANAGE },
      schema: {
        ...tracking,
        operationId: 'affiliatesCreateReferral',
        summary: 'Attribute a visitor or customer to a partner: a click’s referral within cookie_days, or a partner by id or code',
        body: CreateReferralBody,
        response: { 201: DataEnvelope(Referral), 404: PARTNER_NOT_FOUND },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await affiliates.createReferral(requestContext(request), request.body) };
      },
    });

    routes.get('/referrals', {
      config: { scope: VIEW },
      schema: {
        ...tracking,
        operationId: 'affiliatesListReferrals',
        summary: 'List referrals, newest first',
        querystring: ListReferralsQuery,
        response: { 200: ListEnvelope(Referral) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await affiliates.listReferrals(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/referrals/:id', {
      config: { scope: VIEW },
      schema: { ...tracking, operationId: 'affiliatesGetReferral', summary: 'Fetch a referral', params: ReferralParams, response: { 200: DataEnvelope(Referral) } },
      handler: async (request) => ({ data: await affiliates.getReferral(requestContext(request), request.params.id) }),
    });

    // Conversions and commissions

    routes.post('/conversions', {
      config: { scope: MANAGE },
      schema: {
        ...commissions,
        operationId: 'affiliatesCreateConversion',
        summary: 'Record an outside sale and its commission',
        body: CreateConversionBody,
        response: { 201: DataEnvelope(Conversion), 404: PARTNER_NOT_FOUND, 409: ErrorReply('conflict: a conversion with this external_id (or this subscription period) exists.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await affiliates.createConversion(requestContext(request), request.body) };
      },
    });

    routes.get('/conversions', {
      config: { scope: VIEW },
      schema: {
        ...commissions,
        operationId: 'affiliatesListConversions',
        summary: 'List conversions with their commission, newest first',
        querystring: ListConversionsQuery,
        response: { 200: ListEnvelope(Conversion) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await affiliates.listConversions(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/conversions/:id', {
      config: { scope: VIEW },
      schema: { ...commissions, operationId: 'affiliatesGetConversion', summary: 'Fetch a conversion', params: ConversionParams, response: { 200: DataEnvelope(Conversion) } },
      handler: async (request) => ({ data: await affiliates.getConversion(requestContext(request), request.params.id) }),
    });

    const move = (path: string, operationId: string, summary: string, run: (id: string, request: Parameters<typeof requestContext>[0]) => Promise<unknown>) =>
      routes.post(path, {
        config: { scope: MANAGE },
        schema: { ...commissions, operationId, summary, params: ConversionParams, response: { 200: DataEnvelope(Conversion), 409: TRANSITION } },
        handler: async (request) => ({ data: (await run(request.params.id, request)) as never }),
      });

    move('/conversions/:id/approve', 'affiliatesApproveConversion', 'Approve a pending commission', (id, request) => affiliates.approveConversion(requestContext(request), id));
    move('/conversions/:id/mark-paid', 'affiliatesMarkConversionPaid', 'Mark an approved commission paid', (id, request) =>
      affiliates.markConversionPaid(requestContext(request), id),
    );
    move('/conversions/:id/void', 'affiliatesVoidConversion', 'Void a pending or approved commission (the sale was refunded)', (id, request) =>
      affiliates.voidConversion(requestContext(request), id),
    );
    move('/conversions/:id/refund', 'affiliatesRefundConversion', 'Record the refund of a sale: voids its pending or approved commission (the same as void)', (id, request) =>
      affiliates.voidConversion(requestContext(request), id),
    );
  };
}
