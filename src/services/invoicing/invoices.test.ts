import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../lib/clock.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { BASE, fixtures, MALFORMED_IDS, type InvoiceData } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { createCustomer, createInvoice, draftInvoice, finalize, openInvoice, pay, getInvoice } = fixtures(() => platform);
const newKey = async () => (await platform.newTenant()).key();

describe('creating invoices', () => {
  it('prices lines exactly, rounding each line half-up, and totals the rounded values', async () => {
    const key = await newKey();
    const customer = await createCustomer(key, { display_name: 'Acme', default_currency: 'gbp', default_payment_terms_days: 14 });
    const invoice = await createInvoice(key, {
      customer_id: customer.id,
      issue_date: '2026-01-20',
      notes: 'Thank you',
      line_items: [
        { description: 'Consulting', quantity: '3', unit_price: '33.333' },
        { description: 'Licence', quantity: '1', unit_price: '19.99', tax_rate: '8.875' },
        { description: 'Pennies', quantity: 2, unit_price: 0.1, tax_rate: 20 },
        { description: 'Free sample', quantity: '1.5', unit_price: '0' },
      ],
    });
    expect(invoice).toMatchObject({
      number: 'INV-000001',
      customer_id: customer.id,
      status: 'draft',
      currency: 'GBP',
      issue_date: '2026-01-20',
      due_date: '2026-02-03',
      notes: 'Thank you',
      subtotal: '120.19',
      tax_total: '1.81',
      total: '122.00',
      amount_paid: '0.00',
      amount_refunded: '0.00',
      amount_due: '122.00',
      payments: [],
      finalized_at: null,
      paid_at: null,
      voided_at: null,
    });
    expect(invoice.line_items).toEqual([
      { id: expect.any(Number), description: 'Consulting', quantity: '3', unit_price: '33.333', tax_rate: null, subtotal: '100.00', tax: '0.00', total: '100.00' },
      { id: expect.any(Number), description: 'Licence', quantity: '1', unit_price: '19.99', tax_rate: '8.875', subtotal: '19.99', tax: '1.77', total: '21.76' },
      { id: expect.any(Number), description: 'Pennies', quantity: '2', unit_price: '0.10', tax_rate: '20', subtotal: '0.20', tax: '0.04', total: '0.24' },
      { id: expect.any(Number), description: 'Free sample', quantity: '1.5', unit_price: '0.00', tax_rate: null, subtotal: '0.00', tax: '0.00', total: '0.00' },
    ]);
    expect(await getInvoice(key, invoice.id)).toEqual(invoice);
  });

  it('adds 0.1 + 0.2 to exactly 0.30', async () => {
    const key = await newKey();
    const customer = await createCustomer(key);
    const invoice = await createInvoice(key, {
      customer_id: customer.id,
      line_items: [
        { description: 'a', quantity: '1', unit_price: '0.1' },
        { description: 'b', quantity: '1', unit_price: '0.2' },
      ],
    });
    expect(invoice.total).toBe('0.30');
  });

  it("defaults the currency and dates from the customer and today's UTC date", async () => {
    const key = await newKey();
    platform.clock.freeze(new Date('2026-03-31T23:59:59.000Z'));
    try {
      const customer = await createCustomer(key, { display_name: 'Acme', default_currency: 'EUR' });
      const invoice = await createInvoice(key, { customer_id: customer.id });
      expect(invoice).toMatchObject({ currency: 'EUR', issue_date: '2026-03-31', due_date: '2026-04-30', total: '0.00', line_items: [] });
      const usd = await createInvoice(key, { customer_id: customer.id, currency: 'usd', issue_date: '2026-01-01', due_date: '2026-01-01' });
      expect(usd).toMatchObject({ currency: 'USD', due_date: '2026-01-01' });
    } finally {
      platform.clock.resume();
    }
  });

  it('numbers invoices sequentially per tenant and mode, and never reuses a deleted number', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const customer = await createCustomer(key);
    const first = await createInvoice(key, { customer_id: customer.id });
    const second = await createInvoice(key, { customer_id: customer.id });
    expect([first.number, second.number]).toEqual(['INV-000001', 'INV-000002']);
    expect((await call(platform.app, 'DELETE', `${BASE}/invoices/${second.id}`, { key })).statusCode).toBe(200);
    expect((await createInvoice(key, { customer_id: customer.id })).number).toBe('INV-000003');

    const liveKey = await tenant.key({ mode: 'live' });
    const liveCustomer = await createCustomer(liveKey);
    expect((await createInvoice(liveKey, { customer_id: liveCustomer.id })).number).toBe('INV-000001');
    const otherKey = await newKey();
    expect((await createInvoice(otherKey, { customer_id: (await createCustomer(otherKey)).id })).number).toBe('INV-000001');
  });

  it('hands concurrent creates distinct consecutive numbers', async () => {
    const key = await newKey();
    const customer = await createCustomer(key);
    const replies = await Promise.all(Array.from({ length: 8 }, () => call(platform.app, 'POST', `${BASE}/invoices`, { key, body: { customer_id: customer.id } })));
    expect(replies.map((reply) => reply.statusCode)).toEqual(Array(8).fill(201));
    const numbers = replies.map((reply) => reply.json().data.number as string).sort();
    expect(numbers).toEqual(Array.from({ length: 8 }, (_, index) => `INV-00000${index + 1}`));
  });

  it("refuses an unknown customer (400), another tenant's customer (400) and an archived one (409 customer_archived)", async () => {
    const key = await newKey();
    const stranger = await createCustomer(await newKey());
    for (const customerId of [987654321, stranger.id]) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/invoices`, { key, body: { customer_id: customerId } }), 400, 'validation_failed');
      expect(error.details[0]).toMatchObject({ path: 'customer_id', code: 'not_found' });
    }
    const customer = await createCustomer(key);
    await call(platform.app, 'POST', `${BASE}/customers/${customer.id}/archive`, { key });
    expectError(await call(platform.app, 'POST', `${BASE}/invoices`, { key, body: { customer_id: customer.id } }), 409, 'customer_archived');
    await call(platform.app, 'POST', `${BASE}/customers/${customer.id}/unarchive`, { key });
    expect((await call(platform.app, 'POST', `${BASE}/invoices`, { key, body: { customer_id: customer.id } })).statusCode).toBe(201);
  });

  it('reports every bad line with its path', async () => {
    const key = await newKey();
    const customer = await createCustomer(key);
    const response = await call(platform.app, 'POST', `${BASE}/invoices`, {
      key,
      body: {
        customer_id: customer.id,
        line_items: [
          { description: 'ok', quantity: '1', unit_price: '1' },
          { description: 'bad', quantity: '0', unit_price: '-1', tax_rate: '101' },
          { description: 'worse', quantity: '1.00001', unit_price: '1e3', tax_rate: 'abc' },
        ],
      },
    });
    const error = expectError(response, 400, 'validation_failed');
    expect(error.details.map((detail) => `${detail.path}:${detail.code}`)).toEqual([
      'line_items[1].quantity:out_of_range',
      'line_items[1].unit_price:out_of_range',
      'line_items[1].tax_rate:out_of_range',
      'line_items[2].quantity:invalid_format',
      'line_items[2].unit_price:invalid_format',
      'line_items[2].tax_rate:invalid_format',
    ]);
  });

  it.each([
    ['no customer_id', { customer_id: undefined }],
    ['a customer_id as text', { customer_id: '1' }],
    ['a customer_id of 0', { customer_id: 0 }],
    ['a customer_id beyond JSON integers', { customer_id: 1e20 }],
    ['a fractional customer_id', { customer_id: 1.5 }],
    ['a null customer_id', { customer_id: null }],
    ['an unknown currency', { currency: 'ABC' }],
    ['an impossible date', { issue_date: '2026-02-30' }],
    ['a date with time', { issue_date: '2026-02-01T00:00:00Z' }],
    ['a year 0 date', { issue_date: '0000-01-01' }],
    ['a far-future date', { issue_date: '9999-12-31' }],
    ['due before issue', { issue_date: '2026-02-02', due_date: '2026-02-01' }],
    ['a line without description', { line_items: [{ quantity: '1', unit_price: '1' }] }],
    ['a line with a blank description', { line_items: [{ description: ' ', quantity: '1', unit_price: '1' }] }],
    ['a line with an unknown field', { line_items: [{ description: 'a', quantity: '1', unit_price: '1', discount: '1' }] }],
    ['a line with a null quantity', { line_items: [{ description: 'a', quantity: null, unit_price: '1' }] }],
    ['a line with a boolean price', { line_items: [{ description: 'a', quantity: '1', unit_price: true }] }],
    ['a line with an over-long price', { line_items: [{ description: 'a', quantity: '1', unit_price: '1'.repeat(41) }] }],
    ['a line with a huge price', { line_items: [{ description: 'a', quantity: '1', unit_price: '1000000000000.01' }] }],
    ['101 lines', { line_items: Array.from({ length: 101 }, () => ({ description: 'a', quantity: '1', unit_price: '1' })) }],
    ['line_items not an array', { line_items: { description: 'a' } }],
    ['an unknown field', { status: 'paid' }],
    ['a number', { number: 'INV-999' }],
  ])('refuses %s with 400 validation_failed', async (_label, extra) => {
    const key = await newKey();
    const customer = await createCustomer(key);
    expectError(await call(platform.app, 'POST', `${BASE}/invoices`, { key, body: { customer_id: customer.id, ...extra } }), 400, 'validation_failed');
  });
});

describe('editing and deleting drafts', () => {
  it('replaces lines and recomputes totals; changes customer, currency and dates', async () => {
    const key = await newKey();
    const draft = await draftInvoice(key, '10.00');
    const other = await createCustomer(key, { display_name: 'Other' });
    platform.clock.advance(3);
    const response = await call(platform.app, 'PATCH', `${BASE}/invoices/${draft.id}`, {
      key,
      body: {
        customer_id: other.id,
        currency: 'cad',
        issue_date: '2026-05-01',
        due_date: '2026-05-31',
        notes: 'Updated',
        line_items: [{ description: 'Two', quantity: '2', unit_price: '12.345', tax_rate: '5' }],
        expected_updated_at: draft.updated_at,
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    const updated: InvoiceData = response.json().data;
    expect(updated).toMatchObject({
      id: draft.id,
      number: draft.number,
      customer_id: other.id,
      currency: 'CAD',
      issue_date: '2026-05-01',
      due_date: '2026-05-31',
      notes: 'Updated',
      subtotal: '24.69',
      tax_total: '1.23',
      total: '25.92',
      amount_due: '25.92',
    });
    expect(updated.line_items).toHaveLength(1);
    expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(draft.updated_at));

    const stale = await call(platform.app, 'PATCH', `${BASE}/invoices/${draft.id}`, { key, body: { notes: 'x', expected_updated_at: draft.updated_at } });
    expectError(stale, 409, 'stale_update');
    const cleared = (await call(platform.app, 'PATCH', `${BASE}/invoices/${draft.id}`, { key, body: { line_items: [], notes: null } })).json().data;
    expect(cleared).toMatchObject({ total: '0.00', line_items: [], notes: null });
  });

  it('keeps due_date on or after issue_date when only one of them changes', async () => {
    const key = await newKey();
    const draft = await draftInvoice(key, '10.00', { issue_date: '2026-01-01', due_date: '2026-01-31' });
    const error = expectError(await call(platform.app, 'PATCH', `${BASE}/invoices/${draft.id}`, { key, body: { issue_date: '2026-02-01' } }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: 'due_date', code: 'out_of_range' });
  });

  it('refuses edits and deletes of invoices that are not drafts with 409 invoice_not_editable', async () => {
    const key = await newKey();
    const open = await openInvoice(key);
    const error = expectError(await call(platform.app, 'PATCH', `${BASE}/invoices/${open.id}`, { key, body: { notes: 'late' } }), 409, 'invoice_not_editable');
    expect(error.details[0]).toMatchObject({ path: 'status', status: 'open' });
    expectError(await call(platform.app, 'DELETE', `${BASE}/invoices/${open.id}`, { key }), 409, 'invoice_not_editable');
  });

  it('deletes a draft once: 200 { id, deleted: true }, then 404', async () => {
    const key = await newKey();
    const draft = await draftInvoice(key);
    const deleted = await call(platform.app, 'DELETE', `${BASE}/invoices/${draft.id}`, { key });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ data: { id: draft.id, deleted: true } });
    expectError(await call(platform.app, 'DELETE', `${BASE}/invoices/${draft.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/invoices/${draft.id}`, { key }), 404, 'not_found');
  });

  it('answers 404 for ids of the wrong shape and unknown ids on every invoice route', async () => {
    const key = await newKey();
    for (const id of [...MALFORMED_IDS, '123456789']) {
      expectError(await call(platform.app, 'GET', `${BASE}/invoices/${id}`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'PATCH', `${BASE}/invoices/${id}`, { key, body: { notes: 'x' } }), 404, 'not_found');
      expectError(await call(platform.app, 'DELETE', `${BASE}/invoices/${id}`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'POST', `${BASE}/invoices/${id}/finalize`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'POST', `${BASE}/invoices/${id}/void`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'POST', `${BASE}/invoices/${id}/payments`, { key, body: { amount: '1' } }), 404, 'not_found');
    }
  });
});

describe('the status machine', () => {
  it('finalizes a draft with lines and a positive total: draft -> open', async () => {
    const key = await newKey();
    const draft = await draftInvoice(key);
    platform.clock.advance(1);
    const open = await finalize(key, draft.id);
    expect(open).toMatchObject({ status: 'open', amount_due: '100.00', finalized_at: expect.any(String) });
    const again = expectError(await call(platform.app, 'POST', `${BASE}/invoices/${draft.id}/finalize`, { key }), 409, 'invalid_status_transition');
    expect(again.details[0]).toMatchObject({ path: 'status', code: 'invalid_transition', from: 'open', to: 'open', allowed: ['partially_paid', 'paid', 'void'] });
  });

  it('refuses to finalize an empty or zero-total draft with 409 invoice_not_finalizable', async () => {
    const key = await newKey();
    const customer = await createCustomer(key);
    const empty = await createInvoice(key, { customer_id: customer.id });
    const noLines = expectError(await call(platform.app, 'POST', `${BASE}/invoices/${empty.id}/finalize`, { key }), 409, 'invoice_not_finalizable');
    expect(noLines.details[0]).toMatchObject({ path: 'line_items' });
    const zero = await createInvoice(key, { customer_id: customer.id, line_items: [{ description: 'Free', quantity: '1', unit_price: '0.00' }] });
    const zeroTotal = expectError(await call(platform.app, 'POST', `${BASE}/invoices/${zero.id}/finalize`, { key }), 409, 'invoice_not_finalizable');
    expect(zeroTotal.details[0]).toMatchObject({ path: 'total' });
    expectError(await call(platform.app, 'POST', `${BASE}/invoices/${zero.id}/finalize`, { key, body: { force: true } }), 400, 'validation_failed');
  });

  it('voids drafts and open invoices; void is final', async () => {
    const key = await newKey();
    const draft = await draftInvoice(key);
    const voided = (await call(platform.app, 'POST', `${BASE}/invoices/${draft.id}/void`, { key })).json().data;
    expect(voided).toMatchObject({ status: 'void', amount_due: '0.00', voided_at: expect.any(String) });
    const open = await openInvoice(key);
    expect((await call(platform.app, 'POST', `${BASE}/invoices/${open.id}/void`, { key, body: {} })).json().data.status).toBe('void');
    const again = expectError(await call(platform.app, 'POST', `${BASE}/invoices/${open.id}/void`, { key }), 409, 'invalid_status_transition');
    expect(again.details[0]).toMatchObject({ from: 'void', to: 'void', allowed: [] });
    expectError(await call(platform.app, 'POST', `${BASE}/invoices/${open.id}/finalize`, { key }), 409, 'invalid_status_transition');
    expectError(await call(platform.app, 'POST', `${BASE}/invoices/${open.id}/payments`, { key, body: { amount: '1.00' } }), 409, 'invoice_not_payable');
  });

  it('refuses to void an invoice with payments', async () => {
    const key = await newKey();
    const open = await openInvoice(key);
    await pay(key, open.id, { amount: '10.00' });
    const error = expectError(await call(platform.app, 'POST', `${BASE}/invoices/${open.id}/void`, { key }), 409, 'invalid_status_transition');
    expect(error.details[0]).toMatchObject({ from: 'partially_paid', to: 'void' });
  });
});

describe('payments', () => {
  it('moves open -> partially_paid -> paid and keeps exact amounts', async () => {
    const key = await newKey();
    const open = await openInvoice(key, '100.00');
    platform.clock.advance(1);
    const paidAt = new Date(platform.clock.now().getTime() - DAY_MS).toISOString();
    const first = await pay(key, open.id, { amount: '0.1', method: 'card', reference: ' ch_1 ', paid_at: paidAt });
    expect(first).toMatchObject({
      id: expect.any(Number),
      invoice_id: open.id,
      amount: '0.10',
      refunded_amount: '0.00',
      pending_refund_amount: '0.00',
      refundable_amount: '0.10',
      currency: 'USD',
      method: 'card',
      reference: 'ch_1',
      paid_at: paidAt,
    });
    expect(first.invoice).toMatchObject({ status: 'partially_paid', amount_paid: '0.10', amount_due: '99.90', paid_at: null });
    const second = await pay(key, open.id, { amount: 0.2 });
    expect(second).toMatchObject({ method: 'manual', reference: null });
    expect(second.invoice).toMatchObject({ status: 'partially_paid', amount_paid: '0.30', amount_due: '99.70' });
    const last = await pay(key, open.id, { amount: '99.70', currency: 'usd' });
    expect(last.invoice).toMatchObject({ status: 'paid', amount_paid: '100.00', amount_due: '0.00', paid_at: last.paid_at });
    expect(last.invoice.payments.map((payment) => payment.amount)).toEqual(['0.10', '0.20', '99.70']);
    expectError(await call(platform.app, 'POST', `${BASE}/invoices/${open.id}/payments`, { key, body: { amount: '0.01' } }), 409, 'invoice_not_payable');
  });

  it('refuses more than the amount due with 400, naming the amount due', async () => {
    const key = await newKey();
    const open = await openInvoice(key, '50.00');
    await pay(key, open.id, { amount: '20.00' });
    const error = expectError(await call(platform.app, 'POST', `${BASE}/invoices/${open.id}/payments`, { key, body: { amount: '30.01' } }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: 'amount', code: 'out_of_range', amount_due: '30.00' });
    expect((await getInvoice(key, open.id)).amount_paid).toBe('20.00');
  });

  it('refuses payments on drafts with 409 invoice_not_payable', async () => {
    const key = await newKey();
    const draft = await draftInvoice(key);
    const error = expectError(await call(platform.app, 'POST', `${BASE}/invoices/${draft.id}/payments`, { key, body: { amount: '1.00' } }), 409, 'invoice_not_payable');
    expect(error.details[0]).toMatchObject({ path: 'status', status: 'draft' });
  });

  it('refuses a payment in another currency, or dated in the future', async () => {
    const key = await newKey();
    const open = await openInvoice(key);
    const currency = expectError(
      await call(platform.app, 'POST', `${BASE}/invoices/${open.id}/payments`, { key, body: { amount: '1.00', currency: 'EUR' } }),
      400,
      'validation_failed',
    );
    expect(currency.details[0]).toMatchObject({ path: 'currency' });
    const future = new Date(platform.clock.now().getTime() + DAY_MS).toISOString();
    const paidAt = expectError(
      await call(platform.app, 'POST', `${BASE}/invoices/${open.id}/payments`, { key, body: { amount: '1.00', paid_at: future } }),
      400,
      'validation_failed',
    );
    expect(paidAt.details[0]).toMatchObject({ path: 'paid_at', code: 'out_of_range' });
  });

  it.each([
    [{}],
    [{ amount: null }],
    [{ amount: '0' }],
    [{ amount: '-5' }],
    [{ amount: '1.001' }],
    [{ amount: 1.001 }],
    [{ amount: '1e2' }],
    [{ amount: 'ten' }],
    [{ amount: [] }],
    [{ amount: '1.00', method: '' }],
    [{ amount: '1.00', method: 'x'.repeat(51) }],
    [{ amount: '1.00', paid_at: 'yesterday' }],
    [{ amount: '1.00', paid_at: '2016-12-31T23:59:60Z' }],
    [{ amount: '1.00', paid_at: '1969-12-31T23:59:59Z' }],
    [{ amount: '1.00', reference: 'r'.repeat(201) }],
    [{ amount: '1.00', status: 'paid' }],
  ])('refuses the payment %j with 400', async (body) => {
    const key = await newKey();
    const open = await openInvoice(key);
    expectError(await call(platform.app, 'POST', `${BASE}/invoices/${open.id}/payments`, { key, body }), 400, 'validation_failed');
  });

  it('honours Idempotency-Key: a retried payment is recorded once', async () => {
    const key = await newKey();
    const open = await openInvoice(key);
    const headers = { 'idempotency-key': 'pay-1' };
    const first = await call(platform.app, 'POST', `${BASE}/invoices/${open.id}/payments`, { key, body: { amount: '40.00' }, headers });
    const again = await call(platform.app, 'POST', `${BASE}/invoices/${open.id}/payments`, { key, body: { amount: '40.00' }, headers });
    expect(first.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    const invoice = await getInvoice(key, open.id);
    expect(invoice).toMatchObject({ amount_paid: '40.00', amount_due: '60.00' });
    expect(invoice.payments).toHaveLength(1);
  });
});

describe('listing invoices', () => {
  it('lists newest first with lines and payments, filtered by status and customer', async () => {
    const key = await newKey();
    const acme = await createCustomer(key, { display_name: 'Acme' });
    const globex = await createCustomer(key, { display_name: 'Globex' });
    const line = [{ description: 'Work', quantity: '1', unit_price: '10.00' }];
    const a1 = await createInvoice(key, { customer_id: acme.id, line_items: line });
    const a2 = await finalize(key, (await createInvoice(key, { customer_id: acme.id, line_items: line })).id);
    await pay(key, a2.id, { amount: '4.00' });
    const g1 = await createInvoice(key, { customer_id: globex.id, line_items: line });
    const ids = async (query: string) => (await call(platform.app, 'GET', `${BASE}/invoices?${query}`, { key })).json().data.map((row: InvoiceData) => row.id);
    expect(await ids('')).toEqual([g1.id, a2.id, a1.id]);
    expect(await ids(`customer_id=${acme.id}`)).toEqual([a2.id, a1.id]);
    expect(await ids('status=draft')).toEqual([g1.id, a1.id]);
    expect(await ids(`status=partially_paid&customer_id=${acme.id}`)).toEqual([a2.id]);
    expect(await ids('customer_id=987654321')).toEqual([]);
    const listed = (await call(platform.app, 'GET', `${BASE}/invoices?status=partially_paid`, { key })).json();
    expect(listed.data[0]).toEqual(await getInvoice(key, a2.id));
    expect(listed.meta).toEqual({ limit: 50, offset: 0, total: 1, has_more: false });
  });

  it.each(['status=late', 'customer_id=abc', 'customer_id=0', 'customer_id=1.5', 'customer_id=99999999999999999999', 'customer_id=Infinity', 'limit=500', 'sort=total'])(
    'refuses the query %s with 400',
    async (query) => {
      const key = await newKey();
      expectError(await call(platform.app, 'GET', `${BASE}/invoices?${query}`, { key }), 400, 'validation_failed');
    },
  );
});

const MANAGE = 'service.invoicing.manage';
const VIEW = 'service.invoicing.view';
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: MANAGE,
  setup: (key) => createCustomer(key),
  url: () => `${BASE}/invoices`,
  body: (customer: { id: number }) => ({ customer_id: customer.id }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: VIEW, url: () => `${BASE}/invoices`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: VIEW,
  setup: (key) => draftInvoice(key),
  url: (invoice: InvoiceData) => `${BASE}/invoices/${invoice.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: MANAGE,
  setup: (key) => draftInvoice(key),
  url: (invoice: InvoiceData) => `${BASE}/invoices/${invoice.id}`,
  body: () => ({ notes: 'changed' }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'DELETE',
  scope: MANAGE,
  setup: (key) => draftInvoice(key),
  url: (invoice: InvoiceData) => `${BASE}/invoices/${invoice.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: MANAGE,
  setup: (key) => draftInvoice(key),
  url: (invoice: InvoiceData) => `${BASE}/invoices/${invoice.id}/finalize`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: MANAGE,
  setup: (key) => draftInvoice(key),
  url: (invoice: InvoiceData) => `${BASE}/invoices/${invoice.id}/void`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: MANAGE,
  setup: (key) => openInvoice(key),
  url: (invoice: InvoiceData) => `${BASE}/invoices/${invoice.id}/payments`,
  body: () => ({ amount: '1.00' }),
  addressesOneRow: true,
});
