import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PathParams, UuidParam } from '../../platform/http/schemas.js';
import { checkoutPage, completePage, expiredPage, messagePage, quantityPage, STYLESHEET_CSP_HASH } from './html.js';
import { type CheckoutPageData, type PaymentsService, successRedirect } from './service.js';

/** Card forms are tiny; anything larger is not a form of ours. */
const FORM_BODY_LIMIT = 16 * 1024;
const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

/** A session or link id; any other shape names no page (404, as an unknown id). */
const PageParams = PathParams({ id: UuidParam });
type Fields = Record<string, string | undefined>;

/**
 * The buyer's pages, served at the root without an API key: `/checkout/{id}` (the hosted
 * checkout of a session) and `/pay/{id}` (a payment link). The unguessable id is the
 * capability; forms carry an HMAC of it as CSRF token and cross-site posts are refused.
 */
export function paymentsPages(service: PaymentsService) {
  const ownOrigin = new URL(service.publicBaseUrl).origin;
  const csrfToken = service.formToken;
  const validToken = service.validFormToken;

  /** A browser's Origin (or else Referer) must be this server when it sends one. */
  function sameOrigin(request: FastifyRequest): boolean {
    const allowed = new Set([ownOrigin, `${request.protocol}://${request.host}`]);
    const origin = request.headers.origin;
    if (typeof origin === 'string') return allowed.has(origin);
    const referer = request.headers.referer;
    if (typeof referer === 'string') {
      try {
        return allowed.has(new URL(referer).origin);
      } catch {
        return false;
      }
    }
    return true;
  }

  function sendPage(reply: FastifyReply, status: number, body: string, formTargets: Array<string | null> = []): FastifyReply {
    const formOrigins = new Set<string>();
    for (const target of formTargets) {
      if (target === null) continue;
      try {
        formOrigins.add(new URL(target.replace(/\{CHECKOUT_SESSION_ID\}/g, 'x')).origin);
      } catch {
        // Only URLs that parsed were stored; nothing to add otherwise.
      }
    }
    return reply
      .code(status)
      .header('Content-Type', 'text/html; charset=utf-8')
      .header(
        'Content-Security-Policy',
        [
          "default-src 'none'",
          `style-src ${STYLESHEET_CSP_HASH}`,
          "img-src 'self'",
          // A paid form redirects to success_url: form-action must allow its origin.
          `form-action 'self'${[...formOrigins].map((origin) => ` ${origin}`).join('')}`,
          "frame-ancestors 'none'",
          "base-uri 'none'",
        ].join('; '),
      )
      .header('X-Frame-Options', 'DENY')
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'same-origin')
      .header('Cache-Control', 'no-store')
      .send(body);
  }

  function redirect(reply: FastifyReply, location: string): FastifyReply {
    return reply.code(303).header('Location', location).header('Cache-Control', 'no-store').header('Referrer-Policy', 'same-origin').send();
  }

  const notFoundPage = () => messagePage('Page not found', 'There is no checkout at this address. Check the link you were given.');
  const notPayablePage = (merchantName: string) =>
    messagePage('Payments are not available', 'This server is not set up to take live payments yet, so nothing can be paid here. Please contact the merchant.', { merchantName });

  function sendCheckout(reply: FastifyReply, status: number, data: CheckoutPageData, state: Omit<Parameters<typeof checkoutPage>[1], 'csrfToken'> = {}) {
    return sendPage(reply, status, checkoutPage(data, { ...state, csrfToken: csrfToken('checkout', data.session.id) }), [data.session.success_url]);
  }

  function isForm(request: FastifyRequest): boolean {
    return (request.headers['content-type'] ?? '').toLowerCase().startsWith(FORM_CONTENT_TYPE);
  }

  function forgedPage(reply: FastifyReply) {
    return sendPage(reply, 403, messagePage('This form could not be verified', 'The form was sent from another site or is out of date. Reload the page and try again.'));
  }

  return async function registerPaymentPages(app: FastifyInstance): Promise<void> {
    // Only in this plugin's scope: the public API keeps answering 415 to form bodies.
    app.addContentTypeParser(FORM_CONTENT_TYPE, { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
      const fields: Fields = Object.create(null) as Fields;
      for (const [name, value] of new URLSearchParams(body as string)) if (fields[name] === undefined) fields[name] = value;
      done(null, fields);
    });

    app.setErrorHandler((error: FastifyError, request, reply) => {
      if (error.validationContext === 'params') return sendPage(reply, 404, notFoundPage());
      let status = error.statusCode ?? 500;
      if (status < 400 || status > 599) status = 500;
      if (status >= 500) request.log.error({ err: error }, 'payment page failed');
      const [title, message] =
        status === 413
          ? ['Request too large', 'The form sent was too large. Go back and try again.']
          : status === 415
            ? ['Unsupported form', 'This page takes ordinary HTML form posts only.']
            : status < 500
              ? ['Bad request', 'The request could not be understood. Go back and try again.']
              : ['Something went wrong', `We could not complete this request. Nothing was charged if you did not see a confirmation; try again later (reference ${request.id}).`];
      return sendPage(reply, status, messagePage(title, message));
    });

    const routes = app.withTypeProvider();
    const hidden = { hide: true, params: PageParams } as const;

    routes.get<{ Params: { id: string } }>('/checkout/:id', { schema: hidden }, async (request, reply) => {
      const data = await service.checkoutPage(request.params.id, request.startedAt);
      if (!data) return sendPage(reply, 404, notFoundPage());
      const { session } = data;
      if (session.status === 'complete') {
        const continueTo = session.success_url ? successRedirect(session.success_url, session.id) : undefined;
        return sendPage(reply, 200, completePage(data, continueTo));
      }
      if (session.status === 'expired') return sendPage(reply, 410, expiredPage(data));
      if (!data.payable) return sendPage(reply, 503, notPayablePage(data.merchantName));
      return sendCheckout(reply, 200, data);
    });

    routes.post<{ Params: { id: string }; Body: Fields }>('/checkout/:id', { schema: hidden }, async (request, reply) => {
      if (!isForm(request)) return sendPage(reply, 415, messagePage('Unsupported form', 'This page takes ordinary HTML form posts only.'));
      const id = request.params.id;
      const fields = request.body ?? {};
      if (!sameOrigin(request) || !validToken('checkout', id, fields.csrf_token)) return forgedPage(reply);
      const form = {
        cardholder_name: fields.cardholder_name ?? '',
        card_number: fields.card_number ?? '',
        card_expiry: fields.card_expiry ?? '',
        card_cvc: fields.card_cvc ?? '',
      };
      const outcome = await service.pay(id, form, request.startedAt);
      const kept = { cardholder_name: form.cardholder_name.slice(0, 200), card_expiry: form.card_expiry.slice(0, 9) };
      switch (outcome.kind) {
        case 'not_found':
          return sendPage(reply, 404, notFoundPage());
        case 'paid':
        case 'already_paid':
          return redirect(reply, outcome.redirectTo);
        case 'expired':
          return sendPage(reply, 410, expiredPage(outcome.page));
        case 'not_payable':
          return sendPage(reply, 503, notPayablePage(outcome.page.merchantName));
        case 'invalid':
          return sendCheckout(reply, 400, outcome.page, { errors: outcome.errors, values: kept });
        case 'declined':
          return sendCheckout(reply, 402, outcome.page, { alert: outcome.message, values: kept });
        case 'busy':
          return sendCheckout(reply, 409, outcome.page, { alert: 'A payment for this checkout is already being processed. Wait a moment, then reload this page.' });
        case 'link_used_up':
          return sendPage(
            reply,
            410,
            messagePage('This link has reached its limit', 'This payment link takes no more payments, so your card was not charged.', { merchantName: outcome.page.merchantName }),
          );
        case 'processor_error':
          request.log.warn({ err: outcome.error, checkout_session_id: id }, 'payment processor failed');
          return sendCheckout(reply, 502, outcome.page, { alert: 'The payment could not be completed just now. Please try again in a moment.', values: kept });
      }
    });

    // No automatic HEAD: a link preview's HEAD must not start a checkout session.
    routes.get<{ Params: { id: string } }>('/pay/:id', { schema: hidden, exposeHeadRoute: false }, async (request, reply) => {
      return sendLinkVisit(reply, await service.visitLink(request.params.id, request.startedAt));
    });

    routes.post<{ Params: { id: string }; Body: Fields }>('/pay/:id', { schema: hidden }, async (request, reply) => {
      if (!isForm(request)) return sendPage(reply, 415, messagePage('Unsupported form', 'This page takes ordinary HTML form posts only.'));
      const id = request.params.id;
      const fields = request.body ?? {};
      if (!sameOrigin(request) || !validToken('link', id, fields.csrf_token)) return forgedPage(reply);
      return sendLinkVisit(reply, await service.startLinkWithQuantity(id, fields.quantity ?? '', request.startedAt), 400);
    });

    function sendLinkVisit(reply: FastifyReply, visit: Awaited<ReturnType<PaymentsService['visitLink']>>, quantityErrorStatus = 200) {
      switch (visit.kind) {
        case 'not_found':
          return sendPage(reply, 404, notFoundPage());
        case 'unavailable':
          if (visit.reason === 'not_payable') return sendPage(reply, 503, notPayablePage(visit.merchantName));
          return sendPage(
            reply,
            410,
            messagePage(
              'This payment link is not available',
              visit.reason === 'inactive'
                ? `The link "${visit.name}" has been switched off by ${visit.merchantName}. Please contact them for a new one.`
                : `The link "${visit.name}" has reached its limit and takes no more payments.`,
              { merchantName: visit.merchantName },
            ),
          );
        case 'choose_quantity':
          return sendPage(
            reply,
            visit.error ? quantityErrorStatus : 200,
            quantityPage(visit.link, visit.merchantName, {
              csrfToken: csrfToken('link', visit.link.id),
              mode: visit.mode,
              ...(visit.error ? { error: visit.error } : {}),
              ...(visit.quantity !== undefined ? { quantity: visit.quantity } : {}),
            }),
          );
        case 'session':
          return redirect(reply, `/checkout/${visit.sessionId}`);
      }
    }
  };
}
