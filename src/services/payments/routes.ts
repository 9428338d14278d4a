import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorRef, ErrorReply, IdParams } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  CheckoutSession,
  CreateCheckoutSessionBody,
  CreatePaymentLinkBody,
  CreateRefundBody,
  ListCheckoutSessionsQuery,
  ListPaymentLinksQuery,
  ListRefundsQuery,
  PaymentLink,
  Refund,
  UpdatePaymentLinkBody,
} from './schemas.js';
import type { PaymentsService } from './service.js';

export const SCOPES = {
  checkoutCreate: 'service.payments.checkout.create',
  checkoutRead: 'service.payments.checkout.read',
  linksRead: 'service.payments.links.read',
  linksWrite: 'service.payments.links.write',
  refundsRead: 'service.payments.refunds.read',
  refundsWrite: 'service.payments.refunds.write',
} as const;

const LIVE_NOT_CONFIGURED = 'Live payments not configured on this server: live_payments_not_configured.';

export function paymentsRoutes(payments: PaymentsService) {
  return async function registerPaymentsRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const sessions = { tags: ['Payments: checkout sessions'] };
    const links = { tags: ['Payments: payment links'] };

    routes.post('/checkout-sessions', {
      config: { scope: SCOPES.checkoutCreate },
      schema: {
        ...sessions,
        operationId: 'paymentsCreateCheckoutSession',
        summary: 'Create a hosted checkout session for a one-off payment',
        description:
          'Send the buyer to `url`. The session is payable for 24 hours, then `expired`. Test keys pay in the sandbox (card 4242 4242 4242 4242 succeeds, 4000 0000 0000 0002 is declined); live keys need STRIPE_SECRET_KEY on the server.',
        body: CreateCheckoutSessionBody,
        response: { 201: DataEnvelope(CheckoutSession), 503: { ...ErrorRef, description: LIVE_NOT_CONFIGURED } },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await payments.createSession(requestContext(request), request.body) };
      },
    });

    routes.get('/checkout-sessions', {
      config: { scope: SCOPES.checkoutRead },
      schema: {
        ...sessions,
        operationId: 'paymentsListCheckoutSessions',
        summary: 'List checkout sessions, newest first',
        querystring: ListCheckoutSessionsQuery,
        response: { 200: ListEnvelope(CheckoutSession) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await payments.listSessions(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/checkout-sessions/:id', {
      config: { scope: SCOPES.checkoutRead },
      schema: { ...sessions, operationId: 'paymentsGetCheckoutSession', summary: 'Fetch a checkout session', params: IdParams, response: { 200: DataEnvelope(CheckoutSession) } },
      handler: async (request) => ({ data: await payments.getSession(requestContext(request), request.params.id) }),
    });

    const refunds = { tags: ['Payments: refunds'] };

    routes.post('/refunds', {
      config: { scope: SCOPES.refundsWrite },
      schema: {
        ...refunds,
        operationId: 'paymentsCreateRefund',
        summary: 'Refund a paid checkout session, in full or in part',
        description:
          "Gives back `amount_cents` (default: everything the session can still refund) of a `complete` session, like Stripe's refunds of a payment intent. Test mode refunds in the sandbox at once (`succeeded`); live mode refunds through Stripe (`succeeded`, or `pending` while Stripe completes it). Concurrent refunds never give back more than was paid. The session's `amount_refunded_cents` moves with each refund.",
        body: CreateRefundBody,
        response: {
          201: DataEnvelope(Refund),
          409: ErrorReply('checkout_session_not_paid: the session is open or expired, not paid. checkout_session_fully_refunded: nothing is left to refund.'),
          502: ErrorReply('payment_processor_error: the processor refused or could not be reached; nothing was refunded.'),
          503: { ...ErrorRef, description: LIVE_NOT_CONFIGURED },
        },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await payments.createRefund(requestContext(request), request.body) };
      },
    });

    routes.get('/refunds', {
      config: { scope: SCOPES.refundsRead },
      schema: {
        ...refunds,
        operationId: 'paymentsListRefunds',
        summary: 'List refunds, newest first',
        querystring: ListRefundsQuery,
        response: { 200: ListEnvelope(Refund) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await payments.listRefunds(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/refunds/:id', {
      config: { scope: SCOPES.refundsRead },
      schema: { ...refunds, operationId: 'paymentsGetRefund', summary: 'Fetch a refund', params: IdParams, response: { 200: DataEnvelope(Refund) } },
      handler: async (request) => ({ data: await payments.getRefund(requestContext(request), request.params.id) }),
    });

    routes.post('/payment-links', {
      config: { scope: SCOPES.linksWrite },
      schema: {
        ...links,
        operationId: 'paymentsCreatePaymentLink',
        summary: 'Create a reusable payment link',
        description: 'Every visit of `url` starts a new checkout session. Live links need STRIPE_SECRET_KEY on the server.',
        body: CreatePaymentLinkBody,
        response: { 201: DataEnvelope(PaymentLink), 503: { ...ErrorRef, description: LIVE_NOT_CONFIGURED } },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await payments.createLink(requestContext(request), request.body) };
      },
    });

    routes.get('/payment-links', {
      config: { scope: SCOPES.linksRead },
      schema: {
        ...links,
        operationId: 'paymentsListPaymentLinks',
        summary: 'List payment links, newest first',
        querystring: ListPaymentLinksQuery,
        response: { 200: ListEnvelope(PaymentLink) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await payments.listLinks(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/payment-links/:id', {
      config: { scope: SCOPES.linksRead },
      schema: { ...links, operationId: 'paymentsGetPaymentLink', summary: 'Fetch a payment link', params: IdParams, response: { 200: DataEnvelope(PaymentLink) } },
      handler: async (request) => ({ data: await payments.getLink(requestContext(request), request.params.id) }),
    });

    routes.patch('/payment-links/:id', {
      config: { scope: SCOPES.linksWrite },
      schema: {
        ...links,
        operationId: 'paymentsUpdatePaymentLink',
        summary: 'Update a payment link',
        description:
          'Fields sent change; the pricing (line_items, or amount_cents with description) is replaced as a whole. Sessions already started keep what they were started with.',
        params: IdParams,
        body: UpdatePaymentLinkBody,
        response: { 200: DataEnvelope(PaymentLink) },
      },
      handler: async (request) => ({ data: await payments.updateLink(requestContext(request), request.params.id, request.body) }),
    });
  };
}
