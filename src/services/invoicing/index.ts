import type { ServiceModule } from '../module.js';
import { invoicingRoutes } from './routes.js';
import { createInvoicingService, type InvoicingService } from './service.js';

export type { InvoicingService } from './service.js';

/** Customers, invoices, payments, refunds and refund approvals. */
export const invoicingModule: ServiceModule<InvoicingService, { publicBaseUrl: string }> = {
  id: 'invoicing',
  migrations: new URL('./migrations/', import.meta.url),
  // Approval status URLs in 202 replies are absolute.
  settings: ({ config }) => ({ publicBaseUrl: config.publicBaseUrl }),
  create: (deps) => createInvoicingService({ db: deps.db, publicBaseUrl: deps.settings.publicBaseUrl }),
  routes: invoicingRoutes,
};
