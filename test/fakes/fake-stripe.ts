import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedStripeRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  form: URLSearchParams;
}

/**
 * A stand-in for Stripe's PaymentIntents and Refunds APIs on 127.0.0.1, for tests only (never
 * the real network): create, confirm with card data (4242... succeeds, 4000...0002 is declined,
 * 4000 0025 0000 3155 asks for 3-D Secure), refunds of succeeded intents up to their amount,
 * idempotency keys replayed, and a switch to fail.
 */
export class FakeStripe {
  readonly requests: RecordedStripeRequest[] = [];
  /** Answer the next request with this status and a Stripe api_error. */
  failNext: number | undefined;
  /** The status new refunds are answered with (Stripe: succeeded, or pending for slower methods). */
  refundStatus: 'succeeded' | 'pending' = 'succeeded';
  #server: http.Server | undefined;
  #intents = new Map<string, { amount: number; currency: string; status: string; amount_refunded: number }>();
  #refundCount = 0;
  #replies = new Map<string, { status: number; body: unknown }>();

  constructor(readonly secretKey: string) {}

  async start(): Promise<string> {
    this.#server = http.createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        const form = new URLSearchParams(body);
        this.requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, form });
        const { status, body: reply } = this.#handle(request, form);
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(reply));
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // The client keeps connections alive; do not wait for them to time out.
    server.closeAllConnections();
    await closed;
  }

  #handle(request: http.IncomingMessage, form: URLSearchParams): { status: number; body: unknown } {
    if (request.headers.authorization !== `Bearer ${this.secretKey}`) {
      return { status: 401, body: { error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } } };
    }
    if (this.failNext !== undefined) {
      const status = this.failNext;
      this.failNext = undefined;
      return { status, body: { error: { type: 'api_error', message: 'Something went wrong on our end.' } } };
    }
    const idempotencyKey = request.headers['idempotency-key'];
    const replayKey = typeof idempotencyKey === 'string' ? `${request.url} ${idempotencyKey}` : undefined;
    if (replayKey && this.#replies.has(replayKey)) return this.#replies.get(replayKey)!;
    const reply = this.#route(request, form);
    if (replayKey) this.#replies.set(replayKey, reply);
    return reply;
  }

  #route(request: http.IncomingMessage, form: URLSearchParams): { status: number; body: unknown } {
    if (request.method === 'POST' && request.url === '/v1/payment_intents') {
      const id = `pi_fake_${this.#intents.size + 1}`;
      const intent = { amount: Number(form.get('amount')), currency: form.get('currency') ?? '', status: 'requires_payment_method', amount_refunded: 0 };
      this.#intents.set(id, intent);
      return { status: 200, body: { id, object: 'payment_intent', ...intent } };
    }
    const confirm = /^\/v1\/payment_intents\/([^/]+)\/confirm$/.exec(request.url ?? '');
    if (request.method === 'POST' && confirm) {
      const intent = this.#intents.get(decodeURIComponent(confirm[1]!));
      if (!intent) return { status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such payment_intent.' } } };
      const number = form.get('payment_method_data[card][number]');
      if (number === '4242424242424242') {
        intent.status = 'succeeded';
        return { status: 200, body: { id: confirm[1], object: 'payment_intent', ...intent } };
      }
      if (number === '4000002500003155') return { status: 200, body: { id: confirm[1], object: 'payment_intent', ...intent, status: 'requires_action' } };
      return {
        status: 402,
        body: { error: { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.', payment_intent: { id: confirm[1] } } },
      };
    }
    if (request.method === 'POST' && request.url === '/v1/refunds') {
      const intentId = form.get('payment_intent') ?? '';
      const intent = this.#intents.get(intentId);
      if (!intent) return { status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such payment_intent.' } } };
      if (intent.status !== 'succeeded')
        return { status: 400, body: { error: { type: 'invalid_request_error', code: 'charge_not_refundable', message: 'The payment was not made.' } } };
      const amount = form.has('amount') ? Number(form.get('amount')) : intent.amount - intent.amount_refunded;
      if (!(amount > 0) || intent.amount_refunded + amount > intent.amount) {
        return { status: 400, body: { error: { type: 'invalid_request_error', code: 'amount_too_large', message: 'Refund amount is greater than unrefunded amount on charge.' } } };
      }
      intent.amount_refunded += amount;
      this.#refundCount += 1;
      const metadata = Object.fromEntries([...form.entries()].flatMap(([key, value]) => (/^metadata\[(.+)\]$/.exec(key) ? [[/^metadata\[(.+)\]$/.exec(key)![1]!, value]] : [])));
      return {
        status: 200,
        body: {
          id: `re_fake_${this.#refundCount}`,
          object: 'refund',
          amount,
          currency: intent.currency,
          payment_intent: intentId,
          reason: form.get('reason'),
          metadata,
          status: this.refundStatus,
        },
      };
    }
    return { status: 404, body: { error: { type: 'invalid_request_error', message: 'Unrecognized request URL.' } } };
  }
}
