import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { asJson, recordedEvents } from '../../../test/recorded-events.js';
import { BASE, fixtures } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform({ env: { PUBLIC_BASE_URL: 'https://api.example.test' } });
});
afterAll(() => platform.close());

const { draftInvoice, openInvoice, pay, paidInvoice, getInvoice } = fixtures(() => platform);

async function newTenant() {
  const tenant = await platform.newTenant();
  return { tenantId: tenant.id, key: await tenant.key() };
}

function events(tenantId: string, type: string) {
  return recordedEvents(platform, tenantId, type);
}

/** The one event of `type` the tenant has, checked to carry `resource` exactly. */
async function expectOneEvent(tenantId: string, type: string, resource: unknown) {
  const recorded = await events(tenantId, type);
  expect(recorded).toHaveLength(1);
  expect(recorded[0]!.livemode).toBe(false);
  expect(asJson(recorded[0]!.data.object)).toEqual(asJson(resource));
}

async function get(key: string, path: string) {
  const response = await call(platform.app, 'GET', `${BASE}${path}`, { key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

function post(key: string, path: string, body?: Record<string, unknown>, headers: Record<string, string> = {}) {
  return call(platform.app, 'POST', `${BASE}${path}`, { key, headers, ...(body === undefined ? {} : { body }) });
}

async function createPolicy(key: string, minAmount: string) {
  expect((await post(key, '/approval-policies', { action: 'refund', min_amount: minAmount })).statusCode).toBe(201);
}

/** A refund request held by a policy (202); returns the approval's id. */
async function heldRefund(key: string, amount: string): Promise<number> {
  await createPolicy(key, '1.00');
  const { invoice, payment } = await paidInvoice(key, amount);
  const held = await post(key, '/refunds', { invoice_id: invoice.id, customer_payment_id: payment.id, amount });
  expect(held.statusCode, held.body).toBe(202);
  return held.json().data.approval_instance_id;
}

describe('invoicing.invoice.finalized', () => {
  it('is recorded once when a draft is finalized, carrying the invoice as GET shows it', async () => {
    const { tenantId, key } = await newTenant();
    const draft = await draftInvoice(key, '120.00');
    expect((await post(key, `/invoices/${draft.id}/finalize`)).statusCode).toBe(200);
    await expectOneEvent(tenantId, 'invoicing.invoice.finalized', await getInvoice(key, draft.id));

    expectError(await post(key, `/invoices/${draft.id}/finalize`), 409, 'invalid_status_transition');
    expect(await events(tenantId, 'invoicing.invoice.finalized')).toHaveLength(1);
  });

  it('is not recorded when finalizing is refused', async () => {
    const { tenantId, key } = await newTenant();
    const empty = await draftInvoice(key, '100.00', { line_items: [] });
    expectError(await post(key, `/invoices/${empty.id}/finalize`), 409, 'invoice_not_finalizable');
    expect(await events(tenantId, 'invoicing.invoice.finalized')).toEqual([]);
  });
});

describe('invoicing.payment.created and invoicing.invoice.paid', () => {
  it('records each payment as its route returns it, and paid once when nothing is left due', async () => {
    const { tenantId, key } = await newTenant();
    const open = await openInvoice(key, '100.00');
    const first = await pay(key, open.id, { amount: '40.00', method: 'bank_transfer' });
    await expectOneEvent(tenantId, 'invoicing.payment.created', first);
    expect(asJson(first.invoice)).toEqual(asJson(await getInvoice(key, open.id)));
    expect(await events(tenantId, 'invoicing.invoice.paid')).toEqual([]);

    const second = await pay(key, open.id, { amount: '60.00' });
    const payments = await events(tenantId, 'invoicing.payment.created');
    expect(payments.map((event) => event.data.object.id)).toEqual(expect.arrayContaining([first.id, second.id]));
    expect(asJson(payments.find((event) => event.data.object.id === second.id)!.data.object)).toEqual(asJson(second));
    const invoice = await getInvoice(key, open.id);
    expect(invoice.status).toBe('paid');
    await expectOneEvent(tenantId, 'invoicing.invoice.paid', invoice);
  });

  it('records nothing for a refused payment', async () => {
    const { tenantId, key } = await newTenant();
    const open = await openInvoice(key, '100.00');
    expectError(await post(key, `/invoices/${open.id}/payments`, { amount: '100.01' }), 400, 'validation_failed');
    const draft = await draftInvoice(key);
    expectError(await post(key, `/invoices/${draft.id}/payments`, { amount: '1.00' }), 409, 'invoice_not_payable');
    const { invoice } = await paidInvoice(key);
    expectError(await post(key, `/invoices/${invoice.id}/payments`, { amount: '1.00' }), 409, 'invoice_not_payable');
    expect(await events(tenantId, 'invoicing.payment.created')).toHaveLength(1);
    expect(await events(tenantId, 'invoicing.invoice.paid')).toHaveLength(1);
  });

  it('records a payment retried with its Idempotency-Key once', async () => {
    const { tenantId, key } = await newTenant();
    const open = await openInvoice(key, '100.00');
    const headers = { 'idempotency-key': 'pay-once' };
    const first = await post(key, `/invoices/${open.id}/payments`, { amount: '100.00' }, headers);
    expect(first.statusCode).toBe(201);
    expect((await post(key, `/invoices/${open.id}/payments`, { amount: '100.00' }, headers)).json()).toEqual(first.json());
    await expectOneEvent(tenantId, 'invoicing.payment.created', first.json().data);
    await expectOneEvent(tenantId, 'invoicing.invoice.paid', await getInvoice(key, open.id));
  });
});

describe('invoicing.refund.created', () => {
  it('is recorded once for a refund made at once, and not for a refused one', async () => {
    const { tenantId, key } = await newTenant();
    const { invoice, payment } = await paidInvoice(key, '100.00');
    const made = await post(key, '/refunds', { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '30.00', reason: 'Damaged' });
    expect(made.statusCode, made.body).toBe(201);
    await expectOneEvent(tenantId, 'invoicing.refund.created', await get(key, `/refunds/${made.json().data.id}`));

    expectError(await post(key, '/refunds', { invoice_id: invoice.id, customer_payment_id: payment.id, amount: '70.01' }), 400, 'validation_failed');
    expect(await events(tenantId, 'invoicing.refund.created')).toHaveLength(1);
  });
});

describe('invoicing.approval.requested and invoicing.approval.decided', () => {
  it('records the request when a policy holds a refund, then the refund and the decision when it is approved', async () => {
    const { tenantId, key } = await newTenant();
    const approvalId = await heldRefund(key, '250.00');
    await expectOneEvent(tenantId, 'invoicing.approval.requested', await get(key, `/approvals/${approvalId}`));
    expect(await events(tenantId, 'invoicing.refund.created')).toEqual([]);
    expect(await events(tenantId, 'invoicing.approval.decided')).toEqual([]);

    const approved = await post(key, `/approvals/${approvalId}/approve`, { note: 'Checked' });
    expect(approved.statusCode, approved.body).toBe(200);
    const approval = await get(key, `/approvals/${approvalId}`);
    expect(approval.status).toBe('approved');
    await expectOneEvent(tenantId, 'invoicing.approval.decided', approval);
    await expectOneEvent(tenantId, 'invoicing.refund.created', await get(key, `/refunds/${approval.refund.id}`));

    expectError(await post(key, `/approvals/${approvalId}/approve`), 409, 'approval_already_decided');
    expectError(await post(key, `/approvals/${approvalId}/reject`), 409, 'approval_already_decided');
    expect(await events(tenantId, 'invoicing.approval.decided')).toHaveLength(1);
    expect(await events(tenantId, 'invoicing.refund.created')).toHaveLength(1);
    expect(await events(tenantId, 'invoicing.approval.requested')).toHaveLength(1);
  });

  it('records the decision, and no refund, when the approval is rejected', async () => {
    const { tenantId, key } = await newTenant();
    const approvalId = await heldRefund(key, '80.00');
    expect((await post(key, `/approvals/${approvalId}/reject`, { note: 'Not eligible' })).statusCode).toBe(200);
    const approval = await get(key, `/approvals/${approvalId}`);
    expect(approval.status).toBe('rejected');
    await expectOneEvent(tenantId, 'invoicing.approval.decided', approval);

    expectError(await post(key, `/approvals/${approvalId}/reject`), 409, 'approval_already_decided');
    expect(await events(tenantId, 'invoicing.approval.decided')).toHaveLength(1);
    expect(await events(tenantId, 'invoicing.refund.created')).toEqual([]);
  });

  it('records one decision when approve and reject race', async () => {
    const { tenantId, key } = await newTenant();
    const approvalId = await heldRefund(key, '50.00');
    const url = `/approvals/${approvalId}`;
    const replies = await Promise.all([post(key, `${url}/approve`), post(key, `${url}/reject`), post(key, `${url}/approve`), post(key, `${url}/reject`)]);
    expect(replies.map((reply) => reply.statusCode).sort()).toEqual([200, 409, 409, 409]);
    const approval = await get(key, url);
    await expectOneEvent(tenantId, 'invoicing.approval.decided', approval);
    expect(await events(tenantId, 'invoicing.refund.created')).toHaveLength(approval.status === 'approved' ? 1 : 0);
  });
});
