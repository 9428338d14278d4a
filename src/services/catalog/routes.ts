import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorRef, IdParams } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  CancelSubscriptionBody,
  Coupon,
  CreateCouponBody,
  CreatePriceBody,
  CreateProductBody,
  ListCouponsQuery,
  ListProductsQuery,
  ListSubscriptionsQuery,
  PauseSubscriptionBody,
  Price,
  Product,
  StartSubscriptionBody,
  Subscription,
  UpdateCouponBody,
  UpdateProductBody,
} from './schemas.js';
import type { CatalogService } from './service.js';

const VIEW = 'service.catalog.view';
const MANAGE = 'service.catalog.manage';

const transitionConflict = (what: string) => ({ ...ErrorRef, description: `invalid_status_transition: ${what}` });

export function catalogRoutes(catalog: CatalogService) {
  return async function registerCatalogRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const products = { tags: ['Catalog: products'] };
    const coupons = { tags: ['Catalog: coupons'] };
    const subscriptions = { tags: ['Catalog: subscriptions'] };

    // Products and prices

    routes.post('/catalog/products', {
      config: { scope: MANAGE },
      schema: { ...products, operationId: 'catalogCreateProduct', summary: 'Create a subscription product', body: CreateProductBody, response: { 201: DataEnvelope(Product) } },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await catalog.createProduct(requestContext(request), request.body) };
      },
    });

    routes.get('/catalog/products', {
      config: { scope: VIEW },
      schema: {
        ...products,
        operationId: 'catalogListProducts',
        summary: 'List products with their prices, newest first',
        querystring: ListProductsQuery,
        response: { 200: ListEnvelope(Product) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await catalog.listProducts(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/catalog/products/:id', {
      config: { scope: VIEW },
      schema: { ...products, operationId: 'catalogGetProduct', summary: 'Fetch a product with its prices', params: IdParams, response: { 200: DataEnvelope(Product) } },
      handler: async (request) => ({ data: await catalog.getProduct(requestContext(request), request.params.id) }),
    });

    routes.patch('/catalog/products/:id', {
      config: { scope: MANAGE },
      schema: {
        ...products,
        operationId: 'catalogUpdateProduct',
        summary: 'Update a product (name, description, trial, active, default price)',
        params: IdParams,
        body: UpdateProductBody,
        response: { 200: DataEnvelope(Product) },
      },
      handler: async (request) => ({ data: await catalog.updateProduct(requestContext(request), request.params.id, request.body) }),
    });

    routes.post('/catalog/products/:id/prices', {
      config: { scope: MANAGE },
      schema: {
        ...products,
        operationId: 'catalogCreatePrice',
        summary: 'Add a recurring price to a product',
        description: "The product's first price becomes its default; `default: true` moves the default to the new price. Prices cannot change once created (add another).",
        params: IdParams,
        body: CreatePriceBody,
        response: { 201: DataEnvelope(Price), 409: { ...ErrorRef, description: 'conflict: the product already has 100 prices.' } },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await catalog.createPrice(requestContext(request), request.params.id, request.body) };
      },
    });

    // Coupons

    routes.post('/catalog/coupons', {
      config: { scope: MANAGE },
      schema: {
        ...coupons,
        operationId: 'catalogCreateCoupon',
        summary: 'Create a discount code',
        body: CreateCouponBody,
        response: { 201: DataEnvelope(Coupon), 409: { ...ErrorRef, description: 'coupon_code_taken: the code exists already (in any case).' } },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await catalog.createCoupon(requestContext(request), request.body) };
      },
    });

    routes.get('/catalog/coupons', {
      config: { scope: VIEW },
      schema: {
        ...coupons,
        operationId: 'catalogListCoupons',
        summary: 'List discount codes, newest first',
        querystring: ListCouponsQuery,
        response: { 200: ListEnvelope(Coupon) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await catalog.listCoupons(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/catalog/coupons/:id', {
      config: { scope: VIEW },
      schema: { ...coupons, operationId: 'catalogGetCoupon', summary: 'Fetch a discount code', params: IdParams, response: { 200: DataEnvelope(Coupon) } },
      handler: async (request) => ({ data: await catalog.getCoupon(requestContext(request), request.params.id) }),
    });

    routes.patch('/catalog/coupons/:id', {
      config: { scope: MANAGE },
      schema: {
        ...coupons,
        operationId: 'catalogUpdateCoupon',
        summary: 'Update a discount code (description, limits, dates, active)',
        params: IdParams,
        body: UpdateCouponBody,
        response: { 200: DataEnvelope(Coupon) },
      },
      handler: async (request) => ({ data: await catalog.updateCoupon(requestContext(request), request.params.id, request.body) }),
    });

    routes.post('/catalog/coupons/:id/retire', {
      config: { scope: MANAGE },
      schema: {
        ...coupons,
        operationId: 'catalogRetireCoupon',
        summary: 'Retire a discount code (active false, redeemable false)',
        description: 'Subscriptions already using the code keep their discount. Retiring a retired code returns it unchanged.',
        params: IdParams,
        response: { 200: DataEnvelope(Coupon) },
      },
      handler: async (request) => ({ data: await catalog.retireCoupon(requestContext(request), request.params.id) }),
    });

    // Subscriptions

    routes.post('/catalog/subscriptions', {
      config: { scope: MANAGE },
      schema: {
        ...subscriptions,
        operationId: 'catalogStartSubscription',
        summary: 'Start a subscription of a crm contact or company',
        description:
          'Starts trialing (trial_end set) when the product has free trial days, else active. A discount code that is off, not yet started, expired or used up gives 400 coupon_not_redeemable.',
        body: StartSubscriptionBody,
        response: {
          201: DataEnvelope(Subscription),
          400: {
            ...ErrorRef,
            description:
              'validation_failed (bad body; unknown product, price, contact or company: detail not_found; inactive product; unknown coupon_code), invalid_json, or coupon_not_redeemable (details[0].code inactive, not_started, expired, exhausted or currency_mismatch).',
          },
        },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await catalog.startSubscription(requestContext(request), request.body) };
      },
    });

    routes.get('/catalog/subscriptions', {
      config: { scope: VIEW },
      schema: {
        ...subscriptions,
        operationId: 'catalogListSubscriptions',
        summary: 'List subscriptions, newest first',
        querystring: ListSubscriptionsQuery,
        response: { 200: ListEnvelope(Subscription) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await catalog.listSubscriptions(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/catalog/subscriptions/:id', {
      config: { scope: VIEW },
      schema: { ...subscriptions, operationId: 'catalogGetSubscription', summary: 'Fetch a subscription', params: IdParams, response: { 200: DataEnvelope(Subscription) } },
      handler: async (request) => ({ data: await catalog.getSubscription(requestContext(request), request.params.id) }),
    });

    routes.post('/catalog/subscriptions/:id/pause', {
      config: { scope: MANAGE },
      schema: {
        ...subscriptions,
        operationId: 'catalogPauseSubscription',
        summary: 'Pause a trialing or active subscription',
        description: 'Optional resumes_at (future) resumes it by itself. Pausing a trial ends the trial. Paused subscriptions do not renew.',
        params: IdParams,
        body: PauseSubscriptionBody,
        response: { 200: DataEnvelope(Subscription), 409: transitionConflict('the subscription is paused or canceled already.') },
      },
      handler: async (request) => ({ data: await catalog.pauseSubscription(requestContext(request), request.params.id, request.body) }),
    });

    routes.post('/catalog/subscriptions/:id/resume', {
      config: { scope: MANAGE },
      schema: {
        ...subscriptions,
        operationId: 'catalogResumeSubscription',
        summary: 'Resume a paused subscription: paused -> active',
        description: 'The interrupted billing period goes on if it has not ended; otherwise a new period starts now. Not paused: 409.',
        params: IdParams,
        response: { 200: DataEnvelope(Subscription), 409: transitionConflict('the subscription is not paused.') },
      },
      handler: async (request) => ({ data: await catalog.resumeSubscription(requestContext(request), request.params.id) }),
    });

    routes.post('/catalog/subscriptions/:id/cancel', {
      config: { scope: MANAGE },
      schema: {
        ...subscriptions,
        operationId: 'catalogCancelSubscription',
        summary: 'Cancel a subscription now, or at the end of its period',
        description: 'at_period_end true sets cancel_at_period_end (the billing clock ends it at current_period_end); otherwise status canceled and canceled_at now.',
        params: IdParams,
        body: CancelSubscriptionBody,
        response: { 200: DataEnvelope(Subscription), 409: transitionConflict('the subscription is canceled already.') },
      },
      handler: async (request) => ({ data: await catalog.cancelSubscription(requestContext(request), request.params.id, request.body) }),
    });
  };
}
