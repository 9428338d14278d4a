import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { BASE, fixtures } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const { send, createTask } = fixtures(() => platform);
const S = '/api/v1/services';

async function other(key: string, method: string, path: string, body?: unknown, status = 201) {
  const response = await call(platform.app, method, `${S}${path}`, { key, ...(body === undefined ? {} : { body }) });
  expect(response.statusCode, response.body).toBe(status);
  return response.json().data;
}

describe('links', () => {
  it('links a task to a real invoice and form, resolves label and url through their services, and refreshes them on read', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const customer = await other(key, 'POST', '/invoicing/customers', { display_name: 'Acme Ltd' });
    const invoice = await other(key, 'POST', '/invoicing/invoices', { customer_id: customer.id, line_items: [{ description: 'Work', quantity: '1', unit_price: '100.00' }] });
    const form = await other(key, 'POST', '/forms/forms', { name: 'Contact us', fields: [{ key: 'name', label: 'Name', type: 'text' }] });
    const task = await createTask(key);

    const invoiceLink = await send(key, 'POST', `/tasks/${task.id}/links`, { source: 'invoicing', source_id: String(invoice.id) });
    expect(invoiceLink).toEqual({
      id: expect.any(Number),
      task_id: task.id,
      source: 'invoicing',
      source_id: String(invoice.id),
      label: invoice.number,
      url: `/dashboard/invoicing/invoices/${invoice.id}`,
    });
    const formLink = await send(key, 'POST', `/tasks/${task.id}/links`, { source: 'forms', source_id: form.id });
    expect(formLink).toMatchObject({ source: 'forms', source_id: form.id, label: 'Contact us', url: `/dashboard/forms/forms/${form.id}` });
    const lead = await send(key, 'POST', `/tasks/${task.id}/links`, { source: 'my-leads', source_id: '991' });
    expect(lead).toMatchObject({ source: 'my-leads', label: null, url: null });
    const chat = await send(key, 'POST', `/tasks/${task.id}/links`, { source: 'smart-chat', source_id: 'conv_1' });
    expect(chat).toMatchObject({ label: null, url: null });
    expect(await send(key, 'POST', `/tasks/${task.id}/links`, { source: 'invoicing', source_id: String(invoice.id) })).toEqual(invoiceLink);

    await other(key, 'PATCH', `/forms/forms/${form.id}`, { name: 'Contact sales' }, 200);
    const list = (await call(platform.app, 'GET', `${BASE}/tasks/${task.id}/links`, { key })).json();
    expect(list.meta).toEqual({ limit: 50, offset: 0, total: 4, has_more: false });
    expect(list.data).toEqual([invoiceLink, { ...formLink, label: 'Contact sales' }, lead, chat]);

    expect(await send(key, 'DELETE', `/tasks/${task.id}/links/${chat.id}`)).toEqual({ id: chat.id, deleted: true });
    expectError(await call(platform.app, 'DELETE', `${BASE}/tasks/${task.id}/links/${chat.id}`, { key }), 404, 'not_found');
    expect((await call(platform.app, 'GET', `${BASE}/tasks/${task.id}/links`, { key })).json().meta.total).toBe(3);
  });

  it('resolves a booking through the appointments service', async () => {
    const key = await (await platform.newTenant()).key();
    const resource = await other(key, 'POST', '/appointments/resources', { name: 'Dr Ada' });
    const startsAt = new Date(Math.ceil((Date.now() + 30 * 24 * 3600 * 1000) / 3600000) * 3600000);
    const booking = await other(key, 'POST', '/appointments/bookings', {
      resource_id: resource.id,
      starts_at: startsAt.toISOString(),
      ends_at: new Date(startsAt.getTime() + 3600000).toISOString(),
    });
    const task = await createTask(key);
    expect(await send(key, 'POST', `/tasks/${task.id}/links`, { source: 'appointments', source_id: booking.id })).toMatchObject({
      source: 'appointments',
      source_id: booking.id,
      label: `Booking ${startsAt.toISOString()}`,
      url: `/dashboard/appointments/bookings/${booking.id}`,
    });
  });

  it('refuses a record the owning service does not have, an unknown source and an unknown task', async () => {
    const key = await (await platform.newTenant()).key();
    const task = await createTask(key);
    for (const body of [
      { source: 'invoicing', source_id: '999999' },
      { source: 'invoicing', source_id: 'abc' },
      { source: 'forms', source_id: '3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c' },
      { source: 'appointments', source_id: '3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c' },
    ]) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/tasks/${task.id}/links`, { key, body }), 400, 'validation_failed');
      expect(error.details[0]?.path).toBe('source_id');
    }
    const error = expectError(await call(platform.app, 'POST', `${BASE}/tasks/${task.id}/links`, { key, body: { source: 'crm', source_id: '1' } }), 400, 'validation_failed');
    expect(error.details[0]?.path).toBe('source');
    expectError(await call(platform.app, 'POST', `${BASE}/tasks/999999/links`, { key, body: { source: 'my-leads', source_id: '1' } }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/tasks/999999/links`, { key }), 404, 'not_found');
  });

  it("does not resolve another tenant's invoice", async () => {
    const ownerKey = await (await platform.newTenant()).key();
    const customer = await other(ownerKey, 'POST', '/invoicing/customers', { display_name: 'Acme Ltd' });
    const invoice = await other(ownerKey, 'POST', '/invoicing/invoices', { customer_id: customer.id, line_items: [{ description: 'Work', quantity: '1', unit_price: '1.00' }] });
    const key = await (await platform.newTenant()).key();
    const task = await createTask(key);
    expectError(
      await call(platform.app, 'POST', `${BASE}/tasks/${task.id}/links`, { key, body: { source: 'invoicing', source_id: String(invoice.id) } }),
      400,
      'validation_failed',
    );
  });
});
