import type { Db } from '../../db/database.js';
import type { EventLog } from '../../platform/events/event-log.js';
import { createCustomerRules } from './customers.js';
import { createInvoiceRules } from './invoices.js';
import { createRefundRules } from './refunds.js';
import { invoicingDb } from './repository.js';

/**
 * Accounts receivable: customers, invoices (draft -> open -> partially_paid / paid, or
 * void), payments applied to invoices, refunds of payments and the approvals that hold
 * large refunds back. Rules live in customers.ts, invoices.ts and refunds.ts.
 */
export function createInvoicingService({ db, events, publicBaseUrl }: { db: Db; events: EventLog; publicBaseUrl: string }) {
  const tables = invoicingDb(db);
  return {
    ...createCustomerRules(tables),
    ...createInvoiceRules(tables, events),
    ...createRefundRules(tables, events, publicBaseUrl),
  };
}

export type InvoicingService = ReturnType<typeof createInvoicingService>;
