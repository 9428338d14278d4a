import { randomUUID } from 'node:crypto';
import { minorUnitExponent } from '../../lib/currency.js';
import type { OutboundHttp } from '../../platform/outbound/http.js';

/**
 * Card details as typed on the hosted page, after format checks. They live only for the
 * duration of one request: never stored, never logged (only brand and last 4 are kept).
 */
export interface CardDetails {
  number: string;
  expMonth: number;
  /** Four digits. */
  expYear: number;
  cvc: string;
  name: string;
}

export interface CreatePaymentIntentInput {
  /** Minor units, as `amount` in Stripe. */
  amount: number;
  /** ISO 4217, any case. */
  currency: string;
  metadata: Record<string, string>;
  /** Retrying with the same key never creates a second intent. */
  idempotencyKey: string;
}

export type ConfirmResult =
  | { status: 'succeeded' }
  /** The card was refused; `message` is safe and meant for the buyer. */
  | { status: 'declined'; message: string; declineCode: string };

export interface CreateProcessorRefundInput {
  /** The paid intent to give money back from. */
  paymentIntentId: string;
  /** Minor units (ISO 4217), at most what the intent can still refund. */
  amount: number;
  currency: string;
  reason: 'duplicate' | 'fraudulent' | 'requested_by_customer' | null;
  metadata: Record<string, string>;
  /** Retrying with the same key never refunds twice. */
  idempotencyKey: string;
}

/** A refund the processor accepted: done (succeeded) or still under way (pending). */
export interface ProcessorRefund {
  id: string;
  status: 'succeeded' | 'pending';
}

/**
 * What checkout needs from a card processor, shaped after Stripe's PaymentIntents:
 * create an intent for the amount, then confirm it with a card; refund (part of) a paid
 * intent. A decline is a result; anything else that goes wrong (network, credentials, an
 * unexpected reply, a refused refund) throws `ProcessorError`.
 */
export interface PaymentProcessor {
  readonly name: string;
  createPaymentIntent(input: CreatePaymentIntentInput): Promise<{ id: string }>;
  confirm(input: { paymentIntentId: string; card: CardDetails; idempotencyKey: string }): Promise<ConfirmResult>;
  refund(input: CreateProcessorRefundInput): Promise<ProcessorRefund>;
}

export class ProcessorError extends Error {
  override readonly name = 'ProcessorError';
}

// Card checks shared by every processor

export type CardField = 'cardholder_name' | 'card_number' | 'card_expiry' | 'card_cvc';

export type CardCheck = { ok: true; card: CardDetails; brand: string; last4: string } | { ok: false; errors: Partial<Record<CardField, string>> };

/**
 * Checks the card form as a buyer typed it: a name; 12-19 digits (spaces and dashes
 * allowed) passing the Luhn check; an expiry `MM/YY` or `MM/YYYY` not before this month;
 * a CVC of 3 digits (4 for American Express). Messages are written for the buyer.
 */
export function checkCard(input: { name: string; number: string; expiry: string; cvc: string }, now: Date): CardCheck {
  const errors: Partial<Record<CardField, string>> = {};
  const name = input.name.trim();
  if (name === '') errors.cardholder_name = 'Enter the name on the card.';
  else if (name.length > 200 || /[\u0000-\u001f\u007f]/.test(name)) errors.cardholder_name = 'The name on the card is not valid.';

  const number = input.number.replace(/[\s-]/g, '');
  const brand = cardBrand(number);
  if (number === '') errors.card_number = 'Enter your card number.';
  else if (!/^\d{12,19}$/.test(number)) errors.card_number = 'Your card number is incomplete or has characters other than digits.';
  else if (!luhnValid(number)) errors.card_number = 'Your card number is invalid.';

  let expMonth = 0;
  let expYear = 0;
  const expiry = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(input.expiry);
  if (input.expiry.trim() === '') errors.card_expiry = "Enter your card's expiry date (MM/YY).";
  else if (!expiry) errors.card_expiry = "Your card's expiry date is incomplete; use MM/YY.";
  else {
    expMonth = Number(expiry[1]);
    expYear = expiry[2]!.length === 2 ? 2000 + Number(expiry[2]) : Number(expiry[2]);
    const thisMonth = now.getUTCFullYear() * 12 + now.getUTCMonth();
    const cardMonth = expYear * 12 + (expMonth - 1);
    if (expMonth < 1 || expMonth > 12) errors.card_expiry = "Your card's expiry month is invalid.";
    else if (cardMonth < thisMonth) errors.card_expiry = "Your card's expiry date is in the past.";
    else if (cardMonth > thisMonth + 50 * 12) errors.card_expiry = "Your card's expiry year is invalid.";
  }

  const cvc = input.cvc.trim();
  const cvcLength = brand === 'amex' ? 4 : 3;
  if (cvc === '') errors.card_cvc = "Enter your card's security code.";
  else if (!/^\d{3,4}$/.test(cvc) || (!errors.card_number && cvc.length !== cvcLength)) {
    errors.card_cvc = `Your card's security code should be ${cvcLength} digits.`;
  }

  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, card: { number, expMonth, expYear, cvc, name }, brand, last4: number.slice(-4) };
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

export function cardBrand(digits: string): string {
  if (/^4/.test(digits)) return 'visa';
  if (/^(5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)/.test(digits)) return 'mastercard';
  if (/^3[47]/.test(digits)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(digits)) return 'discover';
  if (/^3(0[0-5]|[689])/.test(digits)) return 'diners';
  if (/^35(2[89]|[3-8])/.test(digits)) return 'jcb';
  return 'unknown';
}

// Sandbox

const DECLINED = { message: 'Your card was declined.', declineCode: 'generic_decline' };

/** Stripe's test cards that decline, with Stripe's messages. */
const SANDBOX_DECLINES: ReadonlyMap<string, { message: string; declineCode: string }> = new Map([
  ['4000000000000002', DECLINED],
  ['4000000000009995', { message: 'Your card has insufficient funds.', declineCode: 'insufficient_funds' }],
  ['4000000000000069', { message: 'Your card has expired.', declineCode: 'expired_card' }],
  ['4000000000000127', { message: "Your card's security code is incorrect.", declineCode: 'incorrect_cvc' }],
  ['4000000000000119', { message: 'An error occurred while processing your card. Try again in a little bit.', declineCode: 'processing_error' }],
]);

/** Stripe's test cards that succeed. */
const SANDBOX_SUCCESSES: ReadonlySet<string> = new Set([
  '4242424242424242',
  '4000056655665556',
  '5555555555554444',
  '2223003122003222',
  '5200828282828210',
  '378282246310005',
  '6011111111111117',
]);

/**
 * Test mode: no money moves and nothing leaves the server. Stripe's test cards behave as
 * in Stripe (4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined, ...); any other
 * number is declined, as Stripe refuses real cards in test mode.
 */
export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox';

  async createPaymentIntent(): Promise<{ id: string }> {
    return { id: `pi_sandbox_${randomUUID().replace(/-/g, '')}` };
  }

  async confirm({ card }: { card: CardDetails }): Promise<ConfirmResult> {
    if (SANDBOX_SUCCESSES.has(card.number)) return { status: 'succeeded' };
    const decline = SANDBOX_DECLINES.get(card.number);
    if (decline) return { status: 'declined', ...decline };
    return {
      status: 'declined',
      message: 'Your card was declined. This is a test payment page: use a test card such as 4242 4242 4242 4242.',
      declineCode: 'live_card_in_test_mode',
    };
  }

  /** Test mode refunds at once: nothing to send back. */
  async refund(): Promise<ProcessorRefund> {
    return { id: `re_sandbox_${randomUUID().replace(/-/g, '')}`, status: 'succeeded' };
  }
}

// Stripe

export interface StripeProcessorOptions {
  secretKey: string;
  /** https://api.stripe.com in production; a local fake or stripe-mock in tests. */
  baseUrl: string;
  /** The platform's outbound client: its timeouts and target checks apply. */
  http: OutboundHttp;
}

interface StripeErrorBody {
  error?: { type?: string; code?: string; decline_code?: string; message?: string };
}

/**
 * Where Stripe counts a currency in other units than ISO 4217: ISK stays two-decimal in
 * Stripe's API (100 is 1 krona, amounts divisible by 100), MGA is zero-decimal there
 * (ISO: 2). Every other currency Stripe takes is counted in ISO minor units.
 */
const STRIPE_EXPONENTS: Readonly<Record<string, number>> = { ISK: 2, MGA: 0 };

/** An amount in ISO minor units as Stripe's `amount`: (1500, "ISK") -> 150000, (1500, "JPY") -> 1500. */
export function stripeAmount(minor: number, currency: string): number {
  const code = currency.toUpperCase();
  const shift = (STRIPE_EXPONENTS[code] ?? minorUnitExponent(code)) - minorUnitExponent(code);
  if (shift >= 0) return minor * 10 ** shift;
  const divisor = 10 ** -shift;
  if (minor % divisor !== 0) throw new Error(`Stripe takes whole units of ${code}; ${minor} minor units is not one.`);
  return minor / divisor;
}

/**
 * Live payments through Stripe's REST API (PaymentIntents), form-encoded with the secret
 * key as bearer. Confirming with raw card numbers needs Stripe's raw-card-data access on
 * the account (Stripe otherwise expects Stripe.js on the page); 3-D Secure is not handled:
 * a card that asks for it is answered as declined with a message saying so.
 */
export class StripeProcessor implements PaymentProcessor {
  readonly name = 'stripe';
  readonly #options: StripeProcessorOptions;

  constructor(options: StripeProcessorOptions) {
    this.#options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
  }

  async createPaymentIntent(input: CreatePaymentIntentInput): Promise<{ id: string }> {
    const form = new URLSearchParams();
    form.set('amount', String(stripeAmount(input.amount, input.currency)));
    form.set('currency', input.currency.toLowerCase());
    form.append('payment_method_types[]', 'card');
    for (const [key, value] of Object.entries(input.metadata)) form.set(`metadata[${key}]`, value);
    const { status, body } = await this.#post('/v1/payment_intents', form, input.idempotencyKey);
    const id = (body as { id?: unknown }).id;
    if (status !== 200 || typeof id !== 'string') throw this.#unexpected('create a payment intent', status, body);
    return { id };
  }

  async confirm(input: { paymentIntentId: string; card: CardDetails; idempotencyKey: string }): Promise<ConfirmResult> {
    const form = new URLSearchParams();
    form.set('payment_method_data[type]', 'card');
    form.set('payment_method_data[card][number]', input.card.number);
    form.set('payment_method_data[card][exp_month]', String(input.card.expMonth));
    form.set('payment_method_data[card][exp_year]', String(input.card.expYear));
    form.set('payment_method_data[card][cvc]', input.card.cvc);
    form.set('payment_method_data[billing_details][name]', input.card.name);
    const { status, body } = await this.#post(`/v1/payment_intents/${encodeURIComponent(input.paymentIntentId)}/confirm`, form, input.idempotencyKey);
    const error = (body as StripeErrorBody).error;
    if (status === 402 && error?.type === 'card_error') {
      return { status: 'declined', message: error.message ?? DECLINED.message, declineCode: error.decline_code ?? error.code ?? 'card_declined' };
    }
    const intentStatus = (body as { status?: unknown }).status;
    if (status === 200 && intentStatus === 'succeeded') return { status: 'succeeded' };
    if (status === 200 && (intentStatus === 'requires_action' || intentStatus === 'requires_payment_method')) {
      return {
        status: 'declined',
        message: intentStatus === 'requires_action' ? 'Your bank asks to authenticate this payment, which this page cannot do yet. Try another card.' : DECLINED.message,
        declineCode: intentStatus === 'requires_action' ? 'authentication_required' : 'card_declined',
      };
    }
    throw this.#unexpected('confirm a payment', status, body);
  }

  /**
   * `POST /v1/refunds` of a payment intent (Stripe refunds its charge). Stripe answers the
   * refund with status succeeded, pending or requires_action (both kept as pending here:
   * the money is not back yet), or failed/canceled, which throws like any refusal.
   */
  async refund(input: CreateProcessorRefundInput): Promise<ProcessorRefund> {
    const form = new URLSearchParams();
    form.set('payment_intent', input.paymentIntentId);
    form.set('amount', String(stripeAmount(input.amount, input.currency)));
    if (input.reason !== null) form.set('reason', input.reason);
    for (const [key, value] of Object.entries(input.metadata)) form.set(`metadata[${key}]`, value);
    const { status, body } = await this.#post('/v1/refunds', form, input.idempotencyKey);
    const { id, status: refundStatus } = body as { id?: unknown; status?: unknown };
    if (status === 200 && typeof id === 'string') {
      if (refundStatus === 'succeeded') return { id, status: 'succeeded' };
      if (refundStatus === 'pending' || refundStatus === 'requires_action') return { id, status: 'pending' };
      throw new ProcessorError(`Stripe did not refund the payment: the refund is ${String(refundStatus)}.`);
    }
    throw this.#unexpected('refund the payment', status, body);
  }

  async #post(path: string, form: URLSearchParams, idempotencyKey: string): Promise<{ status: number; body: unknown }> {
    let response;
    try {
      response = await this.#options.http.request(`${this.#options.baseUrl}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.#options.secretKey}`,
          'content-type': 'application/x-www-form-urlencoded',
          'idempotency-key': idempotencyKey,
        },
        body: form.toString(),
        maxRedirects: 0,
      });
    } catch (error) {
      // The outbound error names the target and the reason, never the request (it holds the card number).
      throw new ProcessorError(`Stripe could not be reached: ${(error as Error).message}`);
    }
    let body: unknown = {};
    try {
      body = JSON.parse(response.text());
    } catch {
      // A reply that is not JSON is handled as unexpected below.
    }
    return { status: response.status, body: body ?? {} };
  }

  #unexpected(what: string, status: number, body: unknown): ProcessorError {
    const error = (body as StripeErrorBody).error;
    return new ProcessorError(`Stripe did not ${what}: HTTP ${status}${error?.type ? ` ${error.type}` : ''}${error?.code ? ` (${error.code})` : ''}.`);
  }
}
