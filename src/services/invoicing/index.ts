import type { Owner } from '../../db/owned.js';
import type { RequestContext } from '../../platform/context.js';
import { isInt64Id } from '../../platform/http/schemas.js';
import type { ServiceModule } from '../module.js';
import { invoicingRoutes } from './routes.js';
import { Approval, Invoice, RecordedPayment, Refund } from './schemas.js';
import { createInvoicingService, type InvoicingService } from './service.js';

export type { InvoicingService } from './service.js';

declare module '../registry.js' {
  interface ServiceApis {
    invoicing: InvoicingService & InvoiceLookup;
  }
}

/** For links from other services (tasks): an invoice's label (its number) and dashboard URL, or null when there is no such invoice. */
export interface InvoiceLookup {
  describeRecord(owner: Owner, id: string): Promise<{ label: string; url: string } | null>;
}

function withInvoiceLookup(service: InvoicingService): InvoicingService & InvoiceLookup {
  return Object.assign(service, {
    async describeRecord(owner: Owner, id: string) {
      if (!isInt64Id(id)) return null;
      try {
        const invoice = await service.getInvoice(owner as RequestContext, id);
        return { label: invoice.number, url: `/dashboard/invoicing/invoices/${invoice.id}` };
      } catch (error) {
        if ((error as { code?: string }).code === 'not_found') return null;
        throw error;
      }
    },
  });
}

/** Customers, invoices, payments, refunds and refund approvals. */
export const invoicingModule: ServiceModule<InvoicingService, { publicBaseUrl: string }> = {
  id: 'invoicing',
  migrations: new URL('./migrations/', import.meta.url),
  events: [
    { type: 'invoicing.invoice.finalized', description: 'A draft invoice was finalized: it is open and payable.', object: Invoice },
    { type: 'invoicing.invoice.paid', description: 'An invoice was paid in full.', object: Invoice },
    { type: 'invoicing.payment.created', description: 'A payment was recorded on an invoice; the object carries the invoice as it is after it.', object: RecordedPayment },
    { type: 'invoicing.refund.created', description: 'A refund was made: at once, or when its approval was approved.', object: Refund },
    { type: 'invoicing.approval.requested', description: 'A refund request matched an approval policy and waits for a decision.', object: Approval },
    { type: 'invoicing.approval.decided', description: 'A refund approval was approved (its refund made) or rejected.', object: Approval },
  ],
  // Approval status URLs in 202 replies are absolute.
  settings: ({ config }) => ({ publicBaseUrl: config.publicBaseUrl }),
  create: (deps) => withInvoiceLookup(createInvoicingService({ db: deps.db, events: deps.events, publicBaseUrl: deps.settings.publicBaseUrl })),
  routes: invoicingRoutes,
};
