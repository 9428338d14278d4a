import { expect } from 'vitest';
import { call, type TestPlatform } from '../../../test/harness.js';
import { serviceModules } from '../../app.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import { ServiceRegistry } from '../registry.js';
import type { ClockDeps } from './billing-clock.js';

/** Shared fixtures of the catalog tests (not a test file itself). */

export const BASE = '/api/v1/services/catalog/catalog';
export const CRM = '/api/v1/services/crm';

export interface PriceData {
  id: string;
  product_id: string;
  unit_price_cents: number;
  currency: string;
  billing_interval: string;
  interval_count: number;
  default: boolean;
  [field: string]: unknown;
}

export interface ProductData {
  id: string;
  name: string;
  free_trial_days: number;
  active: boolean;
  default_price_id: string | null;
  prices: PriceData[];
  updated_at: string;
  [field: string]: unknown;
}

export interface CouponData {
  id: string;
  code: string;
  active: boolean;
  redeemable: boolean;
  redeemed_count: number;
  updated_at: string;
  [field: string]: unknown;
}

export interface SubscriptionData {
  id: string;
  status: 'trialing' | 'active' | 'paused' | 'canceled';
  product_id: string;
  price_id: string;
  contact_id: string | null;
  company_id: string | null;
  coupon_id: string | null;
  coupon_code: string | null;
  current_period_start: string;
  current_period_end: string;
  billing_cycle_anchor: string;
  cancel_at_period_end: boolean;
  canceled_at: string | null;
  trial_end: string | null;
  pause_resumes_at: string | null;
  updated_at: string;
  [field: string]: unknown;
}

/** What a billing clock on `jobs` needs, as another process would assemble it: the database, the event log and crm. */
export function clockDeps(platform: TestPlatform, jobs: JobRunner): ClockDeps {
  const services = new ServiceRegistry();
  const crm = serviceModules.find((module) => module.id === 'crm')!;
  services.provide('crm', crm.create({ ...platform.serviceDeps(), jobs }));
  return { db: platform.database.db, jobs, events: platform.runtime.events, services };
}

export function fixtures(getPlatform: () => TestPlatform) {
  const app = () => getPlatform().app;

  async function created<T>(method: string, url: string, key: string, body: unknown): Promise<T> {
    const response = await call(app(), method, url, { key, body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data as T;
  }

  async function ok<T>(method: string, url: string, key: string, body?: unknown): Promise<T> {
    const response = await call(app(), method, url, { key, ...(body === undefined ? {} : { body }) });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data as T;
  }

  return {
    created,
    ok,
    async newKey(): Promise<string> {
      return (await getPlatform().newTenant()).key();
    },
    createProduct(key: string, body: Record<string, unknown> = { name: 'Pro plan' }): Promise<ProductData> {
      return created('POST', `${BASE}/products`, key, body);
    },
    addPrice(key: string, productId: string, body: Record<string, unknown> = { unit_price_cents: 2900, currency: 'usd', billing_interval: 'month' }): Promise<PriceData> {
      return created('POST', `${BASE}/products/${productId}/prices`, key, body);
    },
    /** A product with one price (its default). */
    async productWithPrice(key: string, product: Record<string, unknown> = {}, price: Record<string, unknown> = {}): Promise<{ product: ProductData; price: PriceData }> {
      const made = await created<ProductData>('POST', `${BASE}/products`, key, { name: 'Pro plan', ...product });
      const addedPrice = await created<PriceData>('POST', `${BASE}/products/${made.id}/prices`, key, {
        unit_price_cents: 2900,
        currency: 'usd',
        billing_interval: 'month',
        ...price,
      });
      return { product: made, price: addedPrice };
    },
    createCoupon(key: string, body: Record<string, unknown>): Promise<CouponData> {
      return created('POST', `${BASE}/coupons`, key, body);
    },
    getCoupon(key: string, id: string): Promise<CouponData> {
      return ok('GET', `${BASE}/coupons/${id}`, key);
    },
    createContact(key: string, name = 'Ada Lovelace'): Promise<{ id: string; name: string }> {
      return created('POST', `${CRM}/contacts`, key, { name });
    },
    createCompany(key: string, name = 'Analytical Engines'): Promise<{ id: string; name: string }> {
      return created('POST', `${CRM}/companies`, key, { name });
    },
    startSubscription(key: string, body: Record<string, unknown>) {
      return call(app(), 'POST', `${BASE}/subscriptions`, { key, body });
    },
    getSubscription(key: string, id: string): Promise<SubscriptionData> {
      return ok('GET', `${BASE}/subscriptions/${id}`, key);
    },
  };
}
