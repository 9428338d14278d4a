import { expect } from 'vitest';
import { call, type TestPlatform } from '../../../test/harness.js';

export const BASE = '/api/v1/services/payments';

export const SESSION_BODY = {
  line_items: [
    { name: 'Cotton T-shirt', unit_amount_cents: 2500, quantity: 2 },
    { name: 'Gift wrap', unit_amount_cents: 300, quantity: 1 },
  ],
  currency: 'usd',
  success_url: 'https://shop.example.com/thanks',
  cancel_url: 'https://shop.example.com/cart',
};

export const LINK_BODY = {
  name: 'Workshop ticket',
  line_items: [{ name: 'Workshop ticket', unit_amount_cents: 4900, quantity: 1 }],
  currency: 'eur',
};

export const GOOD_CARD = { cardholder_name: 'Ada Lovelace', card_number: '4242 4242 4242 4242', card_expiry: '12/34', card_cvc: '123' };
export const DECLINED_CARD = { ...GOOD_CARD, card_number: '4000 0000 0000 0002' };

export async function createSession(platform: TestPlatform, key: string, body: Record<string, unknown> = SESSION_BODY) {
  const response = await call(platform.app, 'POST', `${BASE}/checkout-sessions`, { key, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

export async function createLink(platform: TestPlatform, key: string, body: Record<string, unknown> = LINK_BODY) {
  const response = await call(platform.app, 'POST', `${BASE}/payment-links`, { key, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

export async function getSession(platform: TestPlatform, key: string, id: string) {
  const response = await call(platform.app, 'GET', `${BASE}/checkout-sessions/${id}`, { key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

export async function getLink(platform: TestPlatform, key: string, id: string) {
  const response = await call(platform.app, 'GET', `${BASE}/payment-links/${id}`, { key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

/** The path of an absolute page URL from the API (`url` of a session or link). */
export function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

export function csrfTokenIn(html: string): string {
  const match = /name="csrf_token" value="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no CSRF token in page: ${html.slice(0, 300)}`);
  return match[1]!;
}

/** GETs a page and returns it with its CSRF token (if it has a form). */
export async function openPage(platform: TestPlatform, path: string) {
  const response = await platform.app.inject({ method: 'GET', url: path });
  return { response, html: response.body, token: /name="csrf_token"/.test(response.body) ? csrfTokenIn(response.body) : undefined };
}

/** Posts an HTML form the way a browser does. */
export function postForm(platform: TestPlatform, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return platform.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** Opens the checkout page of a session and submits the card form. */
export async function paySession(platform: TestPlatform, sessionId: string, card: Record<string, string> = GOOD_CARD) {
  const { token } = await openPage(platform, `/checkout/${sessionId}`);
  return postForm(platform, `/checkout/${sessionId}`, { ...card, csrf_token: token! });
}
