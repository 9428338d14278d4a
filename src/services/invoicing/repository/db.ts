import { sql, type Kysely, type RawBuilder } from 'kysely';
import { serviceDb, type Db } from '../../../db/database.js';
import { ownedTables } from '../../../db/owned.js';
import type { InvoicingTables } from '../tables.js';

export type InvoicingDb = Kysely<InvoicingTables>;

export function invoicingDb(db: Db): InvoicingDb {
  return serviceDb(db);
}

const owned = ownedTables<InvoicingTables>();
export const customers = owned('invoicing_customers');
export const invoiceCounters = owned('invoicing_invoice_counters');
export const invoices = owned('invoicing_invoices');
export const lineItems = owned('invoicing_line_items');
export const payments = owned('invoicing_payments');
export const refunds = owned('invoicing_refunds');
export const approvalPolicies = owned('invoicing_approval_policies');
export const approvals = owned('invoicing_approvals');

/*
 * Rows as the service sees them: ids as decimal strings (exact for any bigint), money as
 * BigInt minor units, dates as YYYY-MM-DD. node-postgres and the embedded database read
 * bigint differently (string vs number), so every read goes through these normalisers.
 */

type Raw = string | number | bigint;
export const id = (value: Raw): string => String(value);
export const minor = (value: Raw): bigint => BigInt(value);

type BigintAsText<V> = V extends bigint ? string : V;

/** Bigint-valued fields go to the database as decimal text. */
export function asText<T extends object>(values: T): { [K in keyof T]: BigintAsText<T[K]> } {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined) out[key] = typeof value === 'bigint' ? value.toString() : value;
  }
  return out as never;
}

/**
 * `= any($1)` with the ids as one array parameter: unlike `in (…)`, one SQL text for any
 * number of ids, so a read of "the rows of these ids" can be a prepared statement.
 */
export function anyOf(ids: readonly string[]): RawBuilder<string> {
  return sql<string>`any(${ids})`;
}
