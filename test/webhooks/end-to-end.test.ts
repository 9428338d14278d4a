import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { call, startTestPlatform, type TestPlatform } from '../harness.js';
import { WebhookReceiver } from '../fakes/webhook-receiver.js';
import { createSession, getSession, paySession } from '../../src/services/payments/test-helpers.js';
import { fixtures as invoicingFixtures } from '../../src/services/invoicing/test-helpers.js';

/**
 * Real changes made through the API reach a receiver on 127.0.0.1 as signed webhooks: once each,
 * only to endpoints subscribed to their type, only for their own tenant and mode.
 */
let platform: TestPlatform;
let receiver: WebhookReceiver;
beforeAll(async () => {
  platform = await startTestPlatform();
  receiver = await new WebhookReceiver().start();
});
afterAll(async () => {
  await receiver.close();
  await platform.close();
});

const WEBHOOKS = '/api/v1/services/webhooks';
const invoicing = invoicingFixtures(() => platform);

async function endpoint(key: string, enabledEvents: string[]) {
  const url = receiver.newUrl();
  const response = await call(platform.app, 'POST', `${WEBHOOKS}/endpoints`, { key, body: { url, enabled_events: enabledEvents } });
  expect(response.statusCode, response.body).toBe(201);
  return { url, secret: response.json().data.secret as string };
}

/** The events that reached `url`, each verified with the endpoint's secret by the standardwebhooks package. */
async function deliveredTo(target: { url: string; secret: string }) {
  await platform.runtime.jobs.runDue();
  return receiver.receivedAt(target.url).map((request) => new Webhook(target.secret).verify(request.body, request.headers as Record<string, string>) as Record<string, any>);
}

describe('webhooks of real changes', () => {
  it('a completed sandbox checkout arrives once, signed, with the session as GET shows it', async () => {
    const key = await (await platform.newTenant()).key();
    const target = await endpoint(key, ['payments.*']);
    const session = await createSession(platform, key);
    const paid = await paySession(platform, session.id);
    expect(paid.statusCode).toBeLessThan(400);

    const events = await deliveredTo(target);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'payments.checkout_session.completed', livemode: false });
    expect(events[0]!.data.object).toEqual(await getSession(platform, key, session.id));
    expect(await deliveredTo(target)).toHaveLength(1);
  });

  it('a paid invoice arrives once; an invoicing-only endpoint hears no form submissions', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const paidOnly = await endpoint(key, ['invoicing.invoice.paid']);
    const allInvoicing = await endpoint(key, ['invoicing.*']);
    const { invoice } = await invoicing.paidInvoice(key, '250.00');

    const paidEvents = await deliveredTo(paidOnly);
    expect(paidEvents.map((event) => event.type)).toEqual(['invoicing.invoice.paid']);
    expect(paidEvents[0]!.data.object).toEqual(await invoicing.getInvoice(key, invoice.id));
    expect((await deliveredTo(allInvoicing)).map((event) => event.type).sort()).toEqual(['invoicing.invoice.finalized', 'invoicing.invoice.paid', 'invoicing.payment.created']);

    const form = await call(platform.app, 'POST', '/api/v1/services/forms/forms', {
      key,
      body: { name: 'Contact', status: 'published', fields: [{ key: 'email', label: 'Email', type: 'email', required: true }] },
    });
    await call(platform.app, 'POST', `/api/v1/services/forms/forms/${form.json().data.slug}/submit`, { key, body: { data: { email: 'ada@example.com' } } });
    expect((await deliveredTo(allInvoicing)).map((event) => event.type)).not.toContain('forms.submission.created');
  });

  it('a new form submission arrives once, and never at another tenant or the other mode', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const target = await endpoint(key, ['forms.submission.created']);
    // Live mode takes https only: this endpoint can never be reached, and must never even get a delivery.
    const liveKey = await tenant.key({ mode: 'live' });
    const live = await call(platform.app, 'POST', `${WEBHOOKS}/endpoints`, { key: liveKey, body: { url: 'https://127.0.0.1:1/live', enabled_events: ['*'] } });
    expect(live.statusCode, live.body).toBe(201);
    const otherTarget = await endpoint(await (await platform.newTenant()).key(), ['*']);

    const form = await call(platform.app, 'POST', '/api/v1/services/forms/forms', {
      key,
      body: { name: 'Contact', status: 'published', fields: [{ key: 'email', label: 'Email', type: 'email', required: true }] },
    });
    const submitted = await call(platform.app, 'POST', `/api/v1/services/forms/forms/${form.json().data.slug}/submit`, { key, body: { data: { email: 'ada@example.com' } } });
    expect(submitted.statusCode, submitted.body).toBe(201);

    const events = await deliveredTo(target);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'forms.submission.created', data: { object: { id: submitted.json().data.id } } });
    const liveDeliveries = await call(platform.app, 'GET', `${WEBHOOKS}/endpoints/${live.json().data.id}/deliveries`, { key: liveKey });
    expect(liveDeliveries.json().meta.total).toBe(0);
    expect(await deliveredTo(otherTarget)).toHaveLength(0);
  });
});
