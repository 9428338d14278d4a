import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { Mode } from '../../db/types.js';
import { addMilliseconds, type Clock, DAY_MS, MINUTE_MS } from '../../lib/clock.js';
import { normalizeCurrency } from '../../lib/currency.js';
import { minorUnitsProblem } from '../../lib/money.js';
import { newId } from '../../lib/ids.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { Owner, RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound, validationFailed } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import type { PageRequest } from '../../platform/pagination/index.js';
import { findTenant } from '../../platform/tenants/repository.js';
import { effectiveStatus, presentLineItem, sessionPresenter } from './present.js';
import { type CardField, checkCard, type PaymentProcessor, ProcessorError } from './processor.js';
import { createRefundRules } from './refunds.js';
import * as repository from './repository.js';
import type { LinkRow, OwnedLinkRow, OwnedSessionRow, PaymentsDb, SessionRow } from './repository.js';
import {
  MAX_AMOUNT_CENTS,
  MAX_QUANTITY,
  type CheckoutSessionView,
  type CreateCheckoutSessionInput,
  type CreatePaymentLinkInput,
  type ListCheckoutSessionsFilters,
  type ListPaymentLinksFilters,
  type PaymentLinkView,
  type UpdatePaymentLinkInput,
} from './schemas.js';
import type { StoredLineItem } from './tables.js';

/** A session is payable for 24 hours (Stripe Checkout's default and longest life). */
export const SESSION_LIFETIME_MS = DAY_MS;
/** How long one payment attempt holds a session (longer than two processor calls with their timeouts). */
const PAYMENT_HOLD_MS = 2 * MINUTE_MS;
export const EXPIRE_SESSION_JOB = 'payments.expire-session';
export const SESSION_ID_PLACEHOLDER = '{CHECKOUT_SESSION_ID}';

export function expireJobKey(sessionId: string): string {
  return `payments.expire:${sessionId}`;
}

export interface PaymentsDeps {
  db: Db;
  clock: Clock;
  jobs: JobRunner;
  events: EventLog;
  publicBaseUrl: string;
  /** Keys the CSRF tokens of the hosted pages' forms. */
  secretsKey: Buffer;
  /** Processor per mode; a mode without one cannot take payments (live without STRIPE_SECRET_KEY). */
  processors: { test: PaymentProcessor; live: PaymentProcessor | undefined };
}

/** What the hosted checkout page needs to draw a session. */
export interface CheckoutPageData {
  session: CheckoutSessionView;
  merchantName: string;
  mode: Mode;
  /** Whether this server can take payments in the session's mode. */
  payable: boolean;
}

export interface CardForm {
  cardholder_name: string;
  card_number: string;
  card_expiry: string;
  card_cvc: string;
}

export type PayOutcome =
  | { kind: 'not_found' }
  | { kind: 'paid'; redirectTo: string }
  /** Already paid (a double submit, or a reload of the form): go where a payment goes. */
  | { kind: 'already_paid'; redirectTo: string }
  | { kind: 'expired'; page: CheckoutPageData }
  | { kind: 'invalid'; page: CheckoutPageData; errors: Partial<Record<CardField, string>> }
  | { kind: 'declined'; page: CheckoutPageData; message: string }
  | { kind: 'busy'; page: CheckoutPageData }
  | { kind: 'link_used_up'; page: CheckoutPageData }
  | { kind: 'not_payable'; page: CheckoutPageData }
  | { kind: 'processor_error'; page: CheckoutPageData; error: Error };

export type LinkVisit =
  | { kind: 'not_found' }
  | { kind: 'unavailable'; reason: 'inactive' | 'used_up' | 'not_payable'; name: string; merchantName: string }
  | { kind: 'choose_quantity'; link: PaymentLinkView; merchantName: string; mode: Mode; error?: string; quantity?: string }
  | { kind: 'session'; sessionId: string };

/** Checkout sessions, payment links, and the buyer's side of the hosted pages. */
export function createPaymentsService(deps: PaymentsDeps) {
  const { db, clock, jobs, events, publicBaseUrl, processors } = deps;
  const payments = repository.paymentsDb(db);
  const presentSession = sessionPresenter(publicBaseUrl);

  function inTransaction<T>(work: (tx: PaymentsDb, jobsDb: Db) => Promise<T>): Promise<T> {
    return db.transaction().execute((tx) => work(repository.paymentsDb(tx), tx));
  }

  function linkUrl(id: string): string {
    return `${publicBaseUrl}/pay/${id}`;
  }

  function presentLink(row: LinkRow): PaymentLinkView {
    const total = Number(row.amount_total_cents);
    return {
      id: row.id,
      name: row.name,
      line_items: row.line_items.map(presentLineItem),
      amount_cents: row.description === null ? null : total,
      description: row.description,
      amount_total_cents: total,
      currency: row.currency,
      active: row.active,
      available: row.active && !isUsedUp(row),
      url: linkUrl(row.id),
      allow_quantity: row.allow_quantity,
      max_uses: row.max_uses,
      use_count: row.use_count,
      after_completion_url: row.after_completion_url,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  function requireLiveConfigured(mode: Mode): void {
    if (!processors[mode]) {
      throw new AppError(
        'live_payments_not_configured',
        'Live payments are not configured on this server (STRIPE_SECRET_KEY is not set); use a test key (sk_test_) to try the sandbox.',
      );
    }
  }

  /** Inserts a session and its expiry job in one transaction. */
  async function insertSession(owner: Owner, now: Date, fields: NewSession): Promise<SessionRow> {
    const id = newId();
    const expiresAt = addMilliseconds(now, SESSION_LIFETIME_MS);
    return inTransaction(async (tx, jobsDb) => {
      const row = await repository.insertSession(tx, owner, {
        id,
        status: 'open',
        payment_status: 'unpaid',
        line_items: JSON.stringify(fields.lineItems),
        description: fields.description,
        currency: fields.currency,
        amount_total_cents: totalOf(fields.lineItems),
        success_url: fields.successUrl,
        cancel_url: fields.cancelUrl,
        customer_email: fields.customerEmail,
        metadata: JSON.stringify(fields.metadata),
        payment_link_id: fields.paymentLinkId,
        expires_at: expiresAt,
        completed_at: null,
        processing_until: null,
        payment_intent_id: null,
        card_brand: null,
        card_last4: null,
        created_at: now,
        updated_at: now,
      });
      await jobs.schedule(
        { kind: EXPIRE_SESSION_JOB, dedupeKey: expireJobKey(id), runAt: expiresAt, payload: { session_id: id }, tenantId: owner.tenantId, mode: owner.mode },
        jobsDb,
      );
      return row;
    });
  }

  async function merchantName(tenantId: string): Promise<string> {
    return (await findTenant(db, tenantId))?.name ?? 'Merchant';
  }

  async function pageData(row: OwnedSessionRow, now: Date): Promise<CheckoutPageData> {
    return {
      session: presentSession(row, now),
      merchantName: await merchantName(row.tenant_id),
      mode: row.mode,
      payable: processors[row.mode] !== undefined,
    };
  }

  /** Where the buyer goes once the session is paid. */
  function afterPayment(row: SessionRow): string {
    if (row.success_url === null) return `/checkout/${row.id}`;
    return successRedirect(row.success_url, row.id);
  }

  /** Marks the session paid and records its event in one transaction; undefined (and no event) if it was no longer open. */
  async function completeSession(owner: Owner, id: string, paid: repository.PaidSession): Promise<SessionRow | undefined> {
    return inTransaction(async (tx) => {
      const completed = await repository.completeSession(tx, owner, id, paid);
      if (completed) await events.record(tx, owner, 'payments.checkout_session.completed', presentSession(completed, paid.now));
      return completed;
    });
  }

  async function releaseAttempt(owner: Owner, row: SessionRow): Promise<void> {
    await inTransaction(async (tx) => {
      await repository.releaseSession(tx, owner, row.id);
      if (row.payment_link_id) await repository.releaseLinkUse(tx, owner, row.payment_link_id);
    });
  }

  async function startLinkSession(link: OwnedLinkRow, quantity: number | undefined, now: Date): Promise<string> {
    const lineItems = quantity === undefined ? link.line_items : link.line_items.map((item) => ({ ...item, quantity }));
    const row = await insertSession({ tenantId: link.tenant_id, mode: link.mode }, now, {
      lineItems,
      description: link.description,
      currency: link.currency,
      successUrl: link.after_completion_url,
      cancelUrl: null,
      customerEmail: null,
      metadata: {},
      paymentLinkId: link.id,
    });
    return row.id;
  }

  /** Why a link cannot start a payment now, if it cannot. */
  function linkUnavailability(link: OwnedLinkRow): 'inactive' | 'used_up' | 'not_payable' | undefined {
    if (!link.active) return 'inactive';
    if (isUsedUp(link)) return 'used_up';
    if (!processors[link.mode]) return 'not_payable';
    return undefined;
  }

  function formToken(purpose: FormPurpose, id: string): string {
    return createHmac('sha256', deps.secretsKey).update(`payments-page:${purpose}:${id}`).digest('base64url');
  }

  function validFormToken(purpose: FormPurpose, id: string, sent: string | undefined): boolean {
    if (typeof sent !== 'string') return false;
    const expected = Buffer.from(formToken(purpose, id));
    const given = Buffer.from(sent);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  return {
    publicBaseUrl,

    ...createRefundRules({ db, events, processors, requireLiveConfigured }),

    /** The CSRF token of a page form: an HMAC of the session or link id, nothing stored. */
    formToken,

    /** Constant-time check of a form's CSRF token (a plain function, so pages can take it off the service). */
    validFormToken,

    // Checkout sessions (API)

    async createSession(ctx: RequestContext, input: CreateCheckoutSessionInput): Promise<CheckoutSessionView> {
      requireLiveConfigured(ctx.mode);
      const pricing = resolvePricing(input, true)!;
      const currency = normalizeCurrency(input.currency)!;
      checkAmountsFit(pricing.lineItems, currency, input.line_items !== undefined ? 'line_items' : 'amount_cents');
      checkUrl('success_url', input.success_url);
      if (input.cancel_url) checkUrl('cancel_url', input.cancel_url);
      const row = await insertSession(ctx, ctx.now, {
        ...pricing,
        currency,
        successUrl: input.success_url,
        cancelUrl: input.cancel_url ?? null,
        customerEmail: input.customer_email?.toLowerCase() ?? null,
        metadata: input.metadata ?? {},
        paymentLinkId: null,
      });
      return presentSession(row, ctx.now);
    },

    async getSession(ctx: RequestContext, id: string): Promise<CheckoutSessionView> {
      const row = await repository.findSession(payments, ctx, id);
      if (!row) throw notFound('Checkout session');
      return presentSession(row, ctx.now);
    },

    async listSessions(ctx: RequestContext, filters: ListCheckoutSessionsFilters, page: PageRequest) {
      const { rows, total } = await repository.listSessions(payments, ctx, filters, ctx.now, page);
      return { rows: rows.map((row) => presentSession(row, ctx.now)), total };
    },

    // Payment links (API)

    async createLink(ctx: RequestContext, input: CreatePaymentLinkInput): Promise<PaymentLinkView> {
      requireLiveConfigured(ctx.mode);
      const pricing = resolvePricing(input, true, input.name.trim())!;
      const currency = normalizeCurrency(input.currency)!;
      checkAmountsFit(pricing.lineItems, currency, input.line_items !== undefined ? 'line_items' : 'amount_cents');
      const allowQuantity = input.allow_quantity ?? false;
      checkQuantityRule(allowQuantity, pricing.lineItems);
      if (input.after_completion_url) checkUrl('after_completion_url', input.after_completion_url);
      const row = await repository.insertLink(payments, ctx, {
        id: newId(),
        name: input.name.trim(),
        line_items: JSON.stringify(pricing.lineItems),
        description: pricing.description,
        currency,
        amount_total_cents: totalOf(pricing.lineItems),
        active: input.active ?? true,
        allow_quantity: allowQuantity,
        max_uses: input.max_uses ?? null,
        after_completion_url: input.after_completion_url ?? null,
        created_at: ctx.now,
        updated_at: ctx.now,
      });
      return presentLink(row);
    },

    async getLink(ctx: RequestContext, id: string): Promise<PaymentLinkView> {
      const row = await repository.findLink(payments, ctx, id);
      if (!row) throw notFound('Payment link');
      return presentLink(row);
    },

    async listLinks(ctx: RequestContext, filters: ListPaymentLinksFilters, page: PageRequest) {
      const { rows, total } = await repository.listLinks(payments, ctx, filters, page);
      return { rows: rows.map(presentLink), total };
    },

    async updateLink(ctx: RequestContext, id: string, input: UpdatePaymentLinkInput): Promise<PaymentLinkView> {
      // amount_cents alone is described by the link's name, which may be the stored one.
      const describedByStoredName = input.amount_cents !== undefined && input.description === undefined && input.name === undefined;
      const sentPricing = describedByStoredName ? undefined : resolvePricing(input, false, input.name?.trim());
      if (input.after_completion_url) checkUrl('after_completion_url', input.after_completion_url);
      return inTransaction(async (tx) => {
        const current = await repository.findLink(tx, ctx, id, { forUpdate: true });
        if (!current) throw notFound('Payment link');
        assertFresh(input.expected_updated_at, current.updated_at);
        const pricing = describedByStoredName ? resolvePricing(input, false, current.name) : sentPricing;
        const currency = input.currency !== undefined ? normalizeCurrency(input.currency)! : current.currency;
        if (pricing) checkAmountsFit(pricing.lineItems, currency, input.line_items !== undefined ? 'line_items' : 'amount_cents');
        // Stored prices that a new currency cannot hold (KWD 1235 fils) refuse the currency; others are left as they are.
        else if (currency !== current.currency) checkAmountsFit(current.line_items, currency, 'currency');
        checkQuantityRule(input.allow_quantity ?? current.allow_quantity, pricing?.lineItems ?? current.line_items);
        const row = await repository.updateLink(tx, ctx, id, {
          ...(input.name !== undefined ? { name: input.name.trim() } : {}),
          ...(pricing ? { line_items: JSON.stringify(pricing.lineItems), description: pricing.description, amount_total_cents: totalOf(pricing.lineItems) } : {}),
          ...(input.currency !== undefined ? { currency } : {}),
          ...(input.active !== undefined ? { active: input.active } : {}),
          ...(input.allow_quantity !== undefined ? { allow_quantity: input.allow_quantity } : {}),
          ...(input.max_uses !== undefined ? { max_uses: input.max_uses } : {}),
          ...(input.after_completion_url !== undefined ? { after_completion_url: input.after_completion_url } : {}),
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        return presentLink(row);
      });
    },

    // The hosted pages (no API key: the unguessable id in the URL is the capability)

    async checkoutPage(id: string, now: Date): Promise<CheckoutPageData | undefined> {
      const row = await repository.findSessionByCapability(payments, id);
      return row ? pageData(row, now) : undefined;
    },

    /**
     * One payment attempt: check the card form, hold the session (and reserve a use of its
     * link), charge through the mode's processor outside any transaction, then mark the
     * session paid, or give the hold and the use back.
     */
    async pay(id: string, form: CardForm, now: Date): Promise<PayOutcome> {
      const row = await repository.findSessionByCapability(payments, id);
      if (!row) return { kind: 'not_found' };
      const sessionOwner: Owner = { tenantId: row.tenant_id, mode: row.mode };
      const status = effectiveStatus(row, now);
      if (status === 'complete') return { kind: 'already_paid', redirectTo: afterPayment(row) };
      if (status === 'expired') return { kind: 'expired', page: await pageData(row, now) };
      const processor = processors[row.mode];
      if (!processor) return { kind: 'not_payable', page: await pageData(row, now) };

      const check = checkCard({ name: form.cardholder_name, number: form.card_number, expiry: form.card_expiry, cvc: form.card_cvc }, now);
      if (!check.ok) return { kind: 'invalid', page: await pageData(row, now), errors: check.errors };

      const claim = await inTransaction(async (tx) => {
        const claimed = await repository.claimSessionForPayment(tx, sessionOwner, id, now, addMilliseconds(now, PAYMENT_HOLD_MS));
        if (!claimed) return { kind: 'not_claimed' as const };
        if (claimed.payment_link_id && !(await repository.reserveLinkUse(tx, sessionOwner, claimed.payment_link_id))) {
          await repository.releaseSession(tx, sessionOwner, id);
          return { kind: 'link_used_up' as const };
        }
        return { kind: 'claimed' as const, row: claimed };
      });
      if (claim.kind === 'link_used_up') return { kind: 'link_used_up', page: await pageData(row, now) };
      if (claim.kind === 'not_claimed') {
        const latest = (await repository.findSessionByCapability(payments, id))!;
        const latestStatus = effectiveStatus(latest, now);
        if (latestStatus === 'complete') return { kind: 'already_paid', redirectTo: afterPayment(latest) };
        if (latestStatus === 'expired') return { kind: 'expired', page: await pageData(latest, now) };
        return { kind: 'busy', page: await pageData(latest, now) };
      }

      const held = claim.row;
      try {
        let paymentIntentId = held.payment_intent_id;
        if (paymentIntentId === null) {
          const metadata: Record<string, string> = { checkout_session_id: id };
          if (held.payment_link_id) metadata.payment_link_id = held.payment_link_id;
          paymentIntentId = (
            await processor.createPaymentIntent({
              amount: Number(held.amount_total_cents),
              currency: held.currency,
              metadata,
              idempotencyKey: `checkout-session-${id}`,
            })
          ).id;
          await repository.setPaymentIntent(payments, sessionOwner, id, paymentIntentId);
        }
        const result = await processor.confirm({ paymentIntentId, card: check.card, idempotencyKey: randomUUID() });
        if (result.status === 'declined') {
          await releaseAttempt(sessionOwner, held);
          return { kind: 'declined', page: await pageData(row, now), message: result.message };
        }
        const completed = await completeSession(sessionOwner, id, { now: clock.now(), cardBrand: check.brand, cardLast4: check.last4, paymentIntentId });
        if (!completed) throw new Error(`Checkout session ${id} was paid (${paymentIntentId}) but was no longer open.`);
        return { kind: 'paid', redirectTo: afterPayment(completed) };
      } catch (error) {
        if (!(error instanceof ProcessorError)) throw error;
        await releaseAttempt(sessionOwner, held);
        return { kind: 'processor_error', page: await pageData(row, now), error };
      }
    },

    /** A visit of a payment link: a new session, the quantity form, or why it is not available. */
    async visitLink(id: string, now: Date): Promise<LinkVisit> {
      const link = await repository.findLinkByCapability(payments, id);
      if (!link) return { kind: 'not_found' };
      const reason = linkUnavailability(link);
      if (reason) return { kind: 'unavailable', reason, name: link.name, merchantName: await merchantName(link.tenant_id) };
      if (link.allow_quantity) return { kind: 'choose_quantity', link: presentLink(link), merchantName: await merchantName(link.tenant_id), mode: link.mode };
      return { kind: 'session', sessionId: await startLinkSession(link, undefined, now) };
    },

    /** The quantity form of a link that lets the buyer choose it. */
    async startLinkWithQuantity(id: string, quantityText: string, now: Date): Promise<LinkVisit> {
      const link = await repository.findLinkByCapability(payments, id);
      if (!link) return { kind: 'not_found' };
      const reason = linkUnavailability(link);
      if (reason) return { kind: 'unavailable', reason, name: link.name, merchantName: await merchantName(link.tenant_id) };
      if (!link.allow_quantity) return { kind: 'session', sessionId: await startLinkSession(link, undefined, now) };
      const quantity = /^\s*\d{1,6}\s*$/.test(quantityText) ? Number(quantityText) : Number.NaN;
      const unit = link.line_items[0]!.unit_amount_cents;
      let error: string | undefined;
      if (!Number.isInteger(quantity) || quantity < 1 || quantity > MAX_QUANTITY) error = `Enter a whole number from 1 to ${MAX_QUANTITY.toLocaleString('en')}.`;
      else if (unit * quantity > MAX_AMOUNT_CENTS) error = 'That quantity is more than can be paid at once; choose fewer.';
      if (error) {
        return { kind: 'choose_quantity', link: presentLink(link), merchantName: await merchantName(link.tenant_id), mode: link.mode, error, quantity: quantityText };
      }
      return { kind: 'session', sessionId: await startLinkSession(link, quantity, now) };
    },
  };
}

export type PaymentsService = ReturnType<typeof createPaymentsService>;

export type FormPurpose = 'checkout' | 'link';

interface NewSession {
  lineItems: StoredLineItem[];
  description: string | null;
  currency: string;
  successUrl: string | null;
  cancelUrl: string | null;
  customerEmail: string | null;
  metadata: Record<string, string>;
  paymentLinkId: string | null;
}

function isUsedUp(link: Pick<LinkRow, 'max_uses' | 'use_count'>): boolean {
  return link.max_uses !== null && link.use_count >= link.max_uses;
}

function totalOf(items: StoredLineItem[]): number {
  return items.reduce((sum, item) => sum + item.unit_amount_cents * item.quantity, 0);
}

/**
 * Every unit amount is one the currency allows (`minorUnitsProblem`: KWD in fils, a multiple
 * of 10), reported at `line_items[i].unit_amount_cents`, `amount_cents` or `currency`.
 */
function checkAmountsFit(lineItems: readonly StoredLineItem[], currency: string, sentAs: 'line_items' | 'amount_cents' | 'currency'): void {
  const problems = lineItems.flatMap((item, index) => {
    const path = sentAs === 'line_items' ? `line_items[${index}].unit_amount_cents` : sentAs;
    const message = minorUnitsProblem(item.unit_amount_cents, currency, sentAs === 'currency' ? 'The stored unit amount' : path);
    return message === undefined ? [] : [{ path, code: 'invalid_value', message }];
  });
  if (problems.length > 0) throw validationFailed(problems.slice(0, sentAs === 'line_items' ? problems.length : 1));
}

/**
 * The two ways to say what is sold: `line_items`, or `amount_cents` with `description`
 * (one line, quantity 1). Exactly one of them; the total at most 99,999,999 minor units.
 * A payment link's amount needs no description: `defaultDescription` (its name) stands in.
 * Returns undefined when nothing was sent and nothing is required (a PATCH).
 */
function resolvePricing(
  input: { line_items?: Array<{ name: string; unit_amount_cents: number; quantity: number }>; amount_cents?: number; description?: string },
  required: boolean,
  defaultDescription?: string,
): { lineItems: StoredLineItem[]; description: string | null } | undefined {
  const hasItems = input.line_items !== undefined;
  const hasAmount = input.amount_cents !== undefined;
  const hasDescription = input.description !== undefined;
  if (hasItems && (hasAmount || hasDescription)) {
    throw invalidField(hasAmount ? 'amount_cents' : 'description', 'invalid', 'Send either line_items, or amount_cents with description, not both.');
  }
  let result: { lineItems: StoredLineItem[]; description: string | null } | undefined;
  if (hasItems) {
    result = {
      lineItems: input.line_items!.map((item) => ({ name: item.name.trim(), unit_amount_cents: item.unit_amount_cents, quantity: item.quantity })),
      description: null,
    };
  } else if (hasAmount || hasDescription) {
    if (!hasAmount) throw invalidField('amount_cents', 'required', 'amount_cents is required with description.');
    const description = input.description?.trim() ?? defaultDescription;
    if (description === undefined) throw invalidField('description', 'required', 'description is required with amount_cents.');
    result = { lineItems: [{ name: description, unit_amount_cents: input.amount_cents!, quantity: 1 }], description };
  } else if (required) {
    throw invalidField('line_items', 'required', 'Send line_items, or amount_cents with description.');
  } else {
    return undefined;
  }
  const total = totalOf(result.lineItems);
  if (total > MAX_AMOUNT_CENTS) {
    throw validationFailed(
      [
        {
          path: hasItems ? 'line_items' : 'amount_cents',
          code: 'out_of_range',
          message: `The total of ${total} minor units is over the largest payment, ${MAX_AMOUNT_CENTS}.`,
          maximum: MAX_AMOUNT_CENTS,
        },
      ],
      'The total is too large.',
    );
  }
  return result;
}

function checkQuantityRule(allowQuantity: boolean, lineItems: StoredLineItem[]): void {
  if (allowQuantity && lineItems.length !== 1) {
    throw invalidField('allow_quantity', 'invalid', 'allow_quantity needs exactly one line item (the buyer chooses its quantity).');
  }
}

/** An absolute http(s) URL without credentials; `{CHECKOUT_SESSION_ID}` may appear anywhere. */
function checkUrl(path: string, value: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value.split(SESSION_ID_PLACEHOLDER).join('00000000-0000-4000-8000-000000000000'));
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw invalidField(path, 'invalid_format', `${path} must be an absolute http(s) URL.`);
  }
  if (url.username !== '' || url.password !== '') throw invalidField(path, 'invalid_format', `${path} must not contain a user name or password.`);
}

/** Stripe's `{CHECKOUT_SESSION_ID}` template, or else `session_id=<id>` added to the query. */
export function successRedirect(successUrl: string, sessionId: string): string {
  if (successUrl.includes(SESSION_ID_PLACEHOLDER)) return successUrl.split(SESSION_ID_PLACEHOLDER).join(sessionId);
  const url = new URL(successUrl);
  url.searchParams.append('session_id', sessionId);
  return url.toString();
}
