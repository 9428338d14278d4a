import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml, formatAmount, html } from './html.js';
import { createOutboundHttp } from '../../platform/outbound/http.js';
import { FakeStripe } from '../../../test/fakes/fake-stripe.js';
import { cardBrand, checkCard, luhnValid, ProcessorError, SandboxProcessor, StripeProcessor, stripeAmount } from './processor.js';
import { successRedirect } from './service.js';

const NOW = new Date('2026-11-21T09:30:00.000Z');
const CARD = { name: 'Ada Lovelace', number: '4242 4242 4242 4242', expiry: '12/34', cvc: '123' };

describe('card checks', () => {
  it('accepts a well-formed card and keeps only brand and last 4 apart from the card itself', () => {
    expect(checkCard(CARD, NOW)).toEqual({
      ok: true,
      card: { number: '4242424242424242', expMonth: 12, expYear: 2034, cvc: '123', name: 'Ada Lovelace' },
      brand: 'visa',
      last4: '4242',
    });
    expect(checkCard({ ...CARD, number: '4242-4242-4242-4242', expiry: '12 / 2034' }, NOW).ok).toBe(true);
  });

  it('checks Luhn and length', () => {
    expect(luhnValid('4242424242424242')).toBe(true);
    expect(luhnValid('4242424242424241')).toBe(false);
    expect(checkCard({ ...CARD, number: '4242 4242 4242 4241' }, NOW)).toMatchObject({ ok: false, errors: { card_number: 'Your card number is invalid.' } });
    expect(checkCard({ ...CARD, number: '4242' }, NOW)).toMatchObject({ ok: false, errors: { card_number: expect.stringContaining('incomplete') } });
    expect(checkCard({ ...CARD, number: '4242 4242 abcd 4242' }, NOW).ok).toBe(false);
    expect(checkCard({ ...CARD, number: '4'.repeat(20) }, NOW).ok).toBe(false);
  });

  it('accepts this month and refuses last month, month 13 and far-future years', () => {
    expect(checkCard({ ...CARD, expiry: '11/26' }, NOW).ok).toBe(true);
    expect(checkCard({ ...CARD, expiry: '10/26' }, NOW)).toMatchObject({ ok: false, errors: { card_expiry: expect.stringContaining('past') } });
    expect(checkCard({ ...CARD, expiry: '13/30' }, NOW)).toMatchObject({ ok: false, errors: { card_expiry: expect.stringContaining('month') } });
    expect(checkCard({ ...CARD, expiry: '01/2099' }, NOW).ok).toBe(false);
    expect(checkCard({ ...CARD, expiry: '1230' }, NOW).ok).toBe(false);
    expect(checkCard({ ...CARD, expiry: '' }, NOW)).toMatchObject({ ok: false, errors: { card_expiry: expect.stringContaining('Enter') } });
  });

  it('wants a 3-digit CVC, 4 for American Express', () => {
    expect(checkCard({ ...CARD, cvc: '12' }, NOW).ok).toBe(false);
    expect(checkCard({ ...CARD, cvc: '1234' }, NOW).ok).toBe(false);
    expect(checkCard({ ...CARD, number: '378282246310005', cvc: '1234' }, NOW)).toMatchObject({ ok: true, brand: 'amex', last4: '0005' });
    expect(checkCard({ ...CARD, number: '378282246310005', cvc: '123' }, NOW).ok).toBe(false);
  });

  it('needs a printable name', () => {
    expect(checkCard({ ...CARD, name: '  ' }, NOW).ok).toBe(false);
    expect(checkCard({ ...CARD, name: 'A\u0000B' }, NOW).ok).toBe(false);
    expect(checkCard({ ...CARD, name: 'x'.repeat(201) }, NOW).ok).toBe(false);
  });

  it('recognises the common brands', () => {
    expect(
      ['4242424242424242', '5555555555554444', '2223003122003222', '378282246310005', '6011111111111117', '3056930009020004', '3566002020360505', '9999'].map(cardBrand),
    ).toEqual(['visa', 'mastercard', 'mastercard', 'amex', 'discover', 'diners', 'jcb', 'unknown']);
  });
});

describe('the sandbox processor', () => {
  const sandbox = new SandboxProcessor();
  const card = (number: string) => ({ number, expMonth: 12, expYear: 2034, cvc: '123', name: 'A' });

  it("behaves like Stripe's test cards", async () => {
    expect(await sandbox.confirm({ card: card('4242424242424242') })).toEqual({ status: 'succeeded' });
    expect(await sandbox.confirm({ card: card('4000000000000002') })).toEqual({ status: 'declined', message: 'Your card was declined.', declineCode: 'generic_decline' });
    expect(await sandbox.confirm({ card: card('4000000000009995') })).toMatchObject({ status: 'declined', declineCode: 'insufficient_funds' });
    expect(await sandbox.confirm({ card: card('4111111111111111') })).toMatchObject({ status: 'declined', declineCode: 'live_card_in_test_mode' });
    expect((await sandbox.createPaymentIntent()).id).toMatch(/^pi_sandbox_[0-9a-f]{32}$/);
    expect(await sandbox.refund()).toEqual({ id: expect.stringMatching(/^re_sandbox_[0-9a-f]{32}$/), status: 'succeeded' });
  });
});

describe('the Stripe adapter (against a fake Stripe on 127.0.0.1)', () => {
  const fake = new FakeStripe('sk_test_fake123');
  // The fake listens on loopback, which the outbound client refuses unless told otherwise.
  const http = createOutboundHttp({ connectTimeoutMs: 2_000, totalTimeoutMs: 5_000, allowPrivateTargets: true });
  let stripe: StripeProcessor;
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = await fake.start();
    stripe = new StripeProcessor({ secretKey: 'sk_test_fake123', baseUrl: `${baseUrl}/`, http });
  });
  afterAll(async () => {
    await http.close();
    await fake.stop();
  });
  const card = (number: string) => ({ number, expMonth: 12, expYear: 2034, cvc: '123', name: 'Ada Lovelace' });

  it('creates an intent form-encoded with the bearer key, and replays it under the same idempotency key', async () => {
    const created = await stripe.createPaymentIntent({ amount: 5300, currency: 'USD', metadata: { checkout_session_id: 'cs1' }, idempotencyKey: 'checkout-session-cs1' });
    expect(created.id).toMatch(/^pi_fake_/);
    const request = fake.requests.at(-1)!;
    expect(request.path).toBe('/v1/payment_intents');
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request.headers['idempotency-key']).toBe('checkout-session-cs1');
    expect(Object.fromEntries(request.form)).toEqual({ amount: '5300', currency: 'usd', 'payment_method_types[]': 'card', 'metadata[checkout_session_id]': 'cs1' });
    expect((await stripe.createPaymentIntent({ amount: 5300, currency: 'USD', metadata: {}, idempotencyKey: 'checkout-session-cs1' })).id).toBe(created.id);
  });

  it('confirms with the card: success, decline with Stripe message, 3-D Secure as a decline', async () => {
    const { id } = await stripe.createPaymentIntent({ amount: 100, currency: 'eur', metadata: {}, idempotencyKey: 'k-confirm' });
    expect(await stripe.confirm({ paymentIntentId: id, card: card('4000000000000002'), idempotencyKey: 'a1' })).toEqual({
      status: 'declined',
      message: 'Your card was declined.',
      declineCode: 'generic_decline',
    });
    expect(await stripe.confirm({ paymentIntentId: id, card: card('4000002500003155'), idempotencyKey: 'a2' })).toMatchObject({
      status: 'declined',
      declineCode: 'authentication_required',
    });
    expect(await stripe.confirm({ paymentIntentId: id, card: card('4242424242424242'), idempotencyKey: 'a3' })).toEqual({ status: 'succeeded' });
    const confirm = fake.requests.at(-1)!;
    expect(confirm.path).toBe(`/v1/payment_intents/${id}/confirm`);
    expect(confirm.form.get('payment_method_data[card][exp_year]')).toBe('2034');
  });

  it('throws ProcessorError (without card data) on server errors, bad keys and unreachable hosts', async () => {
    fake.failNext = 500;
    await expect(stripe.createPaymentIntent({ amount: 100, currency: 'eur', metadata: {}, idempotencyKey: 'k-fail' })).rejects.toThrow(ProcessorError);
    const badKey = new StripeProcessor({ secretKey: 'sk_test_wrong', baseUrl, http });
    await expect(badKey.createPaymentIntent({ amount: 100, currency: 'eur', metadata: {}, idempotencyKey: 'k-bad' })).rejects.toThrow(/HTTP 401/);
    const unreachable = new StripeProcessor({ secretKey: 'sk_test_x', baseUrl: 'http://127.0.0.1:1', http });
    const error = await unreachable.confirm({ paymentIntentId: 'pi_1', card: card('4242424242424242'), idempotencyKey: 'x' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProcessorError);
    expect(String((error as Error).message)).not.toContain('4242');
  });

  it('refunds a paid intent (form-encoded, replayed under its idempotency key) and throws ProcessorError when Stripe refuses', async () => {
    const { id } = await stripe.createPaymentIntent({ amount: 5300, currency: 'USD', metadata: {}, idempotencyKey: 'k-refund' });
    const refundOf = (amount: number, idempotencyKey: string) =>
      stripe.refund({ paymentIntentId: id, amount, currency: 'USD', reason: null, metadata: { checkout_session_id: 'cs9' }, idempotencyKey });
    await expect(refundOf(100, 'r0')).rejects.toThrow(/HTTP 400 invalid_request_error \(charge_not_refundable\)/);
    await stripe.confirm({ paymentIntentId: id, card: card('4242424242424242'), idempotencyKey: 'k-refund-pay' });
    const first = await refundOf(5000, 'r1');
    expect(first).toEqual({ id: expect.stringMatching(/^re_fake_/), status: 'succeeded' });
    expect(Object.fromEntries(fake.requests.at(-1)!.form)).toEqual({ payment_intent: id, amount: '5000', 'metadata[checkout_session_id]': 'cs9' });
    expect(await refundOf(5000, 'r1')).toEqual(first);
    await expect(refundOf(301, 'r2')).rejects.toThrow(/amount_too_large/);
    const isk = await stripe.createPaymentIntent({ amount: 1500, currency: 'ISK', metadata: {}, idempotencyKey: 'k-isk' });
    await stripe.confirm({ paymentIntentId: isk.id, card: card('4242424242424242'), idempotencyKey: 'k-isk-pay' });
    await stripe.refund({ paymentIntentId: isk.id, amount: 1500, currency: 'ISK', reason: 'fraudulent', metadata: {}, idempotencyKey: 'r-isk' });
    expect(Object.fromEntries(fake.requests.at(-1)!.form)).toEqual({ payment_intent: isk.id, amount: '150000', reason: 'fraudulent' });
  });

  it('goes through the outbound checks: a loopback Stripe base is refused unless private targets are allowed', async () => {
    const strict = createOutboundHttp({ connectTimeoutMs: 2_000, totalTimeoutMs: 5_000, allowPrivateTargets: false });
    try {
      const guarded = new StripeProcessor({ secretKey: 'sk_test_fake123', baseUrl, http: strict });
      const before = fake.requests.length;
      await expect(guarded.createPaymentIntent({ amount: 100, currency: 'eur', metadata: {}, idempotencyKey: 'k-private' })).rejects.toThrow(/not a public address/);
      expect(fake.requests.length).toBe(before);
    } finally {
      await strict.close();
    }
  });
});

describe("Stripe's amount", () => {
  it('is the ISO minor units except where Stripe counts otherwise (ISK two-decimal, MGA zero-decimal)', () => {
    expect(stripeAmount(5300, 'USD')).toBe(5300);
    expect(stripeAmount(1500, 'JPY')).toBe(1500);
    expect(stripeAmount(1230, 'KWD')).toBe(1230);
    expect(stripeAmount(1500, 'isk')).toBe(150000);
    expect(stripeAmount(150000, 'MGA')).toBe(1500);
    expect(() => stripeAmount(150050, 'MGA')).toThrow(/whole units of MGA/);
  });
});

describe('page helpers', () => {
  it('escapes HTML and formats amounts exactly in the currency minor units', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(html`<p>${'<b>'}${['<i>', html`<br>`]}</p>`.value).toBe('<p>&lt;b&gt;&lt;i&gt;<br></p>');
    expect(formatAmount(5300, 'USD')).toBe('$53.00');
    expect(formatAmount(99_999_999, 'USD')).toBe('$999,999.99');
    expect(formatAmount(1500, 'JPY')).toBe('¥1,500');
    expect(formatAmount(1, 'EUR')).toBe('€0.01');
    expect(formatAmount(1500, 'KWD')).toMatch(/^KWD\s1\.50$/);
    expect(formatAmount(1500, 'CLF')).toMatch(/^CLF\s0\.15$/);
  });

  it("builds success redirects like Stripe's {CHECKOUT_SESSION_ID}", () => {
    expect(successRedirect('https://a.example/ok?id={CHECKOUT_SESSION_ID}', 'abc')).toBe('https://a.example/ok?id=abc');
    expect(successRedirect('https://a.example/ok?x=1#top', 'abc')).toBe('https://a.example/ok?x=1&session_id=abc#top');
  });
});
