import type { ServiceModule } from '../module.js';
import { WebhookDispatcher } from './dispatcher.js';
import { webhooksRoutes } from './routes.js';
import { WebhookEndpoint } from './schemas.js';
import { createWebhooksService, PING_EVENT, type WebhooksService } from './service.js';

export type { WebhooksService } from './service.js';

/** Webhook endpoints and signed deliveries of the platform's events; the event log as clients read it. */
export const webhooksModule: ServiceModule<WebhooksService, { secretsKey: Buffer }> = {
  id: 'webhooks',
  migrations: new URL('./migrations/', import.meta.url),
  events: [{ type: PING_EVENT, description: 'A test event, sent to one endpoint by POST /webhooks/endpoints/{id}/test.', object: WebhookEndpoint }],
  // Signing secrets are sealed with the platform's secrets key.
  settings: ({ secretsKey }) => ({ secretsKey }),
  create: (deps) => {
    const dispatcher = new WebhookDispatcher({
      db: deps.db,
      clock: deps.clock,
      events: deps.events,
      outbound: deps.outbound,
      secretsKey: deps.settings.secretsKey,
      onError: (error) => deps.jobs.reportError(error, 'webhook delivery'),
    });
    deps.jobs.addWorker(dispatcher);
    return createWebhooksService({ db: deps.db, events: deps.events, secretsKey: deps.settings.secretsKey, wake: () => dispatcher.wake() });
  },
  routes: webhooksRoutes,
};
