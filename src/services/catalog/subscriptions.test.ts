import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from '../../lib/clock.js';
import { JobRunner } from '../../platform/jobs/runner.js';
import { createLogger } from '../../runtime.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import type { BillingEvent } from './billing.js';
import { createSubscriptionClockHandler } from './billing-clock.js';
import { clockJobKey, registerCatalogJobs, SUBSCRIPTION_CLOCK_JOB } from './index.js';
import { BASE, clockDeps, CRM, fixtures, type SubscriptionData } from './test-helpers.js';

let platform: TestPlatform;
/**
 * Runs catalog jobs only. On PostgreSQL every test file of a run shares the jobs table
 * while each has its own clock; a runner of all kinds moved years ahead would run other
 * files' jobs (publish their posts, expire their sessions) early. The app's own runner is
 * exercised once, below, before this file's clock moves.
 */
let catalogRunner: JobRunner;
beforeAll(async () => {
  platform = await startTestPlatform();
  catalogRunner = new JobRunner({ db: platform.database.db, clock: platform.clock, log: createLogger('silent') });
  registerCatalogJobs(clockDeps(platform, catalogRunner));
});
afterAll(() => platform.close());

const { newKey, createProduct, addPrice, productWithPrice, createContact, createCompany, startSubscription, getSubscription, createCoupon, ok } = fixtures(() => platform);

type Status = SubscriptionData['status'];

function runClock() {
  return catalogRunner.runDue();
}

function inFuture(ms: number): Date {
  return new Date(platform.clock.now().getTime() + ms);
}

/**
 * Freezes the clock at 10:00 UTC on January 31 of a year at least two years after the
 * clock's current time, and one after a leap year (so February has 28 days): dates in a
 * test are then exact, later than anything earlier tests left queued, and far from the
 * present of other test files.
 */
function freshEra(): Date {
  let year = platform.clock.now().getUTCFullYear() + 2;
  while (year % 4 !== 1) year += 1;
  const start = new Date(Date.UTC(year, 0, 31, 10, 0, 0, 0));
  platform.clock.freeze(start);
  return start;
}

function utc(year: number, month: number, day: number, hour = 10): string {
  return new Date(Date.UTC(year, month - 1, day, hour)).toISOString();
}

async function customer(key: string, product: Record<string, unknown> = {}, price: Record<string, unknown> = {}) {
  const made = await productWithPrice(key, product, price);
  const contact = await createContact(key);
  return { ...made, contact };
}

async function start(key: string, body: Record<string, unknown>): Promise<SubscriptionData> {
  const response = await startSubscription(key, body);
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

function action(key: string, id: string, name: 'pause' | 'resume' | 'cancel', body?: Record<string, unknown>) {
  return call(platform.app, 'POST', `${BASE}/subscriptions/${id}/${name}`, { key, ...(body === undefined ? {} : { body }) });
}

async function act(key: string, id: string, name: 'pause' | 'resume' | 'cancel', body?: Record<string, unknown>): Promise<SubscriptionData> {
  const response = await action(key, id, name, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

async function queuedClockJobs(subscriptionId: string) {
  return platform.database.db
    .selectFrom('jobs')
    .select(['run_at', 'dedupe_key', 'tenant_id', 'mode', 'payload'])
    .where('kind', '=', SUBSCRIPTION_CLOCK_JOB)
    .where('status', '=', 'queued')
    .where(sql<string>`payload->>'subscription_id'`, '=', subscriptionId)
    .execute();
}

/** A subscription of `key` brought to `status` the way a client would. */
async function subscriptionIn(key: string, status: Status): Promise<SubscriptionData> {
  const { product, contact } = await customer(key, { free_trial_days: status === 'trialing' ? 14 : 0 });
  const subscription = await start(key, { product_id: product.id, contact_id: contact.id });
  if (status === 'paused') return act(key, subscription.id, 'pause');
  if (status === 'canceled') return act(key, subscription.id, 'cancel');
  return subscription;
}

describe('the app runs the billing clock (before this file moves its clock)', () => {
  it('resumes a paused subscription at pause_resumes_at through the runtime job runner', async () => {
    const key = await newKey();
    const subscription = await subscriptionIn(key, 'active');
    const resumesAt = new Date(Math.ceil((platform.clock.now().getTime() + 2 * SECOND_MS) / 1000) * 1000);
    const paused = await act(key, subscription.id, 'pause', { resumes_at: resumesAt.toISOString() });
    expect(paused).toMatchObject({ status: 'paused', pause_resumes_at: resumesAt.toISOString() });
    expect(await queuedClockJobs(subscription.id)).toEqual([
      { run_at: resumesAt, dedupe_key: clockJobKey(subscription.id, resumesAt), tenant_id: expect.any(String), mode: 'test', payload: { subscription_id: subscription.id } },
    ]);
    platform.clock.advance(3 * SECOND_MS);
    await platform.runtime.jobs.runDue();
    expect(await getSubscription(key, subscription.id)).toMatchObject({
      status: 'active',
      pause_resumes_at: null,
      current_period_start: subscription.current_period_start, // resumed within its period: the period goes on
      current_period_end: subscription.current_period_end,
    });
    expect((await queuedClockJobs(subscription.id)).map((job) => job.run_at.toISOString())).toEqual([subscription.current_period_end]);
  });
});

describe('starting a subscription', () => {
  beforeAll(() => void freshEra());

  it('starts active for a product without trial days, with names, the default price and one period', async () => {
    const key = await newKey();
    const { product, price, contact } = await customer(key);
    const now = platform.clock.now();
    const subscription = await start(key, { product_id: product.id, contact_id: contact.id });
    const periodEnd = new Date(now);
    periodEnd.setUTCMonth(periodEnd.getUTCMonth() + 1);
    expect(subscription).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      product_id: product.id,
      product_name: 'Pro plan',
      price_id: price.id,
      contact_id: contact.id,
      contact_name: 'Ada Lovelace',
      company_id: null,
      company_name: null,
      coupon_id: null,
      coupon_code: null,
      discount: null,
      status: 'active',
      quantity: 1,
      unit_price_cents: 2900,
      currency: 'USD',
      billing_interval: 'month',
      interval_count: 1,
      billing_cycle_anchor: now.toISOString(),
      current_period_start: now.toISOString(),
      current_period_end: utc(now.getUTCFullYear(), 2, 28),
      cancel_at_period_end: false,
      canceled_at: null,
      trial_end: null,
      pause_resumes_at: null,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    });
    expect(await getSubscription(key, subscription.id)).toEqual(subscription);
    expect((await queuedClockJobs(subscription.id)).map((job) => job.run_at.toISOString())).toEqual([subscription.current_period_end]);
  });

  it('starts trialing with trial_end when the product has free trial days (spec state table)', async () => {
    const key = await newKey();
    const { product } = await customer(key, { free_trial_days: 14 });
    const company = await createCompany(key, 'Acme Ltd');
    const now = platform.clock.now();
    const subscription = await start(key, { product_id: product.id, company_id: company.id.toUpperCase(), quantity: 10000 });
    const trialEnd = new Date(now.getTime() + 14 * DAY_MS).toISOString();
    expect(subscription).toMatchObject({
      status: 'trialing',
      trial_end: trialEnd,
      current_period_start: now.toISOString(),
      current_period_end: trialEnd,
      billing_cycle_anchor: trialEnd,
      contact_id: null,
      contact_name: null,
      company_id: company.id,
      company_name: 'Acme Ltd',
      quantity: 10000,
    });
  });

  it("uses the price sent, which must be one of the product's", async () => {
    const key = await newKey();
    const { product, contact } = await customer(key);
    const biweekly = await addPrice(key, product.id, { unit_price_cents: 450, currency: 'gbp', billing_interval: 'week', interval_count: 2 });
    const now = platform.clock.now();
    const subscription = await start(key, { product_id: product.id, price_id: biweekly.id, contact_id: contact.id, quantity: 3 });
    expect(subscription).toMatchObject({
      price_id: biweekly.id,
      unit_price_cents: 450,
      currency: 'GBP',
      billing_interval: 'week',
      interval_count: 2,
      quantity: 3,
      current_period_end: new Date(now.getTime() + 14 * DAY_MS).toISOString(),
    });
    const { price: otherPrice } = await productWithPrice(key);
    for (const price_id of [otherPrice.id, 'nope', '00000000-0000-4000-8000-000000000000']) {
      const error = expectError(await startSubscription(key, { product_id: product.id, price_id, contact_id: contact.id }), 400, 'validation_failed');
      expect(error.details[0]).toMatchObject({ path: 'price_id', code: 'not_found' });
    }
  });

  it('needs exactly one existing crm contact or company of the same tenant and mode', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const { product, contact } = await customer(key);
    const company = await createCompany(key);
    const refused = async (body: Record<string, unknown>, path: string, code: string) => {
      const error = expectError(await startSubscription(key, { product_id: product.id, ...body }), 400, 'validation_failed');
      expect(error.details[0], JSON.stringify(body)).toMatchObject({ path, code });
    };
    await refused({ contact_id: contact.id, company_id: company.id }, 'company_id', 'invalid');
    await refused({}, 'contact_id', 'required');
    await refused({ contact_id: 'nope' }, 'contact_id', 'not_found');
    await refused({ contact_id: '00000000-0000-4000-8000-000000000000' }, 'contact_id', 'not_found');
    await refused({ contact_id: company.id }, 'contact_id', 'not_found');
    await refused({ company_id: contact.id }, 'company_id', 'not_found');
    await refused({ contact_id: (await createContact(await newKey())).id }, 'contact_id', 'not_found');
    const liveKey = await tenant.key({ mode: 'live' });
    const liveContact = await createContact(liveKey);
    await refused({ contact_id: liveContact.id }, 'contact_id', 'not_found');
  });

  it('needs an existing, active product with a price', async () => {
    const key = await newKey();
    const contact = await createContact(key);
    const refused = async (body: Record<string, unknown>, path: string, code: string) => {
      const error = expectError(await startSubscription(key, { contact_id: contact.id, ...body }), 400, 'validation_failed');
      expect(error.details[0], JSON.stringify(body)).toMatchObject({ path, code });
    };
    await refused({ product_id: 'nope' }, 'product_id', 'not_found');
    await refused({ product_id: '00000000-0000-4000-8000-000000000000' }, 'product_id', 'not_found');
    await refused({ product_id: (await productWithPrice(await newKey())).product.id }, 'product_id', 'not_found');
    const { product } = await productWithPrice(key, { active: false });
    await refused({ product_id: product.id }, 'product_id', 'inactive');
    const bare = await createProduct(key, { name: 'No prices' });
    await refused({ product_id: bare.id }, 'price_id', 'required');
  });

  it('refuses hostile bodies with 400, never 5xx', async () => {
    const key = await newKey();
    const { product, contact } = await customer(key);
    const valid = { product_id: product.id, contact_id: contact.id };
    for (const body of [
      {},
      { ...valid, quantity: 0 },
      { ...valid, quantity: 10001 },
      { ...valid, quantity: 1.5 },
      { ...valid, quantity: '2' },
      { ...valid, quantity: null },
      { ...valid, quantity: 1e300 },
      { ...valid, product_id: null },
      { ...valid, product_id: 42 },
      { ...valid, product_id: '' },
      { ...valid, product_id: 'x'.repeat(201) },
      { ...valid, contact_id: null },
      { ...valid, contact_id: ['a'] },
      { ...valid, status: 'active' },
      { ...valid, unit_price_cents: 1 },
    ]) {
      expectError(await startSubscription(key, body), 400, 'validation_failed');
    }
    expectError(await call(platform.app, 'POST', `${BASE}/subscriptions`, { key, body: 'null' }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', `${BASE}/subscriptions`, { key, body: '[]' }), 400, 'validation_failed');
    expect((await call(platform.app, 'GET', `${BASE}/subscriptions`, { key })).json().meta.total).toBe(0);
  });

  it('replays a start sent again with the same Idempotency-Key, redeeming the code once', async () => {
    const key = await newKey();
    const { product, contact } = await customer(key);
    const coupon = await createCoupon(key, { code: 'ONCE', percent_off: 10 });
    const headers = { 'idempotency-key': 'start-1' };
    const body = { product_id: product.id, contact_id: contact.id, coupon_code: 'ONCE' };
    const first = await call(platform.app, 'POST', `${BASE}/subscriptions`, { key, body, headers });
    const again = await call(platform.app, 'POST', `${BASE}/subscriptions`, { key, body, headers });
    expect(first.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect((await ok<{ redeemed_count: number }>('GET', `${BASE}/coupons/${coupon.id}`, key)).redeemed_count).toBe(1);
    expectError(await call(platform.app, 'POST', `${BASE}/subscriptions`, { key, body: { ...body, quantity: 2 }, headers }), 409, 'idempotency_key_conflict');
  });
});

describe('reading and listing', () => {
  it('lists newest first with filters, and shows the current crm names', async () => {
    const key = await newKey();
    const { product, contact } = await customer(key, { name: 'Basic' });
    const { product: pro } = await customer(key, { name: 'Pro', free_trial_days: 7 });
    const company = await createCompany(key, 'Acme');
    const first = await start(key, { product_id: product.id, contact_id: contact.id });
    platform.clock.advance(1);
    const second = await start(key, { product_id: pro.id, company_id: company.id });
    platform.clock.advance(1);
    const third = await start(key, { product_id: pro.id, contact_id: contact.id });
    await act(key, third.id, 'pause');

    const ids = async (query: string) => (await call(platform.app, 'GET', `${BASE}/subscriptions?${query}`, { key })).json().data.map((s: SubscriptionData) => s.id);
    expect(await ids('')).toEqual([third.id, second.id, first.id]);
    expect(await ids('status=trialing')).toEqual([second.id]);
    expect(await ids('status=paused')).toEqual([third.id]);
    expect(await ids('status=canceled')).toEqual([]);
    expect(await ids(`contact_id=${contact.id}`)).toEqual([third.id, first.id]);
    expect(await ids(`company_id=${company.id.toUpperCase()}`)).toEqual([second.id]);
    expect(await ids(`product_id=${pro.id}&contact_id=${contact.id}`)).toEqual([third.id]);
    const page = (await call(platform.app, 'GET', `${BASE}/subscriptions?limit=2&offset=1`, { key })).json();
    expect(page.meta).toEqual({ limit: 2, offset: 1, total: 3, has_more: false });
    expect(page.data.map((s: SubscriptionData) => [s.product_name, s.contact_name, s.company_name])).toEqual([
      ['Pro', null, 'Acme'],
      ['Basic', 'Ada Lovelace', null],
    ]);

    // Names are read when shown, so renaming in crm (or the product) shows at once.
    await ok('PATCH', `${CRM}/contacts/${contact.id}`, key, { name: 'Ada King' });
    await ok('PATCH', `${BASE}/products/${product.id}`, key, { name: 'Basic (legacy)' });
    expect(await getSubscription(key, first.id)).toMatchObject({ contact_name: 'Ada King', product_name: 'Basic (legacy)' });

    for (const query of ['status=live', 'contact_id=nope', 'company_id=1', 'product_id=', 'limit=500', 'offset=abc', 'search=x']) {
      expectError(await call(platform.app, 'GET', `${BASE}/subscriptions?${query}`, { key }), 400, 'validation_failed');
    }
  });

  it('answers unknown, malformed and foreign subscription ids with 404 on every route', async () => {
    const key = await newKey();
    const foreign = await subscriptionIn(await newKey(), 'active');
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000', foreign.id]) {
      expectError(await call(platform.app, 'GET', `${BASE}/subscriptions/${id}`, { key }), 404, 'not_found');
      for (const name of ['pause', 'resume', 'cancel'] as const) expectError(await action(key, id, name), 404, 'not_found');
    }
  });
});

describe('the status state machine (spec rows: resume only from paused, else 409)', () => {
  const statuses: Status[] = ['trialing', 'active', 'paused', 'canceled'];
  type Action = 'pause' | 'resume' | 'cancel now' | 'cancel at period end';
  const expected: Record<Action, Partial<Record<Status, Status>>> = {
    pause: { trialing: 'paused', active: 'paused' },
    resume: { paused: 'active' },
    'cancel now': { trialing: 'canceled', active: 'canceled', paused: 'canceled' },
    'cancel at period end': { trialing: 'trialing', active: 'active', paused: 'paused' },
  };
  const allowed: Record<Status, Status[]> = { trialing: ['active', 'paused', 'canceled'], active: ['paused', 'canceled'], paused: ['active', 'canceled'], canceled: [] };
  const cases = (Object.keys(expected) as Action[]).flatMap((name) => statuses.map((from) => ({ name, from })));

  it.each(cases)('$from: $name', async ({ name, from }) => {
    const key = await newKey();
    const subscription = await subscriptionIn(key, from);
    platform.clock.advance(MINUTE_MS);
    const reply =
      name === 'pause'
        ? await action(key, subscription.id, 'pause')
        : name === 'resume'
          ? await action(key, subscription.id, 'resume')
          : await action(key, subscription.id, 'cancel', name === 'cancel now' ? {} : { at_period_end: true });
    const to = expected[name][from];
    if (to !== undefined) {
      expect(reply.statusCode, reply.body).toBe(200);
      const moved = reply.json().data as SubscriptionData;
      expect(moved.status).toBe(to);
      expect(Date.parse(moved.updated_at)).toBeGreaterThan(Date.parse(subscription.updated_at));
      if (name === 'cancel now') expect(moved.canceled_at).toBe(platform.clock.now().toISOString());
      if (name === 'cancel at period end') expect(moved).toMatchObject({ cancel_at_period_end: true, canceled_at: null, current_period_end: subscription.current_period_end });
    } else {
      const target = name === 'pause' ? 'paused' : name === 'resume' ? 'active' : 'canceled';
      const error = expectError(reply, 409, 'invalid_status_transition');
      expect(error.details[0]).toEqual({ path: 'status', code: 'invalid_transition', message: expect.any(String), from, to: target, allowed: allowed[from] });
      expect(await getSubscription(key, subscription.id)).toEqual(subscription);
    }
  });
});

describe('pause, resume and cancel', () => {
  it('pausing a trial ends it; resuming starts the first paid period then', async () => {
    const key = await newKey();
    const trialing = await subscriptionIn(key, 'trialing');
    platform.clock.advance(3 * DAY_MS);
    const pausedAt = platform.clock.now().toISOString();
    const paused = await act(key, trialing.id, 'pause');
    expect(paused).toMatchObject({ status: 'paused', trial_end: pausedAt, current_period_end: pausedAt, pause_resumes_at: null });
    expect(await queuedClockJobs(trialing.id)).toEqual([]); // nothing to do until someone resumes it
    platform.clock.advance(DAY_MS);
    const resumedAt = platform.clock.now();
    const resumed = await act(key, trialing.id, 'resume');
    expect(resumed).toMatchObject({
      status: 'active',
      trial_end: pausedAt,
      billing_cycle_anchor: resumedAt.toISOString(),
      current_period_start: resumedAt.toISOString(),
    });
    expect(Date.parse(resumed.current_period_end)).toBeGreaterThan(resumedAt.getTime() + 27 * DAY_MS);
    expect((await queuedClockJobs(trialing.id)).map((job) => job.run_at.toISOString())).toEqual([resumed.current_period_end]);
  });

  it('checks resumes_at, and accepts no body, an empty body or null', async () => {
    const key = await newKey();
    const subscription = await subscriptionIn(key, 'active');
    for (const resumes_at of [platform.clock.now().toISOString(), '2001-01-01T00:00:00.000Z']) {
      const error = expectError(await action(key, subscription.id, 'pause', { resumes_at }), 400, 'validation_failed');
      expect(error.details[0]).toMatchObject({ path: 'resumes_at', code: 'out_of_range' });
    }
    for (const body of [{ resumes_at: 'tomorrow' }, { resumes_at: 12 }, { resumes_at: '2030-01-01' }, { until: 'x' }]) {
      expectError(await action(key, subscription.id, 'pause', body), 400, 'validation_failed');
    }
    expect((await getSubscription(key, subscription.id)).status).toBe('active');
    expect((await act(key, subscription.id, 'pause', { resumes_at: null })).pause_resumes_at).toBeNull();
    expectError(await action(key, subscription.id, 'resume', { now: true }), 400, 'validation_failed');
    expect((await act(key, subscription.id, 'resume', {})).status).toBe('active');
  });

  it('cancel at period end twice is a no-op; cancel now then ends it; canceled is final', async () => {
    const key = await newKey();
    const subscription = await subscriptionIn(key, 'active');
    const flagged = await act(key, subscription.id, 'cancel', { at_period_end: true });
    platform.clock.advance(MINUTE_MS);
    expect(await act(key, subscription.id, 'cancel', { at_period_end: true })).toEqual(flagged);
    expectError(await action(key, subscription.id, 'cancel', { at_period_end: 'yes' }), 400, 'validation_failed');
    const canceled = await act(key, subscription.id, 'cancel', { at_period_end: false });
    expect(canceled).toMatchObject({ status: 'canceled', canceled_at: platform.clock.now().toISOString() });
    expect(await queuedClockJobs(subscription.id)).toEqual([]);
    for (const name of ['pause', 'resume', 'cancel'] as const) expectError(await action(key, subscription.id, name), 409, 'invalid_status_transition');
  });

  it('refuses an action based on a stale read with 409 stale_update', async () => {
    const key = await newKey();
    const subscription = await subscriptionIn(key, 'active');
    const paused = await act(key, subscription.id, 'pause');
    await act(key, subscription.id, 'resume');
    expectError(await action(key, subscription.id, 'pause', { expected_updated_at: paused.updated_at }), 409, 'stale_update');
    expectError(await action(key, subscription.id, 'cancel', { expected_updated_at: subscription.updated_at }), 409, 'stale_update');
    const fresh = await getSubscription(key, subscription.id);
    expect((await act(key, subscription.id, 'cancel', { expected_updated_at: fresh.updated_at })).status).toBe('canceled');
  });

  it('applies a boundary the clock has not processed yet before acting (a passed pause_resumes_at makes resume 409)', async () => {
    const key = await newKey();
    const subscription = await subscriptionIn(key, 'active');
    await act(key, subscription.id, 'pause', { resumes_at: inFuture(HOUR_MS).toISOString() });
    platform.clock.advance(2 * HOUR_MS);
    const error = expectError(await action(key, subscription.id, 'resume'), 409, 'invalid_status_transition');
    expect(error.details[0]).toMatchObject({ from: 'active', to: 'active' });
    expect((await act(key, subscription.id, 'pause')).status).toBe('paused');
  });
});

describe('the billing clock', () => {
  it('renews at period end and not before, on calendar months that keep the anchor day (Jan 31 -> Feb 28 -> Mar 31)', async () => {
    const startAt = freshEra();
    const year = startAt.getUTCFullYear();
    const key = await newKey();
    const { product, contact } = await customer(key);
    const subscription = await start(key, { product_id: product.id, contact_id: contact.id });
    expect(subscription.current_period_end).toBe(utc(year, 2, 28));

    platform.clock.freeze(new Date(Date.parse(utc(year, 2, 28)) - 1));
    await runClock();
    expect(await getSubscription(key, subscription.id)).toEqual(subscription);

    platform.clock.advance(1);
    await runClock();
    const renewed = await getSubscription(key, subscription.id);
    expect(renewed).toMatchObject({ status: 'active', billing_cycle_anchor: startAt.toISOString(), current_period_start: utc(year, 2, 28), current_period_end: utc(year, 3, 31) });
    expect(Date.parse(renewed.updated_at)).toBeGreaterThan(Date.parse(subscription.updated_at));
    expect((await queuedClockJobs(subscription.id)).map((job) => job.run_at.toISOString())).toEqual([utc(year, 3, 31)]);

    platform.clock.freeze(new Date(utc(year, 4, 1)));
    await runClock();
    expect(await getSubscription(key, subscription.id)).toMatchObject({ current_period_start: utc(year, 3, 31), current_period_end: utc(year, 4, 30) });
  });

  it('ends a trial at trial_end: trialing -> active, the paid periods anchored at trial_end', async () => {
    const startAt = freshEra();
    const key = await newKey();
    const { product, contact } = await customer(key, { free_trial_days: 14 });
    const subscription = await start(key, { product_id: product.id, contact_id: contact.id });
    const trialEnd = new Date(startAt.getTime() + 14 * DAY_MS).toISOString();
    platform.clock.advance(14 * DAY_MS - 1);
    await runClock();
    expect((await getSubscription(key, subscription.id)).status).toBe('trialing');
    platform.clock.advance(1);
    await runClock();
    expect(await getSubscription(key, subscription.id)).toMatchObject({
      status: 'active',
      trial_end: trialEnd,
      billing_cycle_anchor: trialEnd,
      current_period_start: trialEnd,
      current_period_end: utc(startAt.getUTCFullYear(), 3, 14),
    });
  });

  it('catches up every missed boundary in one run when the clock jumps several periods', async () => {
    const startAt = freshEra();
    const key = await newKey();
    const { product, contact } = await customer(key, { free_trial_days: 3 }, { billing_interval: 'week' });
    const subscription = await start(key, { product_id: product.id, contact_id: contact.id });
    platform.clock.advance(3 * DAY_MS + 5 * 7 * DAY_MS + HOUR_MS); // trial end, then five weekly renewals
    await runClock();
    const trialEnd = startAt.getTime() + 3 * DAY_MS;
    expect(await getSubscription(key, subscription.id)).toMatchObject({
      status: 'active',
      current_period_start: new Date(trialEnd + 5 * 7 * DAY_MS).toISOString(),
      current_period_end: new Date(trialEnd + 6 * 7 * DAY_MS).toISOString(),
    });
    expect(await queuedClockJobs(subscription.id)).toHaveLength(1);
  });

  it('applies cancel_at_period_end at the period end: canceled, canceled_at = period end, nothing queued after', async () => {
    freshEra();
    const key = await newKey();
    const subscription = await subscriptionIn(key, 'active');
    await act(key, subscription.id, 'cancel', { at_period_end: true });
    platform.clock.advance(60 * DAY_MS);
    await runClock();
    expect(await getSubscription(key, subscription.id)).toMatchObject({
      status: 'canceled',
      cancel_at_period_end: true,
      canceled_at: subscription.current_period_end,
      current_period_end: subscription.current_period_end,
    });
    expect(await queuedClockJobs(subscription.id)).toEqual([]);
    // A trial set to cancel ends with the trial.
    const trialing = await subscriptionIn(key, 'trialing');
    await act(key, trialing.id, 'cancel', { at_period_end: true });
    platform.clock.advance(15 * DAY_MS);
    await runClock();
    expect(await getSubscription(key, trialing.id)).toMatchObject({ status: 'canceled', canceled_at: trialing.trial_end });
  });

  it('does not renew a paused subscription, and resumes it at pause_resumes_at into a new period', async () => {
    const startAt = freshEra();
    const year = startAt.getUTCFullYear();
    const key = await newKey();
    const subscription = await subscriptionIn(key, 'active');
    const resumesAt = utc(year, 4, 15, 12);
    await act(key, subscription.id, 'pause', { resumes_at: resumesAt });
    platform.clock.freeze(new Date(utc(year, 4, 1)));
    await runClock();
    expect(await getSubscription(key, subscription.id)).toMatchObject({ status: 'paused', current_period_end: utc(year, 2, 28) });
    platform.clock.freeze(new Date(utc(year, 5, 1)));
    await runClock();
    expect(await getSubscription(key, subscription.id)).toMatchObject({
      status: 'active',
      pause_resumes_at: null,
      billing_cycle_anchor: resumesAt,
      current_period_start: resumesAt,
      current_period_end: utc(year, 5, 15, 12),
    });
  });

  it('moves its job when an action changes the next boundary, and leaves none for a paused subscription without a date', async () => {
    freshEra();
    const key = await newKey();
    const subscription = await subscriptionIn(key, 'active');
    const when = inFuture(3 * DAY_MS);
    await act(key, subscription.id, 'pause', { resumes_at: when.toISOString() });
    expect((await queuedClockJobs(subscription.id)).map((job) => job.dedupe_key)).toEqual([clockJobKey(subscription.id, when)]);
    await act(key, subscription.id, 'resume');
    expect((await queuedClockJobs(subscription.id)).map((job) => job.run_at.toISOString())).toEqual([subscription.current_period_end]);
    await act(key, subscription.id, 'pause');
    expect(await queuedClockJobs(subscription.id)).toEqual([]);
  });

  it('applies each boundary exactly once with several runners and duplicated jobs, and survives a restart', async () => {
    const startAt = freshEra();
    const key = await newKey();
    const { product, contact } = await customer(key, { free_trial_days: 1 }, { billing_interval: 'day' });
    const subscriptions = await Promise.all(Array.from({ length: 4 }, () => start(key, { product_id: product.id, contact_id: contact.id })));
    const tenantId = (await queuedClockJobs(subscriptions[0]!.id))[0]!.tenant_id!;

    const applied: Array<{ id: string; events: BillingEvent[] }> = [];
    // New processes know nothing but what the database holds.
    const runners = [0, 1, 2].map(() => {
      const runner = new JobRunner({ db: platform.database.db, clock: platform.clock, log: createLogger('silent') });
      registerCatalogJobs(clockDeps(platform, runner), { onEvents: (id, events) => void applied.push({ id, events }) });
      return runner;
    });
    // A duplicate job per subscription, as if delivered twice.
    for (const subscription of subscriptions) {
      await runners[0]!.enqueue({
        kind: SUBSCRIPTION_CLOCK_JOB,
        runAt: new Date(subscription.current_period_end),
        tenantId,
        mode: 'test',
        payload: { subscription_id: subscription.id },
      });
    }
    platform.clock.advance(DAY_MS + 2 * DAY_MS + HOUR_MS); // trial end, then two daily renewals
    await Promise.all(runners.map((runner) => runner.runDue()));
    await Promise.all(runners.map((runner) => runner.runDue()));

    const mine = applied.filter((entry) => subscriptions.some((subscription) => subscription.id === entry.id));
    expect(mine.map((entry) => entry.id).sort()).toEqual(subscriptions.map((subscription) => subscription.id).sort());
    for (const entry of mine) {
      expect(entry.events).toEqual([
        { type: 'trial_ended', at: new Date(startAt.getTime() + DAY_MS) },
        { type: 'renewed', at: new Date(startAt.getTime() + 3 * DAY_MS), periods: 2 },
      ]);
    }
    for (const subscription of subscriptions) {
      expect(await getSubscription(key, subscription.id)).toMatchObject({
        status: 'active',
        current_period_start: new Date(startAt.getTime() + 3 * DAY_MS).toISOString(),
      });
      expect(await queuedClockJobs(subscription.id)).toHaveLength(1);
    }
  });

  it('ignores jobs it cannot act on: another mode, an unknown subscription, a bad payload', async () => {
    freshEra();
    const key = await newKey();
    const subscription = await subscriptionIn(key, 'active');
    const [job] = await queuedClockJobs(subscription.id);
    const handler = createSubscriptionClockHandler(clockDeps(platform, catalogRunner));
    const claimed = {
      id: '0',
      kind: SUBSCRIPTION_CLOCK_JOB,
      tenantId: job!.tenant_id,
      mode: 'test' as const,
      payload: { subscription_id: subscription.id },
      attempts: 1,
      maxAttempts: 30,
      runAt: job!.run_at,
    };
    const later = new Date(Date.parse(subscription.current_period_end) + HOUR_MS);
    for (const variant of [
      { mode: 'live' as const },
      { payload: { subscription_id: '00000000-0000-4000-8000-000000000000' } },
      { payload: { subscription_id: 'nope' } },
      { payload: {} },
      { tenantId: null },
    ]) {
      await handler({ ...claimed, ...variant }, later);
    }
    expect(await getSubscription(key, subscription.id)).toEqual(subscription);
    // Too early: nothing is due yet, nothing changes.
    await handler(claimed, platform.clock.now());
    expect(await getSubscription(key, subscription.id)).toEqual(subscription);
    await handler(claimed, later);
    expect((await getSubscription(key, subscription.id)).current_period_start).toBe(subscription.current_period_end);
  });
});

describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.catalog.manage',
  setup: (key) => customer(key),
  url: () => `${BASE}/subscriptions`,
  body: (fixture: Awaited<ReturnType<typeof customer>>) => ({ product_id: fixture.product.id, contact_id: fixture.contact.id }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.catalog.view', url: () => `${BASE}/subscriptions`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.catalog.view',
  setup: (key) => subscriptionIn(key, 'active'),
  url: (subscription: SubscriptionData) => `${BASE}/subscriptions/${subscription.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.catalog.manage',
  setup: (key) => subscriptionIn(key, 'active'),
  url: (subscription: SubscriptionData) => `${BASE}/subscriptions/${subscription.id}/pause`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.catalog.manage',
  setup: (key) => subscriptionIn(key, 'paused'),
  url: (subscription: SubscriptionData) => `${BASE}/subscriptions/${subscription.id}/resume`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.catalog.manage',
  setup: (key) => subscriptionIn(key, 'active'),
  url: (subscription: SubscriptionData) => `${BASE}/subscriptions/${subscription.id}/cancel`,
  body: () => ({ at_period_end: true }),
  addressesOneRow: true,
});
