/**
 * The invoicing tables, one module per resource under repository/. Every query goes
 * through the owned tables declared in repository/db.ts, which confine it to one tenant
 * and mode.
 */
export { isUniqueViolation } from '../../db/errors.js';
export { invoicingDb, type InvoicingDb } from './repository/db.js';
export * from './repository/customers.js';
export * from './repository/invoices.js';
export * from './repository/payments.js';
export * from './repository/refunds.js';
export * from './repository/approvals.js';
