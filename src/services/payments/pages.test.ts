import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { createLink, createSession, DECLINED_CARD, getLink, getSession, GOOD_CARD, LINK_BODY, openPage, pathOf, paySession, postForm, SESSION_BODY } from './test-helpers.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

async function newKey(name = 'Acme Shop') {
  return (await platform.newTenant(name)).key();
}

describe('the hosted checkout page', () => {
  it('shows the merchant, the lines and the total, and an accessible card form', async () => {
    const key = await newKey();
    const session = await createSession(platform, key);
    const { response, html, token } = await openPage(platform, pathOf(session.url));
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('Acme Shop');
    expect(html).toContain('Cotton T-shirt');
    expect(html).toContain('2 × $25.00');
    expect(html).toContain('$50.00');
    expect(html).toContain('Gift wrap');
    expect(html).toMatch(/<td class="num" id="total">\$53\.00<\/td>/);
    expect(html).toContain('Test mode.');
    expect(html).toContain(`<form method="post" action="/checkout/${session.id}"`);
    for (const [id, autocomplete] of [
      ['cardholder_name', 'cc-name'],
      ['card_number', 'cc-number'],
      ['card_expiry', 'cc-exp'],
      ['card_cvc', 'cc-csc'],
    ]) {
      expect(html).toContain(`<label for="${id}">`);
      expect(html).toMatch(new RegExp(`<input id="${id}" name="${id}" [^>]*autocomplete="${autocomplete}"`));
    }
    expect(html).toContain('role="alert"');
    expect(html).not.toContain('<script');
    expect(token).toMatch(/^[\w-]{43}$/);
    expect(html).toContain('href="https://shop.example.com/cart"');
  });

  it('sends headers that forbid framing, caching, referrer leaks and foreign scripts', async () => {
    const key = await newKey();
    const session = await createSession(platform, key, { ...SESSION_BODY, success_url: 'https://pay-done.example.net:8443/ok' });
    const { response } = await openPage(platform, pathOf(session.url));
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("form-action 'self' https://pay-done.example.net:8443");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['referrer-policy']).toBe('same-origin');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
  });

  it('escapes every value it shows (merchant name, item names, URLs)', async () => {
    const key = await newKey('<b>Evil & Co</b>');
    const session = await createSession(platform, key, {
      ...SESSION_BODY,
      line_items: [{ name: '<script>alert("x")</script>', unit_amount_cents: 100, quantity: 1 }],
      cancel_url: 'https://shop.example.com/cart?a=1&b="2"',
    });
    const { html } = await openPage(platform, `/checkout/${session.id}`);
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>Evil');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(html).toContain('&lt;b&gt;Evil &amp; Co&lt;/b&gt;');
    expect(html).toContain('href="https://shop.example.com/cart?a=1&amp;b=&quot;2&quot;"');
  });

  it("formats totals with the currency minor units (at most the spec's 2 decimals)", async () => {
    const key = await newKey();
    const yen = await createSession(platform, key, { amount_cents: 1500, description: 'Tea', currency: 'JPY', success_url: 'https://example.com/' });
    expect((await openPage(platform, `/checkout/${yen.id}`)).html).toContain('Pay ¥1,500');
    const dinar = await createSession(platform, key, { amount_cents: 1500, description: 'Tea', currency: 'KWD', success_url: 'https://example.com/' });
    expect((await openPage(platform, `/checkout/${dinar.id}`)).html).toMatch(/KWD\s1\.50(?!\d)/);
  });

  it('answers unknown or malformed session ids with a 404 page', async () => {
    for (const id of ['3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c', 'nope', '%3Cscript%3E']) {
      const response = await platform.app.inject({ method: 'GET', url: `/checkout/${id}` });
      expect(response.statusCode).toBe(404);
      expect(response.headers['content-type']).toContain('text/html');
      expect(response.body).toContain('Page not found');
    }
  });

  it('answers forms posted to malformed session or link ids with the 404 page, not a 400', async () => {
    for (const path of ['/checkout/nope', '/checkout/%3Cscript%3E', '/pay/nope', '/pay/3f1b5c8e2a4d4b7e9c1a5d6e7f8a9b0c']) {
      const response = await postForm(platform, path, { ...GOOD_CARD, quantity: '1', csrf_token: 'x'.repeat(43) });
      expect(response.statusCode, path).toBe(404);
      expect(response.headers['content-type']).toContain('text/html');
      expect(response.body).toContain('Page not found');
    }
  });
});

describe('paying on the hosted page', () => {
  it('pays with 4242: the session is complete and paid, and the buyer goes to success_url', async () => {
    const key = await newKey();
    const session = await createSession(platform, key);
    const response = await paySession(platform, session.id);
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(`https://shop.example.com/thanks?session_id=${session.id}`);
    const paid = await getSession(platform, key, session.id);
    expect(paid).toMatchObject({
      status: 'complete',
      payment_status: 'paid',
      completed_at: expect.any(String),
      card_brand: 'visa',
      card_last4: '4242',
      payment_intent_id: expect.stringMatching(/^pi_sandbox_/),
    });
    const page = await openPage(platform, `/checkout/${session.id}`);
    expect(page.response.statusCode).toBe(200);
    expect(page.html).toContain('Thank you');
    expect(page.html).toContain('card ending in 4242');
    expect(page.token).toBeUndefined();
  });

  it('replaces {CHECKOUT_SESSION_ID} in success_url', async () => {
    const key = await newKey();
    const session = await createSession(platform, key, { ...SESSION_BODY, success_url: 'https://shop.example.com/done/{CHECKOUT_SESSION_ID}?x=1' });
    const response = await paySession(platform, session.id);
    expect(response.headers.location).toBe(`https://shop.example.com/done/${session.id}?x=1`);
  });

  it('declines 4000 0000 0000 0002 with a readable message; the session stays open and payable', async () => {
    const key = await newKey();
    const session = await createSession(platform, key);
    const response = await paySession(platform, session.id, DECLINED_CARD);
    expect(response.statusCode).toBe(402);
    expect(response.body).toMatch(/<div role="alert" class="alert" id="form-alert">Your card was declined\.<\/div>/);
    // The number typed is not sent back (the test-mode hint names the test cards, so look at the field).
    expect(response.body).not.toMatch(/name="card_number"[^>]*value=/);
    expect(response.body).toContain('value="Ada Lovelace"');
    expect(await getSession(platform, key, session.id)).toMatchObject({ status: 'open', payment_status: 'unpaid', completed_at: null });

    // The re-rendered form works: pay with a good card.
    const retry = await postForm(platform, `/checkout/${session.id}`, { ...GOOD_CARD, csrf_token: /name="csrf_token" value="([^"]+)"/.exec(response.body)![1]! });
    expect(retry.statusCode).toBe(303);
    expect((await getSession(platform, key, session.id)).payment_status).toBe('paid');
  });

  it('shows a readable error per field and never echoes the card number or CVC', async () => {
    const key = await newKey();
    const session = await createSession(platform, key);
    const response = await paySession(platform, session.id, { cardholder_name: '', card_number: '4242 4242 4242 4241', card_expiry: '01/20', card_cvc: '1' });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('Please correct the card details below.');
    expect(response.body).toContain('Enter the name on the card.');
    expect(response.body).toContain('Your card number is invalid.');
    expect(response.body).toContain('Your card&#39;s expiry date is in the past.');
    expect(response.body).toContain('Your card&#39;s security code should be 3 digits.');
    expect(response.body).toMatch(/<input id="card_number" name="card_number" [^>]*aria-describedby="card_number-error" aria-invalid="true"/);
    expect(response.body).not.toContain('4242 4242 4242 4241');
    expect(response.body).not.toMatch(/name="card_cvc"[^>]*value=/);
    expect((await getSession(platform, key, session.id)).status).toBe('open');
  });

  it('pays once when the form is submitted twice at the same time', async () => {
    const key = await newKey();
    const session = await createSession(platform, key);
    const { token } = await openPage(platform, `/checkout/${session.id}`);
    const form = { ...GOOD_CARD, csrf_token: token! };
    const replies = await Promise.all([postForm(platform, `/checkout/${session.id}`, form), postForm(platform, `/checkout/${session.id}`, form)]);
    const statuses = replies.map((reply) => reply.statusCode).sort();
    expect(statuses[0]).toBe(303);
    expect([303, 409]).toContain(statuses[1]);
    const paid = await getSession(platform, key, session.id);
    expect(paid.status).toBe('complete');
    // A later resubmission (back button) goes where a payment goes, without paying again.
    const again = await postForm(platform, `/checkout/${session.id}`, form);
    expect(again.statusCode).toBe(303);
    expect((await getSession(platform, key, session.id)).completed_at).toBe(paid.completed_at);
  });

  it('refuses forged posts: no token, a wrong token, another session token, a foreign Origin', async () => {
    const key = await newKey();
    const session = await createSession(platform, key);
    const other = await createSession(platform, key);
    const { token } = await openPage(platform, `/checkout/${session.id}`);
    const { token: otherToken } = await openPage(platform, `/checkout/${other.id}`);
    const path = `/checkout/${session.id}`;
    const forged = [
      await postForm(platform, path, GOOD_CARD),
      await postForm(platform, path, { ...GOOD_CARD, csrf_token: 'x'.repeat(43) }),
      await postForm(platform, path, { ...GOOD_CARD, csrf_token: otherToken! }),
      await postForm(platform, path, { ...GOOD_CARD, csrf_token: token! }, { origin: 'https://evil.example' }),
      await postForm(platform, path, { ...GOOD_CARD, csrf_token: token! }, { referer: 'https://evil.example/page' }),
      await postForm(platform, path, { ...GOOD_CARD, csrf_token: token! }, { origin: 'null' }),
    ];
    for (const response of forged) {
      expect(response.statusCode).toBe(403);
      expect(response.body).toContain('could not be verified');
    }
    expect((await getSession(platform, key, session.id)).status).toBe('open');
    const sameOrigin = await postForm(platform, path, { ...GOOD_CARD, csrf_token: token! }, { origin: new URL(platform.config.publicBaseUrl).origin });
    expect(sameOrigin.statusCode).toBe(303);
  });

  it('takes only form posts of a sane size on the page, answering HTML', async () => {
    const key = await newKey();
    const session = await createSession(platform, key);
    const json = await platform.app.inject({
      method: 'POST',
      url: `/checkout/${session.id}`,
      headers: { 'content-type': 'application/json' },
      payload: '{"card_number":"4242424242424242"}',
    });
    expect(json.statusCode).toBe(415);
    expect(json.headers['content-type']).toContain('text/html');
    const text = await platform.app.inject({ method: 'POST', url: `/checkout/${session.id}`, headers: { 'content-type': 'text/plain' }, payload: 'hello' });
    expect(text.statusCode).toBe(415);
    const huge = await postForm(platform, `/checkout/${session.id}`, { card_number: 'x'.repeat(20_000) });
    expect(huge.statusCode).toBe(413);
    expect(huge.headers['content-type']).toContain('text/html');
    const proto = await postForm(platform, `/checkout/${session.id}`, { __proto__: 'x', constructor: 'y', csrf_token: 'z' });
    expect(proto.statusCode).toBe(403);
  });

  it('shows an expired session as expired and refuses to pay it', async () => {
    const key = await newKey();
    const session = await createSession(platform, key);
    const { token } = await openPage(platform, `/checkout/${session.id}`);
    platform.clock.advance(24 * 60 * 60 * 1000);
    const page = await openPage(platform, `/checkout/${session.id}`);
    expect(page.response.statusCode).toBe(410);
    expect(page.html).toContain('This checkout has expired');
    const pay = await postForm(platform, `/checkout/${session.id}`, { ...GOOD_CARD, csrf_token: token! });
    expect(pay.statusCode).toBe(410);
    expect(await getSession(platform, key, session.id)).toMatchObject({ status: 'expired', payment_status: 'unpaid' });
  });

  it('has no cancel link without cancel_url', async () => {
    const key = await newKey();
    const session = await createSession(platform, key, { ...SESSION_BODY, cancel_url: null });
    expect((await openPage(platform, `/checkout/${session.id}`)).html).not.toContain('class="cancel"');
  });
});

describe('payment link pages', () => {
  it('starts a new session on every visit and counts a use when it is paid', async () => {
    const key = await newKey();
    const link = await createLink(platform, key);
    const first = await platform.app.inject({ method: 'GET', url: pathOf(link.url) });
    expect(first.statusCode).toBe(303);
    const sessionId = first.headers.location!.replace('/checkout/', '');
    const second = await platform.app.inject({ method: 'GET', url: pathOf(link.url) });
    expect(second.headers.location).not.toBe(first.headers.location);

    const session = await getSession(platform, key, sessionId);
    expect(session).toMatchObject({ payment_link_id: link.id, amount_total_cents: 4900, currency: 'EUR', success_url: null, cancel_url: null, status: 'open' });
    expect((await getLink(platform, key, link.id)).use_count).toBe(0);

    const paid = await paySession(platform, sessionId);
    expect(paid.statusCode).toBe(303);
    expect(paid.headers.location).toBe(`/checkout/${sessionId}`);
    expect((await openPage(platform, `/checkout/${sessionId}`)).html).toContain('Thank you');
    expect((await getLink(platform, key, link.id)).use_count).toBe(1);
  });

  it('sends link buyers to after_completion_url', async () => {
    const key = await newKey();
    const link = await createLink(platform, key, { ...LINK_BODY, after_completion_url: 'https://example.org/see-you' });
    const sessionId = (await platform.app.inject({ method: 'GET', url: `/pay/${link.id}` })).headers.location!.replace('/checkout/', '');
    expect((await paySession(platform, sessionId)).headers.location).toBe(`https://example.org/see-you?session_id=${sessionId}`);
  });

  it('stops at max_uses: a used-up link says so, and a second open session cannot pay', async () => {
    const key = await newKey();
    const link = await createLink(platform, key, { ...LINK_BODY, max_uses: 1 });
    const sessionA = (await platform.app.inject({ method: 'GET', url: `/pay/${link.id}` })).headers.location!.replace('/checkout/', '');
    const sessionB = (await platform.app.inject({ method: 'GET', url: `/pay/${link.id}` })).headers.location!.replace('/checkout/', '');
    expect((await paySession(platform, sessionA)).statusCode).toBe(303);
    const refused = await paySession(platform, sessionB);
    expect(refused.statusCode).toBe(410);
    expect(refused.body).toContain('reached its limit');
    expect((await getSession(platform, key, sessionB)).payment_status).toBe('unpaid');
    expect(await getLink(platform, key, link.id)).toMatchObject({ use_count: 1, available: false });
    const visit = await platform.app.inject({ method: 'GET', url: `/pay/${link.id}` });
    expect(visit.statusCode).toBe(410);
    expect(visit.body).toContain('This payment link is not available');
  });

  it('takes exactly one payment when two sessions of a max_uses 1 link pay at the same time', async () => {
    const key = await newKey();
    const link = await createLink(platform, key, { ...LINK_BODY, max_uses: 1 });
    const ids = [];
    for (let i = 0; i < 2; i += 1) ids.push((await platform.app.inject({ method: 'GET', url: `/pay/${link.id}` })).headers.location!.replace('/checkout/', ''));
    const pages = await Promise.all(ids.map((id) => openPage(platform, `/checkout/${id}`)));
    const replies = await Promise.all(ids.map((id, i) => postForm(platform, `/checkout/${id}`, { ...GOOD_CARD, csrf_token: pages[i]!.token! })));
    expect(replies.map((reply) => reply.statusCode).sort()).toEqual([303, 410]);
    const sessions = await Promise.all(ids.map((id) => getSession(platform, key, id)));
    expect(sessions.map((session) => session.payment_status).sort()).toEqual(['paid', 'unpaid']);
    expect((await getLink(platform, key, link.id)).use_count).toBe(1);
  });

  it('gives the use back when the card is declined', async () => {
    const key = await newKey();
    const link = await createLink(platform, key, { ...LINK_BODY, max_uses: 1 });
    const sessionId = (await platform.app.inject({ method: 'GET', url: `/pay/${link.id}` })).headers.location!.replace('/checkout/', '');
    expect((await paySession(platform, sessionId, DECLINED_CARD)).statusCode).toBe(402);
    expect((await getLink(platform, key, link.id)).use_count).toBe(0);
    expect((await paySession(platform, sessionId)).statusCode).toBe(303);
    expect((await getLink(platform, key, link.id)).use_count).toBe(1);
  });

  it('shows a clear page for an inactive link and 404 for an unknown one', async () => {
    const key = await newKey('Acme Shop');
    const link = await createLink(platform, key, { ...LINK_BODY, active: false });
    const response = await platform.app.inject({ method: 'GET', url: `/pay/${link.id}` });
    expect(response.statusCode).toBe(410);
    expect(response.body).toContain('This payment link is not available');
    expect(response.body).toContain('switched off by Acme Shop');
    for (const id of ['3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c', 'nope']) {
      expect((await platform.app.inject({ method: 'GET', url: `/pay/${id}` })).statusCode).toBe(404);
    }
  });

  it('does not start sessions on HEAD', async () => {
    const key = await newKey();
    const link = await createLink(platform, key);
    const head = await platform.app.inject({ method: 'HEAD', url: `/pay/${link.id}` });
    expect(head.statusCode).toBeGreaterThanOrEqual(400);
    const list = await platform.app.inject({
      method: 'GET',
      url: `/api/v1/services/payments/checkout-sessions?payment_link_id=${link.id}`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(list.json().meta.total).toBe(0);
  });

  it('lets the buyer choose the quantity when allowed', async () => {
    const key = await newKey();
    const link = await createLink(platform, key, { ...LINK_BODY, allow_quantity: true });
    const { response, html, token } = await openPage(platform, `/pay/${link.id}`);
    expect(response.statusCode).toBe(200);
    expect(html).toContain('<label for="quantity">Quantity</label>');
    expect(html).toContain('€49.00 each');

    for (const quantity of ['0', '10001', 'abc', '1.5', '']) {
      const bad = await postForm(platform, `/pay/${link.id}`, { quantity, csrf_token: token! });
      expect(bad.statusCode, quantity).toBe(400);
      expect(bad.body).toContain('Enter a whole number from 1 to 10,000.');
    }
    expect((await postForm(platform, `/pay/${link.id}`, { quantity: '3' })).statusCode).toBe(403);

    const chosen = await postForm(platform, `/pay/${link.id}`, { quantity: '3', csrf_token: token! });
    expect(chosen.statusCode).toBe(303);
    const session = await getSession(platform, key, chosen.headers.location!.replace('/checkout/', ''));
    expect(session).toMatchObject({ amount_total_cents: 14700, line_items: [{ name: 'Workshop ticket', unit_amount_cents: 4900, quantity: 3, amount_total_cents: 14700 }] });
  });
});
