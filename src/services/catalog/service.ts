import type { Db } from '../../db/database.js';
import type { OwnedInsert } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { normalizeCurrency } from '../../lib/currency.js';
import { minorUnitsProblem } from '../../lib/money.js';
import { isUuid, newId } from '../../lib/ids.js';
import { groupBy } from '../../lib/group.js';
import { cleanText } from '../../lib/text.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import type { EventLog } from '../../platform/events/event-log.js';
import { AppError, invalidField, notFound, validationFailed, type ErrorDetail } from '../../platform/errors/app-error.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import type { ServiceRegistry } from '../registry.js';
import { cancelNow, MAX_INTERVAL_COUNT, nextEventAt, pause, resume, startState, STATUS_MOVES, advance, type BillingState } from './billing.js';
import { billingStateOf, rescheduleClock } from './billing-clock.js';
import { clockEventTypes, recordSubscriptionEvents, statusEventTypes } from './events.js';
import { presentCoupon, presentPrice, presentProduct } from './present.js';
import * as repository from './repository.js';
import type { CatalogDb, CouponRow, PriceRow, ProductRow, SubscriptionFilters, SubscriptionRow } from './repository.js';
import { createSubscriptionViews, type CustomerNames } from './subscription-views.js';
import type {
  CancelSubscriptionInput,
  CouponView,
  CreateCouponInput,
  CreatePriceInput,
  CreateProductInput,
  PauseSubscriptionInput,
  PriceView,
  ProductView,
  StartSubscriptionInput,
  SubscriptionView,
  UpdateCouponInput,
  UpdateProductInput,
} from './schemas.js';
import type { CatalogSubscriptionsTable, SubscriptionStatus } from './tables.js';

/** Why a coupon cannot be redeemed now, as `details[0].code` of coupon_not_redeemable. */
export type CouponRefusal = 'inactive' | 'not_started' | 'expired' | 'exhausted' | 'currency_mismatch';

export interface CatalogDeps {
  db: Db;
  jobs: JobRunner;
  events: EventLog;
  services: ServiceRegistry;
}

/** Products and prices, discount codes, and subscriptions of crm contacts or companies. */
export function createCatalogService({ db, jobs, events, services }: CatalogDeps) {
  const catalog = repository.catalogDb(db);
  const views = createSubscriptionViews(catalog, services);

  /** Runs `work` in one transaction; `tx` is for the catalog tables, `jobsDb` for the job runner. */
  function inTransaction<T>(work: (tx: CatalogDb, jobsDb: Db) => Promise<T>): Promise<T> {
    return db.transaction().execute((tx) => work(repository.catalogDb(tx), tx));
  }

  async function requireProduct(tx: CatalogDb, ctx: RequestContext, id: string, options: { forUpdate?: boolean } = {}): Promise<ProductRow> {
    const row = await repository.findProduct(tx, ctx, id, options);
    if (!row) throw notFound('Product');
    return row;
  }

  async function requireCoupon(tx: CatalogDb, ctx: RequestContext, id: string, options: { forUpdate?: boolean } = {}): Promise<CouponRow> {
    const row = await repository.findCoupon(tx, ctx, id, options);
    if (!row) throw notFound('Coupon');
    return row;
  }

  async function requireSubscription(tx: CatalogDb, ctx: RequestContext, id: string, options: { forUpdate?: boolean } = {}): Promise<SubscriptionRow> {
    const row = await repository.findSubscription(tx, ctx, id, options);
    if (!row) throw notFound('Subscription');
    return row;
  }

  async function productView(tx: CatalogDb, ctx: RequestContext, row: ProductRow): Promise<ProductView> {
    return presentProduct(row, await repository.pricesOfProducts(tx, ctx, [row.id]));
  }

  /**
   * The 400 naming the first problem of a subscription's customer (exactly one of contact_id
   * and company_id, existing in crm); else the customer and the crm name its views show.
   */
  async function requireCustomer(
    ctx: RequestContext,
    input: StartSubscriptionInput,
  ): Promise<{ customer: { contact_id: string | null; company_id: string | null }; names: CustomerNames }> {
    if (input.contact_id !== undefined && input.company_id !== undefined) {
      throw invalidField('company_id', 'invalid', 'Send contact_id or company_id, not both: a subscription belongs to one customer.');
    }
    if (input.contact_id === undefined && input.company_id === undefined) {
      throw invalidField('contact_id', 'required', 'Send contact_id or company_id: the crm contact or company that subscribes.');
    }
    const crm = services.get('crm');
    if (input.contact_id !== undefined) {
      const contactId = input.contact_id.toLowerCase();
      const contacts = isUuid(contactId) ? await crm.contactsById(ctx, [contactId]) : new Map<string, { name: string }>();
      if (!contacts.has(contactId)) throw invalidField('contact_id', 'not_found', 'No crm contact with this id.');
      return { customer: { contact_id: contactId, company_id: null }, names: { contacts, companies: new Map() } };
    }
    const companyId = input.company_id!.toLowerCase();
    const companies = isUuid(companyId) ? await crm.companiesById(ctx, [companyId]) : new Map<string, { name: string }>();
    if (!companies.has(companyId)) throw invalidField('company_id', 'not_found', 'No crm company with this id.');
    return { customer: { contact_id: null, company_id: companyId }, names: { contacts: new Map(), companies } };
  }

  /**
   * Redeems the coupon for a subscription in `price`'s currency, inside the caller's
   * transaction (rolled back with it if the subscription is not created).
   */
  async function redeem(tx: CatalogDb, ctx: RequestContext, sentCode: string, price: PriceRow): Promise<CouponRow> {
    const code = sentCode.trim();
    const coupon = code === '' ? undefined : await repository.findCouponByCode(tx, ctx, code);
    if (!coupon) throw invalidField('coupon_code', 'not_found', 'No discount code like this exists in the workspace.');
    if (coupon.discount_type === 'amount' && coupon.currency !== price.currency) {
      throw couponNotRedeemable(coupon, 'currency_mismatch', `The code takes an amount off in ${coupon.currency}; the price is in ${price.currency}.`);
    }
    const redeemed = await repository.redeemCoupon(tx, ctx, coupon.id, ctx.now, ctx.now);
    if (redeemed) return redeemed;
    // The conditional increment refused: read it again (a concurrent redemption may have used it up) to say why.
    const current = (await repository.findCoupon(tx, ctx, coupon.id)) ?? coupon;
    const reason = refusalOf(current, ctx.now);
    throw couponNotRedeemable(current, reason, REFUSAL_MESSAGES[reason]);
  }

  /**
   * Locks the subscription, brings it up to date with the billing clock (a boundary that
   * passed but was not yet processed counts as passed), then applies `change`, which may
   * throw. Writes the result, moves the clock job and records the events of both (the
   * clock's renewals, then the change of status) in the same transaction.
   */
  async function changeSubscription(
    ctx: RequestContext,
    id: string,
    expectedUpdatedAt: string | undefined,
    change: (state: BillingState) => BillingState | 'unchanged',
  ): Promise<SubscriptionView> {
    // The crm names the result and its events show are read before the transaction (see subscription-views.ts).
    const names = await views.customerNames(ctx, [await requireSubscription(catalog, ctx, id)]);
    return inTransaction(async (tx, jobsDb) => {
      const current = await requireSubscription(tx, ctx, id, { forUpdate: true });
      assertFresh(expectedUpdatedAt, current.updated_at);
      const { state: upToDate, events: due } = advance(billingStateOf(current), ctx.now);
      const changed = change(upToDate);
      if (changed === 'unchanged' && due.length === 0) return views.one(tx, ctx, current, names);
      const state = changed === 'unchanged' ? upToDate : changed;
      const next = nextEventAt(state);
      const updated = await repository.updateSubscription(tx, ctx, id, {
        ...state,
        next_event_at: next,
        updated_at: nextUpdatedAt(current.updated_at, ctx.now),
      });
      await rescheduleClock(jobs, jobsDb, ctx, id, current.next_event_at, next);
      const view = await views.one(tx, ctx, updated, names);
      await recordSubscriptionEvents(events, tx, ctx, [...clockEventTypes(due), ...statusEventTypes(upToDate.status, state.status)], view);
      return view;
    });
  }

  return {
    // Products and prices

    async createProduct(ctx: RequestContext, input: CreateProductInput): Promise<ProductView> {
      const row = await repository.insertProduct(catalog, ctx, {
        id: newId(),
        name: input.name.trim(),
        description: cleanText(input.description) ?? null,
        free_trial_days: input.free_trial_days ?? 0,
        active: input.active ?? true,
        default_price_id: null,
        created_at: ctx.now,
        updated_at: ctx.now,
      });
      return presentProduct(row, []);
    },

    async getProduct(ctx: RequestContext, id: string): Promise<ProductView> {
      return productView(catalog, ctx, await requireProduct(catalog, ctx, id));
    },

    async listProducts(ctx: RequestContext, filters: { active?: 'true' | 'false' }, page: PageRequest) {
      const { rows, total } = await repository.listProducts(catalog, ctx, { active: toBoolean(filters.active) }, page);
      const prices = await repository.pricesOfProducts(
        catalog,
        ctx,
        rows.map((row) => row.id),
      );
      const pricesOf = groupBy(prices, (price) => price.product_id);
      return { rows: rows.map((row) => presentProduct(row, pricesOf.get(row.id) ?? [])), total };
    },

    async updateProduct(ctx: RequestContext, id: string, input: UpdateProductInput): Promise<ProductView> {
      return inTransaction(async (tx) => {
        const current = await requireProduct(tx, ctx, id, { forUpdate: true });
        assertFresh(input.expected_updated_at, current.updated_at);
        if (input.default_price_id !== undefined) {
          const price = isUuid(input.default_price_id) ? await repository.findPrice(tx, ctx, id, input.default_price_id) : undefined;
          if (!price) throw invalidField('default_price_id', 'not_found', 'The product has no price with this id.');
        }
        const row = await repository.updateProduct(tx, ctx, id, {
          ...(input.name !== undefined ? { name: input.name.trim() } : {}),
          ...(input.description !== undefined ? { description: cleanText(input.description) ?? null } : {}),
          ...(input.free_trial_days !== undefined ? { free_trial_days: input.free_trial_days } : {}),
          ...(input.active !== undefined ? { active: input.active } : {}),
          ...(input.default_price_id !== undefined ? { default_price_id: input.default_price_id.toLowerCase() } : {}),
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        return productView(tx, ctx, row);
      });
    },

    async createPrice(ctx: RequestContext, productId: string, input: CreatePriceInput): Promise<PriceView> {
      const currency = normalizeCurrency(input.currency)!;
      const amountProblem = minorUnitsProblem(input.unit_price_cents, currency, 'unit_price_cents');
      if (amountProblem !== undefined) throw invalidField('unit_price_cents', 'invalid_value', amountProblem);
      const intervalCount = input.interval_count ?? 1;
      const maxCount = MAX_INTERVAL_COUNT[input.billing_interval];
      if (intervalCount > maxCount) {
        throw invalidField('interval_count', 'out_of_range', `With billing_interval ${input.billing_interval}, interval_count is at most ${maxCount} (three years).`, {
          maximum: maxCount,
        });
      }
      return inTransaction(async (tx) => {
        const product = await requireProduct(tx, ctx, productId, { forUpdate: true });
        if ((await repository.countPrices(tx, ctx, product.id)) >= repository.MAX_PRICES_PER_PRODUCT) {
          throw new AppError('conflict', `A product has at most ${repository.MAX_PRICES_PER_PRODUCT} prices.`, [
            { path: 'prices', code: 'limit_reached', message: `This product already has ${repository.MAX_PRICES_PER_PRODUCT} prices.` },
          ]);
        }
        const price = await repository.insertPrice(tx, ctx, {
          id: newId(),
          product_id: product.id,
          unit_price_cents: input.unit_price_cents,
          currency,
          billing_interval: input.billing_interval,
          interval_count: intervalCount,
          created_at: ctx.now,
        });
        // The first price is the default whatever the body says; `default: true` moves the default to a later one.
        const becomesDefault = product.default_price_id === null || input.default === true;
        await repository.updateProduct(tx, ctx, product.id, {
          ...(becomesDefault ? { default_price_id: price.id } : {}),
          updated_at: nextUpdatedAt(product.updated_at, ctx.now),
        });
        return presentPrice(price, becomesDefault ? price.id : product.default_price_id);
      });
    },

    // Coupons

    async createCoupon(ctx: RequestContext, input: CreateCouponInput): Promise<CouponView> {
      const discount = couponDiscount(input);
      const startsAt = instant('starts_at', input.starts_at);
      const expiresAt = instant('expires_at', input.expires_at);
      checkCouponWindow(ctx, startsAt, expiresAt, input.expires_at !== undefined && input.expires_at !== null);
      const code = input.code.trim();
      try {
        const row = await repository.insertCoupon(catalog, ctx, {
          id: newId(),
          code,
          description: cleanText(input.description) ?? null,
          ...discount,
          max_redemptions: input.max_redemptions ?? null,
          redeemed_count: 0,
          starts_at: startsAt,
          expires_at: expiresAt,
          active: input.active ?? true,
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        return presentCoupon(row, ctx.now);
      } catch (error) {
        // The unique index decides, so two concurrent creates of one code cannot both succeed.
        if (repository.isUniqueViolation(error, repository.COUPON_CODE_INDEX)) throw await couponCodeTaken(ctx, code);
        throw error;
      }
    },

    async getCoupon(ctx: RequestContext, id: string): Promise<CouponView> {
      return presentCoupon(await requireCoupon(catalog, ctx, id), ctx.now);
    },

    async listCoupons(ctx: RequestContext, filters: { active?: 'true' | 'false'; code?: string }, page: PageRequest) {
      const code = filters.code?.trim();
      const { rows, total } = await repository.listCoupons(catalog, ctx, { active: toBoolean(filters.active), ...(code ? { code } : {}) }, page);
      return { rows: rows.map((row) => presentCoupon(row, ctx.now)), total };
    },

    async updateCoupon(ctx: RequestContext, id: string, input: UpdateCouponInput): Promise<CouponView> {
      const startsAt = input.starts_at === undefined ? undefined : instant('starts_at', input.starts_at);
      const expiresAt = input.expires_at === undefined ? undefined : instant('expires_at', input.expires_at);
      return inTransaction(async (tx) => {
        const current = await requireCoupon(tx, ctx, id, { forUpdate: true });
        assertFresh(input.expected_updated_at, current.updated_at);
        checkCouponWindow(
          ctx,
          startsAt === undefined ? current.starts_at : startsAt,
          expiresAt === undefined ? current.expires_at : expiresAt,
          expiresAt !== undefined && expiresAt !== null,
        );
        if (input.max_redemptions !== undefined && input.max_redemptions !== null && input.max_redemptions < current.redeemed_count) {
          throw invalidField('max_redemptions', 'out_of_range', `The code was already redeemed ${current.redeemed_count} times; max_redemptions cannot be lower.`, {
            redeemed_count: current.redeemed_count,
          });
        }
        const row = await repository.updateCoupon(tx, ctx, id, {
          ...(input.description !== undefined ? { description: cleanText(input.description) ?? null } : {}),
          ...(input.max_redemptions !== undefined ? { max_redemptions: input.max_redemptions } : {}),
          ...(startsAt !== undefined ? { starts_at: startsAt } : {}),
          ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}),
          ...(input.active !== undefined ? { active: input.active } : {}),
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        return presentCoupon(row, ctx.now);
      });
    },

    /** Switches the code off for good (active false); retiring a retired code returns it unchanged. */
    async retireCoupon(ctx: RequestContext, id: string): Promise<CouponView> {
      return inTransaction(async (tx) => {
        const current = await requireCoupon(tx, ctx, id, { forUpdate: true });
        if (!current.active) return presentCoupon(current, ctx.now);
        const row = await repository.updateCoupon(tx, ctx, id, { active: false, updated_at: nextUpdatedAt(current.updated_at, ctx.now) });
        return presentCoupon(row, ctx.now);
      });
    },

    // Subscriptions

    async startSubscription(ctx: RequestContext, input: StartSubscriptionInput): Promise<SubscriptionView> {
      // crm is read through its interface, outside the transaction (on the embedded database a
      // query on the outer handle inside a transaction would wait for the transaction forever).
      const { customer, names } = await requireCustomer(ctx, input);
      return inTransaction(async (tx, jobsDb) => {
        const product = isUuid(input.product_id) ? await repository.findProduct(tx, ctx, input.product_id) : undefined;
        if (!product) throw invalidField('product_id', 'not_found', 'No product with this id.');
        if (!product.active) throw invalidField('product_id', 'inactive', 'The product is inactive: it takes no new subscriptions.');
        const price = await choosePrice(tx, ctx, product, input.price_id);
        const coupon = input.coupon_code === undefined ? undefined : await redeem(tx, ctx, input.coupon_code, price);
        const state = startState({ interval: price.billing_interval, count: price.interval_count, trialDays: product.free_trial_days, now: ctx.now });
        const next = nextEventAt(state);
        const fields: OwnedInsert<CatalogSubscriptionsTable> = {
          id: newId(),
          product_id: product.id,
          price_id: price.id,
          ...customer,
          coupon_id: coupon?.id ?? null,
          coupon_code: coupon?.code ?? null,
          discount_type: coupon?.discount_type ?? null,
          percent_off: coupon?.percent_off === null || coupon?.percent_off === undefined ? null : Number(coupon.percent_off),
          amount_off_cents: coupon?.amount_off_cents === null || coupon?.amount_off_cents === undefined ? null : Number(coupon.amount_off_cents),
          discount_currency: coupon?.currency ?? null,
          quantity: input.quantity ?? 1,
          unit_price_cents: Number(price.unit_price_cents),
          currency: price.currency,
          ...state,
          next_event_at: next,
          created_at: ctx.now,
          updated_at: ctx.now,
        };
        const inserted = await repository.insertSubscription(tx, ctx, fields);
        await rescheduleClock(jobs, jobsDb, ctx, inserted.id, null, next);
        const view = await views.one(tx, ctx, inserted, names);
        await recordSubscriptionEvents(events, tx, ctx, ['catalog.subscription.created'], view);
        return view;
      });
    },

    async getSubscription(ctx: RequestContext, id: string): Promise<SubscriptionView> {
      return (await views.list(ctx, [await requireSubscription(catalog, ctx, id)]))[0]!;
    },

    async listSubscriptions(ctx: RequestContext, filters: SubscriptionFilters, page: PageRequest) {
      const { rows, total } = await repository.listSubscriptions(catalog, ctx, lowerIds(filters), page);
      return { rows: await views.list(ctx, rows), total };
    },

    async pauseSubscription(ctx: RequestContext, id: string, input: PauseSubscriptionInput): Promise<SubscriptionView> {
      const resumesAt = input.resumes_at === undefined ? null : instant('resumes_at', input.resumes_at);
      if (resumesAt !== null && resumesAt.getTime() <= ctx.now.getTime()) {
        throw invalidField('resumes_at', 'out_of_range', 'resumes_at must be in the future.');
      }
      return changeSubscription(ctx, id, input.expected_updated_at, (state) => {
        assertMove(state.status, 'paused');
        return pause(state, ctx.now, resumesAt);
      });
    },

    async resumeSubscription(ctx: RequestContext, id: string): Promise<SubscriptionView> {
      return changeSubscription(ctx, id, undefined, (state) => {
        if (state.status !== 'paused') {
          throw transitionError(state.status, 'active', `Only a paused subscription can be resumed; this one is ${state.status}.`);
        }
        return resume(state, ctx.now);
      });
    },

    async cancelSubscription(ctx: RequestContext, id: string, input: CancelSubscriptionInput): Promise<SubscriptionView> {
      return changeSubscription(ctx, id, input.expected_updated_at, (state) => {
        assertMove(state.status, 'canceled');
        if (input.at_period_end === true) {
          // Asking again for what is already set answers the subscription as it is.
          return state.cancel_at_period_end ? 'unchanged' : { ...state, cancel_at_period_end: true };
        }
        return cancelNow(state, ctx.now);
      });
    },
  };

  async function choosePrice(tx: CatalogDb, ctx: RequestContext, product: ProductRow, priceId: string | undefined): Promise<PriceRow> {
    if (priceId !== undefined) {
      const price = isUuid(priceId) ? await repository.findPrice(tx, ctx, product.id, priceId) : undefined;
      if (!price) throw invalidField('price_id', 'not_found', 'The product has no price with this id.');
      return price;
    }
    const price = product.default_price_id === null ? undefined : await repository.findPrice(tx, ctx, product.id, product.default_price_id);
    if (!price) throw invalidField('price_id', 'required', 'The product has no prices yet: add one before starting subscriptions.');
    return price;
  }

  async function couponCodeTaken(ctx: RequestContext, code: string): Promise<AppError> {
    const existing = await repository.findCouponByCode(catalog, ctx, code);
    return new AppError('coupon_code_taken', `A discount code ${code} already exists (codes are unique regardless of case).`, [
      { path: 'code', code: 'already_exists', message: 'This code is taken.', ...(existing ? { coupon_id: existing.id } : {}) },
    ]);
  }
}

export type CatalogService = ReturnType<typeof createCatalogService>;

function transitionError(from: SubscriptionStatus, to: SubscriptionStatus, message: string): AppError {
  const allowed = STATUS_MOVES[from];
  return new AppError('invalid_status_transition', message, [
    {
      path: 'status',
      code: 'invalid_transition',
      message: allowed.length > 0 ? `From ${from} a subscription can move to: ${allowed.join(', ')}.` : `A ${from} subscription is final.`,
      from,
      to,
      allowed: [...allowed],
    },
  ]);
}

function assertMove(from: SubscriptionStatus, to: SubscriptionStatus): void {
  if (!STATUS_MOVES[from].includes(to)) throw transitionError(from, to, `A ${from} subscription cannot be moved to ${to}.`);
}

const REFUSAL_MESSAGES: Record<CouponRefusal, string> = {
  inactive: 'The discount code is switched off.',
  not_started: 'The discount code cannot be used yet (starts_at is in the future).',
  expired: 'The discount code has expired.',
  exhausted: 'The discount code has been used up (max_redemptions reached).',
  currency_mismatch: 'The discount code is in another currency than the price.',
};

/** The first reason, in the spec's order (off, not started, expired, used up), a coupon is not redeemable now. */
function refusalOf(coupon: CouponRow, now: Date): Exclude<CouponRefusal, 'currency_mismatch'> {
  if (!coupon.active) return 'inactive';
  if (coupon.starts_at !== null && coupon.starts_at.getTime() > now.getTime()) return 'not_started';
  if (coupon.expires_at !== null && coupon.expires_at.getTime() <= now.getTime()) return 'expired';
  // Used up, or (read again after a refusal) a concurrent change: the redemption count is the moving part.
  return 'exhausted';
}

function couponNotRedeemable(coupon: CouponRow, reason: CouponRefusal, message: string): AppError {
  return new AppError('coupon_not_redeemable', `The discount code ${coupon.code} cannot be used: ${message.charAt(0).toLowerCase()}${message.slice(1)}`, [
    { path: 'coupon_code', code: reason, message, coupon_id: coupon.id },
  ]);
}

/** The discount columns of a new coupon: exactly one of percent_off and amount_off_cents (+ currency). */
function couponDiscount(input: CreateCouponInput) {
  const problems: ErrorDetail[] = [];
  const hasPercent = input.percent_off !== undefined;
  const hasAmount = input.amount_off_cents !== undefined;
  if (hasPercent && hasAmount) {
    problems.push({ path: 'amount_off_cents', code: 'invalid', message: 'Send percent_off or amount_off_cents, not both.' });
  } else if (!hasPercent && !hasAmount) {
    problems.push({
      path: input.discount_type === 'amount' ? 'amount_off_cents' : 'percent_off',
      code: 'required',
      message: 'Send percent_off (1-100) or amount_off_cents with currency.',
    });
  }
  const type = hasAmount && !hasPercent ? 'amount' : 'percent';
  if (input.discount_type !== undefined && (hasPercent || hasAmount) && !(hasPercent && hasAmount) && input.discount_type !== type) {
    problems.push({
      path: 'discount_type',
      code: 'invalid_value',
      message: type === 'amount' ? 'discount_type percent needs percent_off, not amount_off_cents.' : 'discount_type amount needs amount_off_cents, not percent_off.',
    });
  }
  if (hasPercent && !hasTwoDecimalsAtMost(input.percent_off!)) {
    problems.push({ path: 'percent_off', code: 'invalid_format', message: 'percent_off has at most 2 decimal places.' });
  }
  if (hasAmount && input.currency === undefined) problems.push({ path: 'currency', code: 'required', message: 'An amount discount needs its currency.' });
  const amountProblem = hasAmount && input.currency !== undefined ? minorUnitsProblem(input.amount_off_cents!, normalizeCurrency(input.currency)!, 'amount_off_cents') : undefined;
  if (amountProblem !== undefined) problems.push({ path: 'amount_off_cents', code: 'invalid_value', message: amountProblem });
  if (hasPercent && !hasAmount && input.currency !== undefined) {
    problems.push({ path: 'currency', code: 'invalid', message: 'currency goes with amount_off_cents only; a percentage applies to any currency.' });
  }
  if (problems.length > 0) throw validationFailed(problems, problems[0]!.message);
  return type === 'percent'
    ? { discount_type: 'percent' as const, percent_off: input.percent_off!, amount_off_cents: null, currency: null }
    : { discount_type: 'amount' as const, percent_off: null, amount_off_cents: input.amount_off_cents!, currency: normalizeCurrency(input.currency!)! };
}

function hasTwoDecimalsAtMost(value: number): boolean {
  return /^\d+(\.\d{1,2})?$/.test(String(value));
}

/** expires_at must be after starts_at, and (when being set) in the future. */
function checkCouponWindow(ctx: RequestContext, startsAt: Date | null, expiresAt: Date | null, expiresAtSent: boolean): void {
  if (expiresAtSent && expiresAt !== null && expiresAt.getTime() <= ctx.now.getTime()) {
    throw invalidField('expires_at', 'out_of_range', 'expires_at must be in the future.');
  }
  if (startsAt !== null && expiresAt !== null && startsAt.getTime() >= expiresAt.getTime()) {
    throw invalidField('expires_at', 'invalid', 'expires_at must be after starts_at.');
  }
}

/** A validated date-time as a Date (null stays null); a value JavaScript cannot read, such as a leap second, is 400. */
function instant(path: string, value: string | null | undefined): Date | null {
  if (value === undefined || value === null) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || ms < 0 || ms > Date.UTC(9999, 11, 31, 23, 59, 59, 999)) {
    throw invalidField(path, 'invalid_format', `${path} is not a usable date-time (ISO 8601 with a time zone, years 1970-9999).`);
  }
  return new Date(ms);
}

function toBoolean(value: 'true' | 'false' | undefined): boolean | undefined {
  return value === undefined ? undefined : value === 'true';
}

function lowerIds(filters: SubscriptionFilters): SubscriptionFilters {
  return {
    ...(filters.status ? { status: filters.status } : {}),
    ...(filters.contact_id ? { contact_id: filters.contact_id.toLowerCase() } : {}),
    ...(filters.company_id ? { company_id: filters.company_id.toLowerCase() } : {}),
    ...(filters.product_id ? { product_id: filters.product_id.toLowerCase() } : {}),
  };
}
