import { expect } from 'vitest';
import { call, type TestPlatform } from '../../../test/harness.js';

/** Shared fixtures of the invoicing tests (not a test file itself). */

export const BASE = '/api/v1/services/invoicing';

export interface CustomerData {
  id: number;
  display_name: string;
  updated_at: string;
  [field: string]: unknown;
}

export interface PaymentData {
  id: number;
  invoice_id: number;
  amount: string;
  refunded_amount: string;
  pending_refund_amount: string;
  refundable_amount: string;
  [field: string]: unknown;
}

export interface InvoiceData {
  id: number;
  number: string;
  status: string;
  total: string;
  amount_paid: string;
  amount_refunded: string;
  amount_due: string;
  payments: PaymentData[];
  updated_at: string;
  [field: string]: unknown;
}

export function fixtures(getPlatform: () => TestPlatform) {
  const app = () => getPlatform().app;

  async function createCustomer(key: string, body: Record<string, unknown> = { display_name: 'Acme Ltd' }): Promise<CustomerData> {
    const response = await call(app(), 'POST', `${BASE}/customers`, { key, body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data;
  }

  async function createInvoice(key: string, body: Record<string, unknown>): Promise<InvoiceData> {
    const response = await call(app(), 'POST', `${BASE}/invoices`, { key, body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data;
  }

  /** A customer and a draft invoice of one line for `amount` (default 100.00). */
  async function draftInvoice(key: string, amount = '100.00', extra: Record<string, unknown> = {}): Promise<InvoiceData> {
    const customer = await createCustomer(key);
    return createInvoice(key, { customer_id: customer.id, line_items: [{ description: 'Work', quantity: '1', unit_price: amount }], ...extra });
  }

  async function finalize(key: string, invoiceId: number): Promise<InvoiceData> {
    const response = await call(app(), 'POST', `${BASE}/invoices/${invoiceId}/finalize`, { key });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data;
  }

  async function openInvoice(key: string, amount = '100.00'): Promise<InvoiceData> {
    return finalize(key, (await draftInvoice(key, amount)).id);
  }

  async function pay(key: string, invoiceId: number, body: Record<string, unknown>): Promise<PaymentData & { invoice: InvoiceData }> {
    const response = await call(app(), 'POST', `${BASE}/invoices/${invoiceId}/payments`, { key, body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data;
  }

  /** An open invoice of `amount`, paid in full by one payment. */
  async function paidInvoice(key: string, amount = '100.00'): Promise<{ invoice: InvoiceData; payment: PaymentData }> {
    const open = await openInvoice(key, amount);
    const payment = await pay(key, open.id, { amount, method: 'bank_transfer' });
    return { invoice: payment.invoice, payment };
  }

  async function getInvoice(key: string, invoiceId: number): Promise<InvoiceData> {
    const response = await call(app(), 'GET', `${BASE}/invoices/${invoiceId}`, { key });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data;
  }

  return { createCustomer, createInvoice, draftInvoice, finalize, openInvoice, pay, paidInvoice, getInvoice };
}

/** Path ids that name no row: wrong shapes, zero, beyond bigint. All must be 404. */
export const MALFORMED_IDS = ['abc', '0', '-1', '01', '1.5', '1e3', '%20', '9223372036854775808', '99999999999999999999999'];
