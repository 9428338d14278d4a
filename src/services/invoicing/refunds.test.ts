import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { BASE, fixtures, MALFORMED_IDS, type InvoiceData, type PaymentData } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform({ env: { PUBLIC_BASE_URL: 'https://api.example.test' } });
});
afterAll(() => platform.close());

const { createCustomer, createInvoice, finalize, pay, paidInvoice, getInvoice, openInvoice } = fixtures(() => platform);
const newKey = async () => (await platform.newTenant()).key();

function refund(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return call(platform.app, 'POST', `${BASE}/refunds`, { key, body, headers });
}

async function createPolicy(key: string, body: Record<string, unknown>) {
  const response = await call(platform.app, 'POST', `${BASE}/approval-policies`, { key, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

function paymentOf(invoice: InvoiceData, paymentId: number): PaymentData {
  return invoice.payments.find((payment) => payment.id === paymentId)!;
}

describe('refunding a recorded payment', () => {
  it('records the refund (201) and updates the invoice and the payment', async () => {
    const key = await newKey();
    const { invoice, payment } = await paidInvoice(key, '100.00');
    const response = await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '30.10', reason: 'Damaged' });
    expect(response.statusCode, response.body).toBe(201);
    const record = response.json().data;
    expect(record).toEqual({
      id: expect.any(Number),
      invoice_id: invoice.id,
      customer_payment_id: payment.id,
      amount: '30.10',
      status: 'succeeded',
      currency: 'USD',
      method: 'manual',
      reason: 'Damaged',
      approval_id: null,
      created_at: expect.any(String),
    });
    const after = await getInvoice(key, invoice.id);
    // Refunds do not reopen the invoice (Stripe): still paid, nothing due, amount_paid unchanged.
    expect(after).toMatchObject({ status: 'paid', amount_paid: '100.00', amount_refunded: '30.10', amount_due: '0.00' });
    expect(paymentOf(after, payment.id)).toMatchObject({ refunded_amount: '30.10', refundable_amount: '69.90', pending_refund_amount: '0.00' });
    expect((await call(platform.app, 'GET', `${BASE}/refunds/${record.id}`, { key })).json().data).toEqual(record);
  });

  it('accepts JSON numbers and numeric strings, and refunds up to the balance exactly', async () => {
    const key = await newKey();
    const { invoice, payment } = await paidInvoice(key, '0.30');
    expect((await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: 0.1 })).json().data.amount).toBe('0.10');
    expect((await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '0.2', method: 'bank_transfer' })).json().data).toMatchObject({
      amount: '0.20',
      method: 'bank_transfer',
    });
    const error = expectError(await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '0.01' }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: 'amount', code: 'out_of_range', refundable_amount: '0.00' });
    expect(await getInvoice(key, invoice.id)).toMatchObject({ amount_refunded: '0.30', status: 'paid' });
  });

  it('refuses an amount above the refundable balance with 400, naming the balance', async () => {
    const key = await newKey();
    const { invoice, payment } = await paidInvoice(key, '50.00');
    await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '20.00' });
    const error = expectError(await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '30.01' }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: 'amount', code: 'out_of_range', refundable_amount: '30.00' });
  });

  it('refunds payments of a partially paid invoice, one payment at a time', async () => {
    const key = await newKey();
    const open = await openInvoice(key, '100.00');
    const first = await pay(key, open.id, { amount: '10.00' });
    const second = await pay(key, open.id, { amount: '20.00' });
    expectError(await refund(key, { invoice_id: open.id, customer_payment_id: first.id, amount: '10.01' }), 400, 'validation_failed');
    expect((await refund(key, { invoice_id: open.id, customer_payment_id: second.id, amount: '15.00' })).statusCode).toBe(201);
    const after = await getInvoice(key, open.id);
    expect(after).toMatchObject({ status: 'partially_paid', amount_paid: '30.00', amount_refunded: '15.00', amount_due: '70.00' });
    expect(paymentOf(after, first.id).refunded_amount).toBe('0.00');
  });

  it("answers 404 when the invoice is unknown or another tenant's, or the payment is not on that invoice", async () => {
    const key = await newKey();
    const { invoice, payment } = await paidInvoice(key);
    const other = await paidInvoice(key);
    const error = expectError(await refund(key, { invoice_id: invoice.id, customer_payment_id: other.payment.id, amount: '1.00' }), 404, 'not_found');
    expect(error.details[0]).toMatchObject({ path: 'customer_payment_id' });
    expectError(await refund(key, { invoice_id: 987654321, customer_payment_id: payment.id, amount: '1.00' }), 404, 'not_found');
    expectError(await refund(await newKey(), { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '1.00' }), 404, 'not_found');
    expectError(await refund(key, { invoice_id: invoice.id, customer_payment_id: 987654321, amount: '1.00' }), 404, 'not_found');
  });

  it('defaults the currency to the payment and refuses another one', async () => {
    const key = await newKey();
    const customer = await createCustomer(key, { display_name: 'Euro', default_currency: 'EUR' });
    const draft = await createInvoice(key, { customer_id: customer.id, line_items: [{ description: 'x', quantity: '1', unit_price: '10' }] });
    await finalize(key, draft.id);
    const payment = await pay(key, draft.id, { amount: '10' });
    const error = expectError(await refund(key, { invoice_id: draft.id, customer_payment_id: payment.id, amount: '1', currency: 'USD' }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: 'currency', code: 'invalid_value' });
    expect((await refund(key, { invoice_id: draft.id, customer_payment_id: payment.id, amount: '1', currency: 'eur' })).json().data.currency).toBe('EUR');
    expect((await refund(key, { invoice_id: draft.id, customer_payment_id: payment.id, amount: '1' })).json().data.currency).toBe('EUR');
  });

  it('honours Idempotency-Key: a retried refund is applied once', async () => {
    const key = await newKey();
    const { invoice, payment } = await paidInvoice(key, '100.00');
    const body = { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '60.00' };
    const first = await refund(key, body, { 'idempotency-key': 'refund-1' });
    const again = await refund(key, body, { 'idempotency-key': 'refund-1' });
    expect(first.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect((await getInvoice(key, invoice.id)).amount_refunded).toBe('60.00');
    expectError(await refund(key, { ...body, amount: '1.00' }, { 'idempotency-key': 'refund-1' }), 409, 'idempotency_key_conflict');
  });

  it.each([
    ['no amount', { amount: undefined }],
    ['a null amount', { amount: null }],
    ['a zero amount', { amount: '0' }],
    ['a zero number', { amount: 0 }],
    ['a negative amount', { amount: '-1.00' }],
    ['three decimals', { amount: '1.001' }],
    ['three decimals as a number', { amount: 1.001 }],
    ['an exponent', { amount: '1e2' }],
    ['a huge number', { amount: 1e21 }],
    ['text', { amount: 'ten' }],
    ['an object', { amount: { value: 1 } }],
    ['a comma', { amount: '1,50' }],
    ['an unknown currency', { currency: 'ABC' }],
    ['an invoice_id as text', { invoice_id: '1' }],
    ['a zero invoice_id', { invoice_id: 0 }],
    ['an invoice_id beyond JSON integers', { invoice_id: 1e20 }],
    ['a null customer_payment_id', { customer_payment_id: null }],
    ['a blank method', { method: ' ' }],
    ['an over-long reason', { reason: 'r'.repeat(501) }],
    ['an unknown field', { status: 'succeeded' }],
  ])('refuses %s with 400 validation_failed', async (_label, extra) => {
    const key = await newKey();
    const { invoice, payment } = await paidInvoice(key, '10.00');
    expectError(await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '1.00', ...extra }), 400, 'validation_failed');
    expect((await getInvoice(key, invoice.id)).amount_refunded).toBe('0.00');
  });

  it('lists refunds newest first, filtered by invoice and payment; bad ids are 404', async () => {
    const key = await newKey();
    const a = await paidInvoice(key, '10.00');
    const b = await paidInvoice(key, '10.00');
    const r1 = (await refund(key, { invoice_id: a.invoice.id, customer_payment_id: a.payment.id, amount: '1.00' })).json().data;
    const r2 = (await refund(key, { invoice_id: b.invoice.id, customer_payment_id: b.payment.id, amount: '2.00' })).json().data;
    const ids = async (query: string) => (await call(platform.app, 'GET', `${BASE}/refunds?${query}`, { key })).json().data.map((row: { id: number }) => row.id);
    expect(await ids('')).toEqual([r2.id, r1.id]);
    expect(await ids(`invoice_id=${a.invoice.id}`)).toEqual([r1.id]);
    expect(await ids(`customer_payment_id=${b.payment.id}`)).toEqual([r2.id]);
    expectError(await call(platform.app, 'GET', `${BASE}/refunds?invoice_id=x`, { key }), 400, 'validation_failed');
    for (const id of [...MALFORMED_IDS, '123456789']) {
      expectError(await call(platform.app, 'GET', `${BASE}/refunds/${id}`, { key }), 404, 'not_found');
    }
  });
});

describe('approval policies', () => {
  it('creates, reads, lists and deletes policies', async () => {
    const key = await newKey();
    const generic = await createPolicy(key, { action: 'refund', min_amount: '500' });
    expect(generic).toEqual({ id: expect.any(Number), action: 'refund', min_amount: '500.00', currency: null, created_at: expect.any(String) });
    const euro = await createPolicy(key, { action: 'refund', min_amount: 0, currency: 'eur' });
    expect(euro).toMatchObject({ min_amount: '0.00', currency: 'EUR' });
    expect((await call(platform.app, 'GET', `${BASE}/approval-policies/${generic.id}`, { key })).json().data).toEqual(generic);
    const list = (await call(platform.app, 'GET', `${BASE}/approval-policies?limit=1`, { key })).json();
    expect(list).toEqual({ data: [euro], meta: { limit: 1, offset: 0, total: 2, has_more: true } });
    const deleted = await call(platform.app, 'DELETE', `${BASE}/approval-policies/${generic.id}`, { key });
    expect(deleted.json()).toEqual({ data: { id: generic.id, deleted: true } });
    expectError(await call(platform.app, 'DELETE', `${BASE}/approval-policies/${generic.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/approval-policies/${generic.id}`, { key }), 404, 'not_found');
    for (const id of MALFORMED_IDS) expectError(await call(platform.app, 'DELETE', `${BASE}/approval-policies/${id}`, { key }), 404, 'not_found');
  });

  it.each([
    [{ min_amount: '100' }],
    [{ action: 'void', min_amount: '100' }],
    [{ action: 'refund' }],
    [{ action: 'refund', min_amount: '-1' }],
    [{ action: 'refund', min_amount: '1.001' }],
    [{ action: 'refund', min_amount: 'lots' }],
    [{ action: 'refund', min_amount: null }],
    [{ action: 'refund', min_amount: '1', currency: 'ABC' }],
    [{ action: 'refund', min_amount: '1', currency: null }],
    [{ action: 'refund', min_amount: '1', approvers: 2 }],
  ])('refuses the policy %j with 400', async (body) => {
    const key = await newKey();
    expectError(await call(platform.app, 'POST', `${BASE}/approval-policies`, { key, body }), 400, 'validation_failed');
  });

  it('needs service.invoicing.approve to create or delete a policy: manage alone is not enough', async () => {
    const tenant = await platform.newTenant();
    const manager = await tenant.key({ scopes: ['service.invoicing.manage', 'service.invoicing.view'] });
    expectError(await call(platform.app, 'POST', `${BASE}/approval-policies`, { key: manager, body: { action: 'refund', min_amount: '1' } }), 403, 'insufficient_scope');
  });
});

describe('refunds that need approval', () => {
  it('holds a matching request (202), reserves its amount, and creates the refund once when approved', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const requester = await tenant.key({ scopes: ['service.invoicing.manage', 'service.invoicing.view'] });
    const approver = await tenant.key({ scopes: ['service.invoicing.approve', 'service.invoicing.view'] });
    const policy = await createPolicy(key, { action: 'refund', min_amount: '100.00' });
    const { invoice, payment } = await paidInvoice(key, '300.00');

    // Below the threshold: refunded at once.
    expect((await refund(requester, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '99.99' })).statusCode).toBe(201);

    // At the threshold: held for approval, nothing refunded yet.
    const held = await refund(requester, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '100.00', reason: 'Cancelled order' });
    expect(held.statusCode, held.body).toBe(202);
    const pending = held.json().data;
    expect(pending).toEqual({
      pending_approval: true,
      approval_instance_id: expect.any(Number),
      approval_status_url: `https://api.example.test/api/v1/services/invoicing/approvals/${pending.approval_instance_id}`,
      message: expect.stringContaining('approval'),
    });
    const beforeDecision = await getInvoice(key, invoice.id);
    expect(beforeDecision.amount_refunded).toBe('99.99');
    expect(paymentOf(beforeDecision, payment.id)).toMatchObject({ refunded_amount: '99.99', pending_refund_amount: '100.00', refundable_amount: '100.01' });

    const approvalUrl = `${BASE}/approvals/${pending.approval_instance_id}`;
    const waiting = (await call(platform.app, 'GET', approvalUrl, { key: requester })).json().data;
    expect(waiting).toMatchObject({
      id: pending.approval_instance_id,
      status: 'pending',
      action: 'refund',
      policy_id: policy.id,
      request: { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '100.00', currency: 'USD', method: 'manual', reason: 'Cancelled order' },
      decided_at: null,
      decided_by_key_id: null,
      decision_note: null,
      refund: null,
    });

    // The reservation counts: a second request cannot spend the held amount.
    const overdraw = expectError(await refund(requester, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '100.02' }), 400, 'validation_failed');
    expect(overdraw.details[0]).toMatchObject({ refundable_amount: '100.01' });

    // The requester cannot approve: deciding needs service.invoicing.approve.
    expectError(await call(platform.app, 'POST', `${approvalUrl}/approve`, { key: requester }), 403, 'insufficient_scope');

    platform.clock.advance(10);
    const approved = await call(platform.app, 'POST', `${approvalUrl}/approve`, { key: approver, body: { note: 'Confirmed with the customer' } });
    expect(approved.statusCode, approved.body).toBe(200);
    const decision = approved.json().data;
    expect(decision).toMatchObject({
      status: 'approved',
      decided_at: expect.any(String),
      decision_note: 'Confirmed with the customer',
      decided_by_key_id: expect.any(String),
      refund: {
        invoice_id: invoice.id,
        customer_payment_id: payment.id,
        amount: '100.00',
        status: 'succeeded',
        reason: 'Cancelled order',
        approval_id: pending.approval_instance_id,
      },
    });
    expect(decision.decided_by_key_id).not.toBe(decision.requested_by_key_id);
    expect((await call(platform.app, 'GET', approvalUrl, { key })).json().data).toEqual(decision);

    const after = await getInvoice(key, invoice.id);
    expect(after.amount_refunded).toBe('199.99');
    expect(paymentOf(after, payment.id)).toMatchObject({ refunded_amount: '199.99', pending_refund_amount: '0.00', refundable_amount: '100.01' });

    // Deciding twice is refused and creates nothing more.
    const twice = expectError(await call(platform.app, 'POST', `${approvalUrl}/approve`, { key: approver }), 409, 'approval_already_decided');
    expect(twice.details[0]).toMatchObject({ path: 'status', status: 'approved' });
    expectError(await call(platform.app, 'POST', `${approvalUrl}/reject`, { key: approver }), 409, 'approval_already_decided');
    expect((await call(platform.app, 'GET', `${BASE}/refunds?invoice_id=${invoice.id}`, { key })).json().meta.total).toBe(2);
    expect((await getInvoice(key, invoice.id)).amount_refunded).toBe('199.99');
  });

  it('releases the reserved amount when rejected', async () => {
    const key = await newKey();
    await createPolicy(key, { action: 'refund', min_amount: '0' });
    const { invoice, payment } = await paidInvoice(key, '80.00');
    const held = (await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '80.00' })).json().data;
    expectError(await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '0.01' }), 400, 'validation_failed');
    const rejected = await call(platform.app, 'POST', `${BASE}/approvals/${held.approval_instance_id}/reject`, { key, body: { note: 'Not eligible' } });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json().data).toMatchObject({ status: 'rejected', decision_note: 'Not eligible', refund: null, decided_at: expect.any(String) });
    const after = await getInvoice(key, invoice.id);
    expect(after.amount_refunded).toBe('0.00');
    expect(paymentOf(after, payment.id)).toMatchObject({ pending_refund_amount: '0.00', refundable_amount: '80.00' });
    expectError(await call(platform.app, 'POST', `${BASE}/approvals/${held.approval_instance_id}/approve`, { key }), 409, 'approval_already_decided');
    expectError(await call(platform.app, 'POST', `${BASE}/approvals/${held.approval_instance_id}/reject`, { key }), 409, 'approval_already_decided');
  });

  it('matches on currency when the policy names one, and on amount at or above min_amount', async () => {
    const key = await newKey();
    await createPolicy(key, { action: 'refund', min_amount: '10.00', currency: 'EUR' });
    const usd = await paidInvoice(key, '100.00');
    const body = (amount: string) => ({ invoice_id: usd.invoice.id, customer_payment_id: usd.payment.id, amount });
    expect((await refund(key, body('20.00'))).statusCode).toBe(201);
    const usdPolicy = await createPolicy(key, { action: 'refund', min_amount: '20.00', currency: 'usd' });
    expect((await refund(key, body('19.99'))).statusCode).toBe(201);
    expect((await refund(key, body('20.00'))).statusCode).toBe(202);
    // The most specific match wins: the highest threshold at or below the amount.
    const generic = await createPolicy(key, { action: 'refund', min_amount: '0.01' });
    const pending = (await refund(key, body('0.01'))).json().data;
    expect(pending.pending_approval).toBe(true);
    const approval = (await call(platform.app, 'GET', `${BASE}/approvals/${pending.approval_instance_id}`, { key })).json().data;
    expect(approval.policy_id).toBe(generic.id);
    const large = (await refund(key, body('25.00'))).json().data;
    expect((await call(platform.app, 'GET', `${BASE}/approvals/${large.approval_instance_id}`, { key })).json().data.policy_id).toBe(usdPolicy.id);

    // Deleting a policy stops new matches; approvals already pending stay pending and can be decided.
    await call(platform.app, 'DELETE', `${BASE}/approval-policies/${generic.id}`, { key });
    expect((await refund(key, body('0.01'))).statusCode).toBe(201);
    expect((await call(platform.app, 'GET', `${BASE}/approvals/${pending.approval_instance_id}`, { key })).json().data).toMatchObject({ status: 'pending', policy_id: generic.id });
    expect((await call(platform.app, 'POST', `${BASE}/approvals/${pending.approval_instance_id}/approve`, { key })).json().data.status).toBe('approved');
  });

  it('lists approvals, filtered by status, with the refund of approved ones', async () => {
    const key = await newKey();
    await createPolicy(key, { action: 'refund', min_amount: '1' });
    const { invoice, payment } = await paidInvoice(key, '30.00');
    const ids: number[] = [];
    for (let index = 0; index < 3; index += 1) {
      ids.push((await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '5.00' })).json().data.approval_instance_id);
    }
    await call(platform.app, 'POST', `${BASE}/approvals/${ids[0]}/approve`, { key });
    await call(platform.app, 'POST', `${BASE}/approvals/${ids[1]}/reject`, { key });
    const list = async (query: string) => (await call(platform.app, 'GET', `${BASE}/approvals?${query}`, { key })).json();
    expect((await list('')).data.map((row: { id: number }) => row.id)).toEqual([ids[2], ids[1], ids[0]]);
    const approved = await list('status=approved');
    expect(approved.data).toHaveLength(1);
    expect(approved.data[0].refund).toMatchObject({ amount: '5.00', approval_id: ids[0] });
    expect((await list('status=pending')).data.map((row: { id: number }) => row.id)).toEqual([ids[2]]);
    expectError(await call(platform.app, 'GET', `${BASE}/approvals?status=maybe`, { key }), 400, 'validation_failed');
  });

  it('answers 404 for bad approval ids and another tenant, and 400 for a bad note', async () => {
    const key = await newKey();
    await createPolicy(key, { action: 'refund', min_amount: '1' });
    const { invoice, payment } = await paidInvoice(key, '30.00');
    const held = (await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '5.00' })).json().data;
    for (const id of [...MALFORMED_IDS, '123456789']) {
      expectError(await call(platform.app, 'GET', `${BASE}/approvals/${id}`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'POST', `${BASE}/approvals/${id}/approve`, { key }), 404, 'not_found');
      expectError(await call(platform.app, 'POST', `${BASE}/approvals/${id}/reject`, { key }), 404, 'not_found');
    }
    expectError(await call(platform.app, 'POST', `${BASE}/approvals/${held.approval_instance_id}/approve`, { key: await newKey() }), 404, 'not_found');
    for (const body of [{ note: 5 }, { note: 'n'.repeat(1001) }, { decision: 'yes' }]) {
      expectError(await call(platform.app, 'POST', `${BASE}/approvals/${held.approval_instance_id}/approve`, { key, body }), 400, 'validation_failed');
    }
    expect((await call(platform.app, 'GET', `${BASE}/approvals/${held.approval_instance_id}`, { key })).json().data.status).toBe('pending');
  });
});

describe('concurrency', () => {
  it('twenty concurrent refunds never refund more than the payment holds', async () => {
    const key = await newKey();
    const { invoice, payment } = await paidInvoice(key, '100.00');
    // 15.00 fits six times into 100.00 (90.00); the seventh would need 105.00.
    const replies = await Promise.all(Array.from({ length: 20 }, () => refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '15.00' })));
    const statuses = replies.map((reply) => reply.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(6);
    expect(statuses.filter((status) => status === 400)).toHaveLength(14);
    for (const reply of replies.filter((r) => r.statusCode === 400)) expect(reply.json().error.details[0].path).toBe('amount');
    const after = await getInvoice(key, invoice.id);
    expect(after.amount_refunded).toBe('90.00');
    expect(paymentOf(after, payment.id)).toMatchObject({ refunded_amount: '90.00', refundable_amount: '10.00' });
    expect((await call(platform.app, 'GET', `${BASE}/refunds?customer_payment_id=${payment.id}`, { key })).json().meta.total).toBe(6);
  });

  it('twenty concurrent requests for approval reserve no more than the payment holds', async () => {
    const key = await newKey();
    await createPolicy(key, { action: 'refund', min_amount: '10.00' });
    const { invoice, payment } = await paidInvoice(key, '100.00');
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        // Half would be refunded at once, half held: together they still fit only seven times.
        refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: index % 2 === 0 ? '14.00' : '9.00' }),
      ),
    );
    const ok = replies.filter((reply) => reply.statusCode === 201 || reply.statusCode === 202);
    expect(replies.every((reply) => [201, 202, 400].includes(reply.statusCode))).toBe(true);
    const spent = ok.reduce((sum, reply) => sum + (reply.statusCode === 202 ? 1400 : 900), 0);
    expect(spent).toBeLessThanOrEqual(10000);
    const after = paymentOf(await getInvoice(key, invoice.id), payment.id);
    const toCents = (value: string) => Math.round(Number(value) * 100);
    expect(toCents(after.refunded_amount) + toCents(after.pending_refund_amount)).toBe(spent);
    expect(toCents(after.refundable_amount)).toBe(10000 - spent);
  });

  it('an approval is decided once even when approve and reject race', async () => {
    const key = await newKey();
    await createPolicy(key, { action: 'refund', min_amount: '1' });
    const { invoice, payment } = await paidInvoice(key, '50.00');
    const held = (await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '50.00' })).json().data;
    const url = `${BASE}/approvals/${held.approval_instance_id}`;
    const replies = await Promise.all([
      call(platform.app, 'POST', `${url}/approve`, { key }),
      call(platform.app, 'POST', `${url}/approve`, { key }),
      call(platform.app, 'POST', `${url}/reject`, { key }),
      call(platform.app, 'POST', `${url}/approve`, { key }),
    ]);
    expect(replies.map((reply) => reply.statusCode).sort()).toEqual([200, 409, 409, 409]);
    const final = (await call(platform.app, 'GET', url, { key })).json().data;
    const after = paymentOf(await getInvoice(key, invoice.id), payment.id);
    if (final.status === 'approved') expect(after).toMatchObject({ refunded_amount: '50.00', pending_refund_amount: '0.00' });
    else expect(after).toMatchObject({ refunded_amount: '0.00', pending_refund_amount: '0.00', refundable_amount: '50.00' });
    expect((await call(platform.app, 'GET', `${BASE}/refunds?invoice_id=${invoice.id}`, { key })).json().meta.total).toBe(final.status === 'approved' ? 1 : 0);
  });

  it('the database itself refuses to overdraw a payment or create two refunds for one approval', async () => {
    const key = await newKey();
    const { payment } = await paidInvoice(key, '10.00');
    const db = platform.database.db;
    await expect(sql`update invoicing_payments set refunded_minor = amount_minor + 1 where id = ${String(payment.id)}`.execute(db)).rejects.toMatchObject({
      code: '23514',
    });
    await expect(sql`update invoicing_payments set refunded_minor = 600, reserved_minor = 401 where id = ${String(payment.id)}`.execute(db)).rejects.toMatchObject({
      code: '23514',
    });
  });
});

const MANAGE = 'service.invoicing.manage';
const VIEW = 'service.invoicing.view';
const APPROVE = 'service.invoicing.approve';

async function pendingApproval(key: string) {
  await createPolicy(key, { action: 'refund', min_amount: '1' });
  const { invoice, payment } = await paidInvoice(key, '10.00');
  return (await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '5.00' })).json().data as { approval_instance_id: number };
}

describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: MANAGE,
  setup: (key) => paidInvoice(key),
  url: () => `${BASE}/refunds`,
  body: ({ invoice, payment }) => ({ invoice_id: invoice.id, customer_payment_id: payment.id, amount: '1.00' }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: VIEW, url: () => `${BASE}/refunds`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: VIEW,
  setup: async (key) => {
    const { invoice, payment } = await paidInvoice(key);
    return (await refund(key, { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '1.00' })).json().data as { id: number };
  },
  url: (record) => `${BASE}/refunds/${record.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: APPROVE,
  url: () => `${BASE}/approval-policies`,
  body: () => ({ action: 'refund', min_amount: '100' }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: VIEW, url: () => `${BASE}/approval-policies`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: VIEW,
  setup: (key) => createPolicy(key, { action: 'refund', min_amount: '1' }),
  url: (policy: { id: number }) => `${BASE}/approval-policies/${policy.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'DELETE',
  scope: APPROVE,
  setup: (key) => createPolicy(key, { action: 'refund', min_amount: '1' }),
  url: (policy: { id: number }) => `${BASE}/approval-policies/${policy.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: VIEW, url: () => `${BASE}/approvals`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: VIEW,
  setup: pendingApproval,
  url: (pending) => `${BASE}/approvals/${pending.approval_instance_id}`,
  addressesOneRow: true,
});
for (const decision of ['approve', 'reject']) {
  describeRouteSecurity(() => platform, {
    method: 'POST',
    scope: APPROVE,
    setup: pendingApproval,
    url: (pending) => `${BASE}/approvals/${pending.approval_instance_id}/${decision}`,
    body: () => ({ note: 'ok' }),
    addressesOneRow: true,
  });
}
