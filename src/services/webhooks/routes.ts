import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorReply, IdParams, PathParams, UuidParam } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  CreateEndpointBody,
  Deleted,
  EventType,
  ListDeliveriesQuery,
  ListEndpointsQuery,
  ListEventsQuery,
  ListEventTypesQuery,
  UpdateEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEvent,
} from './schemas.js';
import type { WebhooksService } from './service.js';

const VIEW = 'service.webhooks.view';
const MANAGE = 'service.webhooks.manage';

const DeliveryParams = PathParams({ id: UuidParam, delivery_id: UuidParam });

export function webhooksRoutes(webhooks: WebhooksService) {
  return async function registerWebhooksRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const events = { tags: ['Webhooks: events'] };
    const endpoints = { tags: ['Webhooks: endpoints'] };

    routes.get('/event-types', {
      config: { scope: VIEW },
      schema: {
        ...events,
        operationId: 'webhooksListEventTypes',
        summary: 'List the event types endpoints can subscribe to',
        querystring: ListEventTypesQuery,
        response: { 200: ListEnvelope(EventType) },
      },
      handler: async (request) => {
        const { limit, offset } = request.query;
        const { rows, total } = webhooks.eventTypes({ limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/events', {
      config: { scope: VIEW },
      schema: {
        ...events,
        operationId: 'webhooksListEvents',
        summary: 'List events of the last 30 days, newest first',
        description: 'A client that missed deliveries catches up here: every event is kept 30 days, whether or not it was delivered.',
        querystring: ListEventsQuery,
        response: { 200: ListEnvelope(WebhookEvent) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await webhooks.listEvents(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/events/:id', {
      config: { scope: VIEW },
      schema: { ...events, operationId: 'webhooksGetEvent', summary: 'Fetch an event', params: IdParams, response: { 200: DataEnvelope(WebhookEvent) } },
      handler: async (request) => ({ data: await webhooks.getEvent(requestContext(request), request.params.id) }),
    });

    routes.post('/endpoints', {
      config: { scope: MANAGE },
      schema: {
        ...endpoints,
        operationId: 'webhooksCreateEndpoint',
        summary: 'Create a webhook endpoint',
        description:
          'The reply carries the signing secret, shown this once. Deliveries are signed by the Standard Webhooks rules (webhook-id, webhook-timestamp, webhook-signature).',
        body: CreateEndpointBody,
        response: {
          201: { ...DataEnvelope(WebhookEndpointWithSecret), description: 'The endpoint, with its signing secret.' },
          409: ErrorReply('conflict: the tenant already has 16 endpoints in this mode.'),
        },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await webhooks.createEndpoint(requestContext(request), request.body) };
      },
    });

    routes.get('/endpoints', {
      config: { scope: VIEW },
      schema: {
        ...endpoints,
        operationId: 'webhooksListEndpoints',
        summary: 'List webhook endpoints, newest first',
        querystring: ListEndpointsQuery,
        response: { 200: ListEnvelope(WebhookEndpoint) },
      },
      handler: async (request) => {
        const { limit, offset } = request.query;
        const { rows, total } = await webhooks.listEndpoints(requestContext(request), { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/endpoints/:id', {
      config: { scope: VIEW },
      schema: { ...endpoints, operationId: 'webhooksGetEndpoint', summary: 'Fetch a webhook endpoint', params: IdParams, response: { 200: DataEnvelope(WebhookEndpoint) } },
      handler: async (request) => ({ data: await webhooks.getEndpoint(requestContext(request), request.params.id) }),
    });

    routes.patch('/endpoints/:id', {
      config: { scope: MANAGE },
      schema: {
        ...endpoints,
        operationId: 'webhooksUpdateEndpoint',
        summary: 'Update a webhook endpoint (url, events, description, status)',
        params: IdParams,
        body: UpdateEndpointBody,
        response: { 200: DataEnvelope(WebhookEndpoint) },
      },
      handler: async (request) => ({ data: await webhooks.updateEndpoint(requestContext(request), request.params.id, request.body) }),
    });

    routes.delete('/endpoints/:id', {
      config: { scope: MANAGE },
      schema: {
        ...endpoints,
        operationId: 'webhooksDeleteEndpoint',
        summary: 'Delete a webhook endpoint and its deliveries',
        params: IdParams,
        response: { 200: DataEnvelope(Deleted) },
      },
      handler: async (request) => ({ data: await webhooks.deleteEndpoint(requestContext(request), request.params.id) }),
    });

    routes.post('/endpoints/:id/rotate-secret', {
      config: { scope: MANAGE },
      schema: {
        ...endpoints,
        operationId: 'webhooksRotateEndpointSecret',
        summary: 'Rotate the signing secret',
        description: 'Gives a new secret. For 24 hours deliveries carry two signatures, by the new and the previous secret, so receivers can switch without missing one.',
        params: IdParams,
        response: { 200: { ...DataEnvelope(WebhookEndpointWithSecret), description: 'The endpoint, with its new signing secret.' } },
      },
      handler: async (request) => ({ data: await webhooks.rotateSecret(requestContext(request), request.params.id) }),
    });

    routes.post('/endpoints/:id/test', {
      config: { scope: MANAGE },
      schema: {
        ...endpoints,
        operationId: 'webhooksTestEndpoint',
        summary: 'Send a test event to this endpoint',
        description: 'Records a webhooks.endpoint.pinged event for this endpoint alone and sends it at once, in the background.',
        params: IdParams,
        response: {
          202: { ...DataEnvelope(WebhookDelivery), description: 'The delivery, due now; follow it in the deliveries list.' },
          409: ErrorReply('conflict: the endpoint is disabled.'),
        },
      },
      handler: async (request, reply) => {
        reply.code(202);
        return { data: await webhooks.sendTestEvent(requestContext(request), request.params.id) };
      },
    });

    routes.get('/endpoints/:id/deliveries', {
      config: { scope: VIEW },
      schema: {
        ...endpoints,
        operationId: 'webhooksListDeliveries',
        summary: 'List the deliveries of an endpoint, newest first, with their attempts',
        params: IdParams,
        querystring: ListDeliveriesQuery,
        response: { 200: ListEnvelope(WebhookDelivery) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await webhooks.listDeliveries(requestContext(request), request.params.id, filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.post('/endpoints/:id/deliveries/:delivery_id/retry', {
      config: { scope: MANAGE },
      schema: {
        ...endpoints,
        operationId: 'webhooksRetryDelivery',
        summary: 'Send a delivery again now',
        description:
          'A manual redelivery with the same webhook-id, sent at once in the background. A failed delivery gets this one attempt; a pending one keeps its retry schedule.',
        params: DeliveryParams,
        response: {
          202: { ...DataEnvelope(WebhookDelivery), description: 'The delivery, due now.' },
          409: ErrorReply('conflict: the endpoint is disabled.'),
        },
      },
      handler: async (request, reply) => {
        reply.code(202);
        return { data: await webhooks.retryDelivery(requestContext(request), request.params.id, request.params.delivery_id) };
      },
    });
  };
}
