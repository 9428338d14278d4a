import type { ServiceModule } from '../module.js';
import { registerPaymentJobs } from './jobs.js';
import { paymentsPages } from './pages.js';
import { SandboxProcessor, StripeProcessor } from './processor.js';
import { paymentsRoutes } from './routes.js';
import { CheckoutSession, Refund } from './schemas.js';
import { createPaymentsService, type PaymentsService } from './service.js';

export type { PaymentsService } from './service.js';
export type { PaymentProcessor } from './processor.js';

interface PaymentsSettings {
  /** Base of the hosted pages' absolute URLs. */
  publicBaseUrl: string;
  /** Signs the hosted pages' CSRF tokens. */
  secretsKey: Buffer;
  stripeSecretKey: string | undefined;
  stripeApiBase: string;
}

/**
 * Hosted checkout sessions, their refunds, and payment links, with the buyer's pages at
 * /checkout/{id} and /pay/{id}. Test mode pays in the built-in sandbox; live mode through Stripe when
 * STRIPE_SECRET_KEY is set, and is refused otherwise.
 */
export const paymentsModule: ServiceModule<PaymentsService, PaymentsSettings> = {
  id: 'payments',
  migrations: new URL('./migrations/', import.meta.url),
  events: [
    { type: 'payments.checkout_session.completed', description: 'A checkout session was paid.', object: CheckoutSession },
    { type: 'payments.checkout_session.expired', description: 'A checkout session expired unpaid, 24 hours after it was created.', object: CheckoutSession },
    {
      type: 'payments.refund.created',
      description:
        'A paid checkout session was refunded, in full or in part; the object is the refund (checkout_session_id, amount_cents, currency, status, and the session’s amounts after it).',
      object: Refund,
    },
  ],
  settings: ({ config, secretsKey }) => ({
    publicBaseUrl: config.publicBaseUrl,
    secretsKey,
    stripeSecretKey: config.stripeSecretKey,
    stripeApiBase: config.stripeApiBase,
  }),
  create: (deps) => {
    const { publicBaseUrl, secretsKey, stripeSecretKey, stripeApiBase } = deps.settings;
    registerPaymentJobs(deps.jobs, { db: deps.db, events: deps.events, publicBaseUrl });
    return createPaymentsService({
      db: deps.db,
      clock: deps.clock,
      jobs: deps.jobs,
      events: deps.events,
      publicBaseUrl,
      secretsKey,
      processors: {
        test: new SandboxProcessor(),
        live: stripeSecretKey ? new StripeProcessor({ secretKey: stripeSecretKey, baseUrl: stripeApiBase, http: deps.outbound }) : undefined,
      },
    });
  },
  routes: paymentsRoutes,
  pages: paymentsPages,
};
