import type { ServiceModule } from '../module.js';
import { invoicingRoutes } from './routes.js';
import { createInvoicingService, type InvoicingService } from './service.js';

export type { InvoicingService } from './service.js';

/** Customers, invoices, payments, refunds and refund approvals. */
export const invoicingModule: ServiceModule<InvoicingService> = {
  id: 'invoicing',
  migrations: new URL('./migrations/', import.meta.url),
  create: (deps) => createInvoicingService(deps),
  routes: invoicingRoutes,
};
