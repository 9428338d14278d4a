import { existsSync } from 'node:fs';
import http from 'node:http';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { freePort } from '../../../test/processes/server-process.js';
import { BASE, SESSION_BODY } from './test-helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// Skipped only on a developer machine without Chromium; CI installs it (.ci/run) and always runs this.
describe.runIf(existsSync(CHROMIUM) || Boolean(process.env.CI))('hosted checkout in headless Chromium', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let key: string;
  /** The merchant's site (success_url, cancel_url): a tiny server of the test, on another origin. */
  let merchant: http.Server;
  let MERCHANT: string;

  beforeAll(async () => {
    merchant = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', connection: 'close' });
      response.end('<!doctype html><html lang="en"><title>Merchant</title><h1>Thanks from the merchant</h1></html>');
    });
    const merchantPort = await freePort();
    await new Promise<void>((resolve) => merchant.listen(merchantPort, '127.0.0.1', resolve));
    MERCHANT = `http://127.0.0.1:${merchantPort}`;

    // The page URLs in API replies are absolute, so the server listens where PUBLIC_BASE_URL says.
    const port = await freePort();
    platform = await startTestPlatform({ env: { PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } });
    await platform.app.listen({ port, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    key = await (await platform.newTenant('Acme Shop')).key();
  });

  afterAll(async () => {
    await browser?.close();
    await platform?.close();
    merchant?.closeAllConnections();
    await new Promise((resolve) => merchant?.close(resolve));
  });

  async function newSession() {
    const response = await call(platform.app, 'POST', `${BASE}/checkout-sessions`, {
      key,
      body: { ...SESSION_BODY, success_url: `${MERCHANT}/success`, cancel_url: `${MERCHANT}/cart` },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data as { id: string; url: string };
  }

  async function apiSession(id: string) {
    return (await call(platform.app, 'GET', `${BASE}/checkout-sessions/${id}`, { key })).json().data;
  }

  async function openCheckout(url: string): Promise<Page> {
    const page = await browser.newPage();
    const response = await page.goto(url);
    expect(response?.status()).toBe(200);
    return page;
  }

  async function fillCard(page: Page, number: string) {
    await page.getByLabel('Name on card').fill('Ada Lovelace');
    await page.getByLabel('Card number').fill(number);
    await page.getByLabel('Expiry date (MM/YY)').fill('12/34');
    await page.getByLabel('Security code (CVC)').fill('123');
  }

  it('pays with 4242 4242 4242 4242 and lands on success_url; the API shows the session paid', { timeout: 60_000 }, async () => {
    const session = await newSession();
    const page = await openCheckout(session.url);
    await expect(page.title()).resolves.toBe('Pay $53.00 to Acme Shop');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Pay $53.00');
    expect(await page.locator('#total').textContent()).toBe('$53.00');
    expect(await page.getByText('Cotton T-shirt').count()).toBe(1);
    await fillCard(page, '4242 4242 4242 4242');
    await page.screenshot({ path: '/tmp/checkout-page.png', fullPage: true });

    await Promise.all([page.waitForURL(`${MERCHANT}/success?session_id=${session.id}`), page.getByRole('button', { name: 'Pay $53.00' }).click()]);
    expect(await page.getByRole('heading').textContent()).toBe('Thanks from the merchant');
    expect(await apiSession(session.id)).toMatchObject({ status: 'complete', payment_status: 'paid', card_last4: '4242', card_brand: 'visa' });

    // Back on the checkout page: a receipt, no form.
    await page.goto(session.url);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you');
    expect(await page.getByLabel('Card number').count()).toBe(0);
    await page.close();
  });

  it('declines 4000 0000 0000 0002 with a visible message; the session stays open and unpaid', { timeout: 60_000 }, async () => {
    const session = await newSession();
    const page = await openCheckout(session.url);
    await fillCard(page, '4000 0000 0000 0002');
    await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Pay $53.00' }).click()]);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Your card was declined.');
    expect(page.url()).toBe(session.url);
    // The page stays usable: the fields are there again, the card number is not kept.
    expect(await page.getByLabel('Card number').inputValue()).toBe('');
    expect(await page.getByLabel('Name on card').inputValue()).toBe('Ada Lovelace');
    await page.screenshot({ path: '/tmp/checkout-declined.png', fullPage: true });
    expect(await apiSession(session.id)).toMatchObject({ status: 'open', payment_status: 'unpaid', completed_at: null });

    // The cancel link goes to cancel_url.
    await Promise.all([page.waitForURL(`${MERCHANT}/cart`), page.getByRole('link', { name: 'Cancel and return to Acme Shop' }).click()]);
    await page.close();
  });
});
