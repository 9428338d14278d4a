import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { asJson, recordedEvents } from '../../../test/recorded-events.js';
import { DAY_MS, HOUR_MS } from '../../lib/clock.js';
import { JobRunner } from '../../platform/jobs/runner.js';
import { createLogger } from '../../runtime.js';
import { registerCatalogJobs } from './billing-clock.js';
import { BASE, clockDeps, fixtures, type SubscriptionData } from './test-helpers.js';

let platform: TestPlatform;
/** Runs catalog jobs only, as subscriptions.test.ts explains: other files' jobs may share the table. */
let catalogRunner: JobRunner;
beforeAll(async () => {
  platform = await startTestPlatform();
  catalogRunner = new JobRunner({ db: platform.database.db, clock: platform.clock, log: createLogger('silent') });
  registerCatalogJobs(clockDeps(platform, catalogRunner));
});
afterAll(() => platform.close());

const { productWithPrice, createContact, startSubscription, getSubscription } = fixtures(() => platform);

const CREATED = 'catalog.subscription.created';
const RENEWED = 'catalog.subscription.renewed';
const TRIAL_ENDED = 'catalog.subscription.trial_ended';
const PAUSED = 'catalog.subscription.paused';
const RESUMED = 'catalog.subscription.resumed';
const CANCELED = 'catalog.subscription.canceled';

/** A fresh tenant in a fresh era: 10:00 UTC on January 31, years after anything earlier tests left queued. */
async function newTenant() {
  let year = platform.clock.now().getUTCFullYear() + 2;
  while (year % 4 !== 1) year += 1;
  platform.clock.freeze(new Date(Date.UTC(year, 0, 31, 10)));
  const tenant = await platform.newTenant();
  return { tenantId: tenant.id, key: await tenant.key() };
}

async function start(key: string, product: Record<string, unknown> = {}, price: Record<string, unknown> = {}): Promise<SubscriptionData> {
  const made = await productWithPrice(key, product, price);
  const contact = await createContact(key);
  const response = await startSubscription(key, { product_id: made.product.id, contact_id: contact.id });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

function action(key: string, id: string, name: 'pause' | 'resume' | 'cancel', body?: Record<string, unknown>) {
  return call(platform.app, 'POST', `${BASE}/subscriptions/${id}/${name}`, { key, ...(body === undefined ? {} : { body }) });
}

async function act(key: string, id: string, name: 'pause' | 'resume' | 'cancel', body?: Record<string, unknown>): Promise<void> {
  const response = await action(key, id, name, body);
  expect(response.statusCode, response.body).toBe(200);
}

/** Exactly `count` events of `type`, each carrying the subscription as GET shows it now. */
async function expectEvents(tenantId: string, key: string, type: string, subscriptionId: string, count = 1) {
  const recorded = await recordedEvents(platform, tenantId, type);
  expect(recorded).toHaveLength(count);
  const current = asJson(await getSubscription(key, subscriptionId));
  for (const event of recorded) {
    expect(event.livemode).toBe(false);
    expect(asJson(event.data.object)).toEqual(current);
  }
}

describe('catalog.subscription.created', () => {
  it('is recorded once when a subscription starts, with its product and contact names', async () => {
    const { tenantId, key } = await newTenant();
    const subscription = await start(key);
    await expectEvents(tenantId, key, CREATED, subscription.id);
    expect((await recordedEvents(platform, tenantId, CREATED))[0]!.data.object).toMatchObject({ product_name: 'Pro plan', contact_name: 'Ada Lovelace' });
  });

  it('is not recorded for a refused start, and once for a start replayed with its Idempotency-Key', async () => {
    const { tenantId, key } = await newTenant();
    const { product } = await productWithPrice(key);
    const contact = await createContact(key);
    expectError(await startSubscription(key, { product_id: product.id, contact_id: '00000000-0000-4000-8000-000000000000' }), 400, 'validation_failed');
    expectError(await startSubscription(key, { product_id: product.id, contact_id: contact.id, coupon_code: 'NOPE' }), 400, 'validation_failed');
    expect(await recordedEvents(platform, tenantId, CREATED)).toEqual([]);

    const headers = { 'idempotency-key': 'start-once' };
    const body = { product_id: product.id, contact_id: contact.id };
    const first = await call(platform.app, 'POST', `${BASE}/subscriptions`, { key, body, headers });
    const again = await call(platform.app, 'POST', `${BASE}/subscriptions`, { key, body, headers });
    expect(again.json()).toEqual(first.json());
    await expectEvents(tenantId, key, CREATED, first.json().data.id);
  });
});

describe('catalog.subscription.paused, resumed and canceled', () => {
  it('records each action once, and nothing for the refused repeat', async () => {
    const { tenantId, key } = await newTenant();
    const subscription = await start(key);

    await act(key, subscription.id, 'pause');
    await expectEvents(tenantId, key, PAUSED, subscription.id);
    expectError(await action(key, subscription.id, 'pause'), 409, 'invalid_status_transition');
    expect(await recordedEvents(platform, tenantId, PAUSED)).toHaveLength(1);

    await act(key, subscription.id, 'resume');
    await expectEvents(tenantId, key, RESUMED, subscription.id);
    expectError(await action(key, subscription.id, 'resume'), 409, 'invalid_status_transition');
    expect(await recordedEvents(platform, tenantId, RESUMED)).toHaveLength(1);

    await act(key, subscription.id, 'cancel');
    await expectEvents(tenantId, key, CANCELED, subscription.id);
    expectError(await action(key, subscription.id, 'cancel'), 409, 'invalid_status_transition');
    expect(await recordedEvents(platform, tenantId, CANCELED)).toHaveLength(1);
    expect(await recordedEvents(platform, tenantId, PAUSED)).toHaveLength(1);
  });

  it('records nothing for an action refused as stale', async () => {
    const { tenantId, key } = await newTenant();
    const subscription = await start(key);
    await act(key, subscription.id, 'pause');
    await act(key, subscription.id, 'resume');
    expectError(await action(key, subscription.id, 'pause', { expected_updated_at: subscription.updated_at }), 409, 'stale_update');
    expect(await recordedEvents(platform, tenantId, PAUSED)).toHaveLength(1);
  });

  it('records canceled when the billing clock ends a subscription set to cancel at period end, not when it is set', async () => {
    const { tenantId, key } = await newTenant();
    const subscription = await start(key);
    await act(key, subscription.id, 'cancel', { at_period_end: true });
    await act(key, subscription.id, 'cancel', { at_period_end: true });
    expect(await recordedEvents(platform, tenantId, CANCELED)).toEqual([]);

    platform.clock.freeze(new Date(subscription.current_period_end));
    await catalogRunner.runDue();
    expect((await getSubscription(key, subscription.id)).status).toBe('canceled');
    await expectEvents(tenantId, key, CANCELED, subscription.id);
    expect(await recordedEvents(platform, tenantId, RENEWED)).toEqual([]);
  });

  it('records resumed when the billing clock resumes a pause at pause_resumes_at', async () => {
    const { tenantId, key } = await newTenant();
    const subscription = await start(key);
    const resumesAt = new Date(platform.clock.now().getTime() + 3 * DAY_MS);
    await act(key, subscription.id, 'pause', { resumes_at: resumesAt.toISOString() });
    platform.clock.freeze(resumesAt);
    await catalogRunner.runDue();
    expect((await getSubscription(key, subscription.id)).status).toBe('active');
    await expectEvents(tenantId, key, RESUMED, subscription.id);
  });
});

describe('catalog.subscription.trial_ended', () => {
  it('is recorded once when the billing clock ends a trial, with the subscription active in its first paid period', async () => {
    const { tenantId, key } = await newTenant();
    const subscription = await start(key, { free_trial_days: 3 });
    expect(subscription.status).toBe('trialing');
    platform.clock.freeze(new Date(Date.parse(subscription.trial_end!) - 1));
    await catalogRunner.runDue();
    expect(await recordedEvents(platform, tenantId, TRIAL_ENDED)).toEqual([]);

    platform.clock.advance(1);
    await catalogRunner.runDue();
    await catalogRunner.runDue();
    await expectEvents(tenantId, key, TRIAL_ENDED, subscription.id);
    const object = (await recordedEvents(platform, tenantId, TRIAL_ENDED))[0]!.data.object;
    expect(object).toMatchObject({ status: 'active', current_period_start: subscription.trial_end });
    expect(await recordedEvents(platform, tenantId, RENEWED)).toEqual([]);
  });

  it('is not recorded when a trial ends canceled (cancel at period end) or is paused before its end', async () => {
    const { tenantId, key } = await newTenant();
    const canceled = await start(key, { free_trial_days: 3 });
    await act(key, canceled.id, 'cancel', { at_period_end: true });
    const paused = await start(key, { free_trial_days: 3 });
    await act(key, paused.id, 'pause');
    platform.clock.advance(4 * DAY_MS);
    await catalogRunner.runDue();
    expect((await getSubscription(key, canceled.id)).status).toBe('canceled');
    expect(await recordedEvents(platform, tenantId, TRIAL_ENDED)).toEqual([]);
  });

  it('is recorded when an action first applies a trial end the clock has not processed yet, before the action’s own event', async () => {
    const { tenantId, key } = await newTenant();
    const subscription = await start(key, { free_trial_days: 3 });
    platform.clock.freeze(new Date(Date.parse(subscription.trial_end!) + HOUR_MS));
    await act(key, subscription.id, 'pause');
    await expectEvents(tenantId, key, TRIAL_ENDED, subscription.id);
    await expectEvents(tenantId, key, PAUSED, subscription.id);
  });
});

describe('catalog.subscription.renewed', () => {
  it('is recorded once per renewal by the billing clock, and not again by a run that finds nothing due', async () => {
    const { tenantId, key } = await newTenant();
    const subscription = await start(key);
    platform.clock.freeze(new Date(Date.parse(subscription.current_period_end) - 1));
    await catalogRunner.runDue();
    expect(await recordedEvents(platform, tenantId, RENEWED)).toEqual([]);

    platform.clock.advance(1);
    await catalogRunner.runDue();
    await catalogRunner.runDue();
    await expectEvents(tenantId, key, RENEWED, subscription.id);
    expect((await getSubscription(key, subscription.id)).current_period_start).toBe(subscription.current_period_end);
  });

  it('is recorded for every period a late run catches up, and not for the end of a trial (which has its own event)', async () => {
    const { tenantId, key } = await newTenant();
    const subscription = await start(key, { free_trial_days: 3 }, { billing_interval: 'week' });
    platform.clock.advance(3 * DAY_MS + 5 * 7 * DAY_MS + HOUR_MS); // trial end, then five weekly renewals
    await catalogRunner.runDue();
    await expectEvents(tenantId, key, TRIAL_ENDED, subscription.id, 1);
    await expectEvents(tenantId, key, RENEWED, subscription.id, 5);
  });

  it('is recorded when an action first applies a renewal the clock has not processed yet', async () => {
    const { tenantId, key } = await newTenant();
    const subscription = await start(key);
    platform.clock.freeze(new Date(Date.parse(subscription.current_period_end) + HOUR_MS));
    await act(key, subscription.id, 'pause');
    await expectEvents(tenantId, key, RENEWED, subscription.id);
    await expectEvents(tenantId, key, PAUSED, subscription.id);
  });
});
