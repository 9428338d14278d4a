import { createHash } from 'node:crypto';
import { decimalsAllowed, formatMinorUnits } from '../../lib/money.js';
import type { CardField } from './processor.js';
import type { CheckoutPageData } from './service.js';
import type { LineItemView, PaymentLinkView } from './schemas.js';

/**
 * Server-rendered pages for buyers: plain HTML and one stylesheet, no scripts. Every value
 * that reaches the markup goes through `escapeHtml` (the `html` tag does it by default).
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

/** Markup already built by `html` (or trusted constant text): not escaped again. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Template tag: interpolated values are escaped unless they are SafeHtml (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, index) => {
    out += render(value) + strings[index + 1]!;
  });
  return new SafeHtml(out);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(value);
}

/** An amount in ISO minor units with the currency's decimals as the API counts them (JPY 0, USD 2, KWD 2). */
export function formatAmount(cents: number, currency: string): string {
  const decimals = decimalsAllowed(currency);
  const format = new Intl.NumberFormat('en', { style: 'currency', currency, minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  // A decimal string keeps the amount exact (no float conversion).
  return format.format(formatMinorUnits(BigInt(cents), currency) as unknown as number);
}

export const STYLESHEET = `
*,*::before,*::after{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1f36;background:#f6f8fa}
main{max-width:34rem;margin:2rem auto;padding:0 1rem}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1.5rem;margin-bottom:1rem}
h1{font-size:1.5rem;margin:0 0 .25rem}
h2{font-size:1.1rem;margin:0 0 .75rem}
.merchant{color:#3c4257;margin:0 0 1rem;font-weight:600}
.test-banner{background:#fff4d6;border:1px solid #9a6700;color:#4d3800;border-radius:6px;padding:.5rem .75rem;margin:0 0 1rem;font-size:.9rem}
table{width:100%;border-collapse:collapse}
th,td{padding:.4rem 0;text-align:left;vertical-align:top}
td.num,th.num{text-align:right;white-space:nowrap}
tbody tr{border-bottom:1px solid #e6e9ef}
tfoot th,tfoot td{font-weight:700;padding-top:.75rem;font-size:1.1rem}
.qty{color:#4f566b;font-size:.9rem}
.visually-hidden{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
.field{margin-bottom:1rem}
.row{display:flex;gap:1rem}
.row .field{flex:1}
label{display:block;font-weight:600;margin-bottom:.25rem}
input{width:100%;font:inherit;padding:.6rem .7rem;border:1px solid #6e7781;border-radius:6px;color:#1a1f36;background:#fff}
input[aria-invalid="true"]{border-color:#b3261e;border-width:2px}
input:focus,button:focus,a:focus{outline:3px solid #0969da;outline-offset:2px}
.hint{color:#4f566b;font-size:.875rem;margin:.25rem 0 0}
.field-error{color:#b3261e;font-size:.9rem;margin:.25rem 0 0;font-weight:600}
.alert{border:2px solid #b3261e;background:#fff5f5;color:#8c1d18;border-radius:6px;padding:.75rem;margin-bottom:1rem;font-weight:600}
.alert:empty{display:none}
button{width:100%;font:inherit;font-weight:700;padding:.75rem;border:0;border-radius:6px;background:#0a2540;color:#fff;cursor:pointer}
button:hover{background:#163a63}
.cancel{display:block;text-align:center;margin-top:1rem;color:#0a4b9c}
.status{font-size:1.1rem}
.ok{color:#116329}
footer{color:#4f566b;font-size:.8rem;text-align:center}
`;

/** The CSP source allowing exactly this stylesheet inline (no 'unsafe-inline'). */
export const STYLESHEET_CSP_HASH = `'sha256-${createHash('sha256').update(STYLESHEET).digest('base64')}'`;

function layout(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${title}</title>
<style>${new SafeHtml(STYLESHEET)}</style>
</head>
<body>
<main>
${body}
</main>
<footer><p>Secure checkout. Card numbers are sent to the payment processor and never stored.</p></footer>
</body>
</html>
`.value;
}

function testBanner(mode: string): SafeHtml {
  if (mode !== 'test') return html``;
  return html`<p class="test-banner"><strong>Test mode.</strong> No real money moves. Pay with 4242 4242 4242 4242, any future expiry and any CVC; 4000 0000 0000 0002 is declined.</p>`;
}

function summary(items: LineItemView[], totalCents: number, currency: string): SafeHtml {
  const rows = items.map(
    (item) =>
      html`<tr><td>${item.name}${item.quantity !== 1 ? html`<br><span class="qty">${item.quantity} × ${formatAmount(item.unit_amount_cents, currency)}</span>` : ''}</td><td class="num">${formatAmount(item.amount_total_cents, currency)}</td></tr>`,
  );
  return html`<table>
<caption class="visually-hidden">Order summary</caption>
<thead class="visually-hidden"><tr><th scope="col">Item</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr><th scope="row">Total</th><td class="num" id="total">${formatAmount(totalCents, currency)}</td></tr></tfoot>
</table>`;
}

export interface CheckoutFormState {
  csrfToken: string;
  /** A message for the whole form (declined, busy, ...). */
  alert?: string;
  errors?: Partial<Record<CardField, string>>;
  /** What to put back in the form after an error: never the card number or CVC. */
  values?: { cardholder_name?: string; card_expiry?: string };
}

const FIELD_ORDER: CardField[] = ['cardholder_name', 'card_number', 'card_expiry', 'card_cvc'];

/** The payment page of an open session: summary, card form, cancel link. */
export function checkoutPage(data: CheckoutPageData, state: CheckoutFormState): string {
  const { session } = data;
  const total = formatAmount(session.amount_total_cents, session.currency);
  const errors = state.errors ?? {};
  const fieldErrors = FIELD_ORDER.filter((field) => errors[field]);
  const alertText = state.alert ?? (fieldErrors.length > 0 ? 'Please correct the card details below.' : '');

  const field = (name: CardField, label: string, attributes: SafeHtml, options: { hint?: string; value?: string } = {}) => {
    const error = errors[name];
    const described = [options.hint ? `${name}-hint` : '', error ? `${name}-error` : ''].filter(Boolean).join(' ');
    return html`<div class="field">
<label for="${name}">${label}</label>
<input id="${name}" name="${name}" ${attributes}${options.value ? html` value="${options.value}"` : ''}${described ? html` aria-describedby="${described}"` : ''}${error ? html` aria-invalid="true"` : ''} required>
${options.hint ? html`<p class="hint" id="${name}-hint">${options.hint}</p>` : ''}
${error ? html`<p class="field-error" id="${name}-error">${error}</p>` : ''}
</div>`;
  };

  return layout(
    `Pay ${total} to ${data.merchantName}`,
    html`<div class="card">
<p class="merchant">${data.merchantName}</p>
<h1>Pay ${total}</h1>
${testBanner(data.mode)}
${summary(session.line_items, session.amount_total_cents, session.currency)}
</div>
<div class="card">
<h2>Card details</h2>
<div role="alert" class="alert" id="form-alert">${alertText}</div>
<form method="post" action="/checkout/${session.id}" autocomplete="on">
<input type="hidden" name="csrf_token" value="${state.csrfToken}">
${field('cardholder_name', 'Name on card', html`type="text" autocomplete="cc-name" maxlength="200"`, { value: state.values?.cardholder_name })}
${field('card_number', 'Card number', html`type="text" inputmode="numeric" autocomplete="cc-number" maxlength="23" placeholder="1234 1234 1234 1234"`)}
<div class="row">
${field('card_expiry', 'Expiry date (MM/YY)', html`type="text" inputmode="numeric" autocomplete="cc-exp" maxlength="9" placeholder="MM/YY"`, { value: state.values?.card_expiry })}
${field('card_cvc', 'Security code (CVC)', html`type="text" inputmode="numeric" autocomplete="cc-csc" maxlength="4" placeholder="123"`, { hint: '3 digits on the back, 4 on the front for American Express.' })}
</div>
<button type="submit">Pay ${total}</button>
</form>
${session.cancel_url ? html`<a class="cancel" href="${session.cancel_url}">Cancel and return to ${data.merchantName}</a>` : ''}
</div>`,
  );
}

/** A paid session: the receipt. */
export function completePage(data: CheckoutPageData, continueTo: string | undefined): string {
  const { session } = data;
  const total = formatAmount(session.amount_total_cents, session.currency);
  return layout(
    `Payment received - ${data.merchantName}`,
    html`<div class="card">
<p class="merchant">${data.merchantName}</p>
<h1>Thank you</h1>
<p class="status ok" role="status">Your payment of ${total} was received${session.card_last4 ? html` (card ending in ${session.card_last4})` : ''}.</p>
${summary(session.line_items, session.amount_total_cents, session.currency)}
${continueTo ? html`<p><a class="cancel" href="${continueTo}">Continue to ${data.merchantName}</a></p>` : ''}
</div>`,
  );
}

/** An expired session: nothing to pay any more. */
export function expiredPage(data: CheckoutPageData): string {
  return messagePage('This checkout has expired', `This payment page of ${data.merchantName} is no longer valid and nothing was charged. Go back to the merchant to start again.`, {
    merchantName: data.merchantName,
    link: data.session.cancel_url ? { href: data.session.cancel_url, text: `Return to ${data.merchantName}` } : undefined,
  });
}

/** A page with just a heading and a message (not found, not available, errors). */
export function messagePage(title: string, message: string, options: { merchantName?: string; link?: { href: string; text: string } } = {}): string {
  return layout(
    title,
    html`<div class="card">
${options.merchantName ? html`<p class="merchant">${options.merchantName}</p>` : ''}
<h1>${title}</h1>
<p>${message}</p>
${options.link ? html`<p><a class="cancel" href="${options.link.href}">${options.link.text}</a></p>` : ''}
</div>`,
  );
}

/** A payment link whose buyer picks the quantity before the checkout page. */
export function quantityPage(link: PaymentLinkView, merchantName: string, state: { csrfToken: string; error?: string; quantity?: string; mode: string }): string {
  const item = link.line_items[0]!;
  const quantity = state.quantity ?? String(item.quantity);
  return layout(
    `${link.name} - ${merchantName}`,
    html`<div class="card">
<p class="merchant">${merchantName}</p>
<h1>${link.name}</h1>
${testBanner(state.mode)}
<p>${item.name}: ${formatAmount(item.unit_amount_cents, link.currency)} each.</p>
<div role="alert" class="alert">${state.error ?? ''}</div>
<form method="post" action="/pay/${link.id}">
<input type="hidden" name="csrf_token" value="${state.csrfToken}">
<div class="field">
<label for="quantity">Quantity</label>
<input id="quantity" name="quantity" type="number" inputmode="numeric" min="1" max="10000" step="1" value="${quantity}" required${state.error ? html` aria-invalid="true" aria-describedby="quantity-hint"` : html` aria-describedby="quantity-hint"`}>
<p class="hint" id="quantity-hint">From 1 to 10,000.</p>
</div>
<button type="submit">Continue to payment</button>
</form>
</div>`,
  );
}
