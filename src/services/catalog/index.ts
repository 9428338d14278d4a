import type { ServiceModule } from '../module.js';
import { registerCatalogJobs } from './billing-clock.js';
import { SUBSCRIPTION_EVENTS } from './events.js';
import { catalogRoutes } from './routes.js';
import { createCatalogService, type CatalogService } from './service.js';

export type { CatalogService } from './service.js';
export { clockJobKey, registerCatalogJobs, SUBSCRIPTION_CLOCK_JOB } from './billing-clock.js';

/** Subscription products and prices, discount codes, subscriptions of crm records and their billing clock. */
export const catalogModule: ServiceModule<CatalogService> = {
  id: 'catalog',
  migrations: new URL('./migrations/', import.meta.url),
  events: SUBSCRIPTION_EVENTS,
  create: (deps) => {
    registerCatalogJobs(deps);
    return createCatalogService(deps);
  },
  routes: catalogRoutes,
};
