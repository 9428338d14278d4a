import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { BASE, fixtures } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { createCustomer, createInvoice, finalize, pay } = fixtures(() => platform);
const newKey = async () => (await platform.newTenant()).key();
const JPY_MESSAGE = 'JPY has no minor unit; amounts must be whole numbers.';

describe('amounts in the currency of the invoice (ISO 4217 minor units)', () => {
  it('prices a JPY invoice in whole yen and shows amounts without decimals', async () => {
    const key = await newKey();
    const customer = await createCustomer(key, { display_name: 'Tokyo KK', default_currency: 'jpy' });
    const invoice = await createInvoice(key, {
      customer_id: customer.id,
      line_items: [
        { description: 'Tea', quantity: '1.5', unit_price: '1001' },
        { description: 'Cups', quantity: 3, unit_price: '1500.00', tax_rate: '10' },
        { description: 'Spoons', quantity: '1', unit_price: '333', tax_rate: '8.875' },
      ],
    });
    expect(invoice).toMatchObject({ currency: 'JPY', subtotal: '6335', tax_total: '480', total: '6815', amount_due: '6815' });
    expect(invoice.line_items).toMatchObject([
      // 1.5 x 1001 = 1501.5 -> 1502 (half-up to whole yen)
      { unit_price: '1001', subtotal: '1502', tax: '0', total: '1502' },
      { unit_price: '1500', subtotal: '4500', tax: '450', total: '4950' },
      // 333 x 8.875 % = 29.55 -> 30
      { unit_price: '333', subtotal: '333', tax: '30', total: '363' },
    ]);
    const open = await finalize(key, invoice.id);
    const payment = await pay(key, open.id, { amount: '815' });
    expect(payment).toMatchObject({ amount: '815', refundable_amount: '815', currency: 'JPY' });
    expect(payment.invoice).toMatchObject({ amount_paid: '815', amount_due: '6000', status: 'partially_paid' });
  });

  it('refuses JPY amounts with decimals on every field that takes one, naming the field', async () => {
    const key = await newKey();
    const customer = await createCustomer(key, { display_name: 'Tokyo KK' });
    const refused = await call(platform.app, 'POST', `${BASE}/invoices`, {
      key,
      body: { customer_id: customer.id, currency: 'JPY', line_items: [{ description: 'Tea', quantity: '1', unit_price: '1500.50' }] },
    });
    const error = expectError(refused, 400, 'validation_failed');
    expect(error.details).toEqual([{ path: 'line_items[0].unit_price', code: 'invalid_format', message: JPY_MESSAGE }]);

    const invoice = await finalize(
      key,
      (await createInvoice(key, { customer_id: customer.id, currency: 'JPY', line_items: [{ description: 'Tea', quantity: '1', unit_price: '1500' }] })).id,
    );
    const payment = await call(platform.app, 'POST', `${BASE}/invoices/${invoice.id}/payments`, { key, body: { amount: '1500.50' } });
    expect(expectError(payment, 400, 'validation_failed').details).toEqual([{ path: 'amount', code: 'invalid_format', message: JPY_MESSAGE }]);
    const numberPayment = await call(platform.app, 'POST', `${BASE}/invoices/${invoice.id}/payments`, { key, body: { amount: 0.5, currency: 'jpy' } });
    expect(expectError(numberPayment, 400, 'validation_failed').details[0]).toMatchObject({ path: 'amount', message: JPY_MESSAGE });

    const paid = await pay(key, invoice.id, { amount: '1500.00' });
    expect(paid).toMatchObject({ amount: '1500', invoice: { status: 'paid', amount_due: '0' } });
    const refund = await call(platform.app, 'POST', `${BASE}/refunds`, {
      key,
      body: { invoice_id: invoice.id, customer_payment_id: paid.id, amount: '0.50' },
    });
    expect(expectError(refund, 400, 'validation_failed').details).toEqual([{ path: 'amount', code: 'invalid_format', message: JPY_MESSAGE }]);
    const tooMuch = await call(platform.app, 'POST', `${BASE}/refunds`, { key, body: { invoice_id: invoice.id, customer_payment_id: paid.id, amount: 2000 } });
    expect(expectError(tooMuch, 400, 'validation_failed').details[0]).toMatchObject({ path: 'amount', refundable_amount: '1500' });
    const whole = await call(platform.app, 'POST', `${BASE}/refunds`, { key, body: { invoice_id: invoice.id, customer_payment_id: paid.id, amount: 500 } });
    expect(whole.statusCode, whole.body).toBe(201);
    expect(whole.json().data).toMatchObject({ amount: '500', currency: 'JPY' });

    const policy = await call(platform.app, 'POST', `${BASE}/approval-policies`, { key, body: { action: 'refund', min_amount: '10000.5', currency: 'JPY' } });
    expect(expectError(policy, 400, 'validation_failed').details).toEqual([{ path: 'min_amount', code: 'invalid_format', message: JPY_MESSAGE }]);
    const wholePolicy = await call(platform.app, 'POST', `${BASE}/approval-policies`, { key, body: { action: 'refund', min_amount: '10000', currency: 'JPY' } });
    expect(wholePolicy.statusCode, wholePolicy.body).toBe(201);
    expect(wholePolicy.json().data).toMatchObject({ min_amount: '10000', currency: 'JPY' });
  });

  it('refuses to move a draft to JPY while a unit price has decimals, and reprices whole ones in yen', async () => {
    const key = await newKey();
    const customer = await createCustomer(key);
    const cents = await createInvoice(key, { customer_id: customer.id, line_items: [{ description: 'Work', quantity: '1', unit_price: '12.50' }] });
    const moved = await call(platform.app, 'PATCH', `${BASE}/invoices/${cents.id}`, { key, body: { currency: 'JPY' } });
    expect(expectError(moved, 400, 'validation_failed').details[0]).toMatchObject({ path: 'currency', code: 'invalid_value' });

    const whole = await createInvoice(key, { customer_id: customer.id, line_items: [{ description: 'Work', quantity: '1.5', unit_price: '3' }] });
    expect(whole).toMatchObject({ currency: 'USD', total: '4.50' });
    const yen = await call(platform.app, 'PATCH', `${BASE}/invoices/${whole.id}`, { key, body: { currency: 'jpy' } });
    expect(yen.statusCode, yen.body).toBe(200);
    expect(yen.json().data).toMatchObject({ currency: 'JPY', total: '5', line_items: [{ unit_price: '3', subtotal: '5' }] });
  });

  it('keeps USD amounts exactly as before', async () => {
    const key = await newKey();
    const customer = await createCustomer(key);
    const invoice = await createInvoice(key, { customer_id: customer.id, line_items: [{ description: 'Work', quantity: '3', unit_price: '33.333', tax_rate: '20' }] });
    expect(invoice).toMatchObject({ currency: 'USD', subtotal: '100.00', tax_total: '20.00', total: '120.00', line_items: [{ unit_price: '33.333' }] });
    const payment = await pay(key, (await finalize(key, invoice.id)).id, { amount: '0.5' });
    expect(payment).toMatchObject({ amount: '0.50', invoice: { amount_due: '119.50' } });
  });

  it("holds three-decimal currencies to the spec's 2 decimals: KWD 1.234 is refused, 1.23 is taken", async () => {
    const key = await newKey();
    const customer = await createCustomer(key, { display_name: 'Kuwait Co', default_currency: 'KWD' });
    const invoice = await finalize(key, (await createInvoice(key, { customer_id: customer.id, line_items: [{ description: 'Work', quantity: '1', unit_price: '10.125' }] })).id);
    expect(invoice).toMatchObject({ currency: 'KWD', total: '10.13', line_items: [{ unit_price: '10.125' }] });
    const refused = await call(platform.app, 'POST', `${BASE}/invoices/${invoice.id}/payments`, { key, body: { amount: '1.234' } });
    expect(expectError(refused, 400, 'validation_failed').details).toEqual([{ path: 'amount', code: 'invalid_format', message: 'amount may have at most 2 decimal places.' }]);
    expect(await pay(key, invoice.id, { amount: '1.23' })).toMatchObject({ amount: '1.23', invoice: { amount_due: '8.90' } });
  });
});
