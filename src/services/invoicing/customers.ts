import { normalizeCurrency } from '../../lib/currency.js';
import { cleanText } from '../../lib/text.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { notFound, validationFailed } from '../../platform/errors/app-error.js';
import type { PageRequest } from '../../platform/pagination/index.js';
import type { Owner } from '../../db/owned.js';
import { isInt64Id } from '../../platform/http/schemas.js';
import { normalizeCountry } from './countries.js';
import { presentCreatedCustomer, presentCustomer } from './present.js';
import * as repository from './repository.js';
import type { InvoicingDb, NewCustomer } from './repository.js';
import type { CreateCustomerInput, CreatedCustomerView, CustomerView, UpdateCustomerInput } from './schemas.js';

export const DEFAULT_PAYMENT_TERMS_DAYS = 30;
export const DEFAULT_CURRENCY = 'USD';

/** Customers: who invoices are addressed to, with their billing defaults. */
export function createCustomerRules(db: InvoicingDb) {
  return {
    async createCustomer(ctx: RequestContext, input: CreateCustomerInput): Promise<CreatedCustomerView> {
      const country = readCountry(input.billing_country);
      const row = await repository.insertCustomer(db, ctx, {
        display_name: input.display_name.trim(),
        email: input.email?.toLowerCase() ?? null,
        phone: cleanText(input.phone) ?? null,
        billing_address_line1: cleanText(input.billing_address_line1) ?? null,
        billing_city: cleanText(input.billing_city) ?? null,
        billing_postal_code: cleanText(input.billing_postal_code) ?? null,
        billing_country: country ?? null,
        tax_id: cleanText(input.tax_id) ?? null,
        default_payment_terms_days: input.default_payment_terms_days ?? DEFAULT_PAYMENT_TERMS_DAYS,
        default_currency: input.default_currency !== undefined ? normalizeCurrency(input.default_currency)! : DEFAULT_CURRENCY,
        notes: cleanNotes(input.notes) ?? null,
        is_active: true,
        created_at: ctx.now,
        updated_at: ctx.now,
      });
      return presentCreatedCustomer(row);
    },

    /** For other services: customers by id (unknown or malformed ids are simply absent). */
    async customersById(owner: Owner, ids: string[]): Promise<Map<string, CustomerView>> {
      const found = new Map<string, CustomerView>();
      for (const id of new Set(ids.filter(isInt64Id))) {
        const row = await repository.findCustomer(db, owner, id);
        if (row) found.set(row.id, presentCustomer(row));
      }
      return found;
    },

    async getCustomer(ctx: RequestContext, id: string): Promise<CustomerView> {
      const row = await repository.findCustomer(db, ctx, id);
      if (!row) throw notFound('Customer');
      return presentCustomer(row);
    },

    async listCustomers(ctx: RequestContext, filters: { search?: string; is_active?: 'true' | 'false' }, page: PageRequest) {
      const { rows, total } = await repository.listCustomers(
        db,
        ctx,
        {
          ...(filters.search !== undefined ? { search: filters.search } : {}),
          ...(filters.is_active !== undefined ? { isActive: filters.is_active === 'true' } : {}),
        },
        page,
      );
      return { rows: rows.map(presentCustomer), total };
    },

    async updateCustomer(ctx: RequestContext, id: string, input: UpdateCustomerInput): Promise<CustomerView> {
      const country = readCountry(input.billing_country);
      return db.transaction().execute(async (tx) => {
        const current = await repository.findCustomer(tx, ctx, id, { lock: 'update' });
        if (!current) throw notFound('Customer');
        assertFresh(input.expected_updated_at, current.updated_at);
        const changes: Partial<NewCustomer> = { updated_at: nextUpdatedAt(current.updated_at, ctx.now) };
        if (input.display_name !== undefined) changes.display_name = input.display_name.trim();
        if (input.email !== undefined) changes.email = input.email?.toLowerCase() ?? null;
        if (input.phone !== undefined) changes.phone = cleanText(input.phone) ?? null;
        if (input.billing_address_line1 !== undefined) changes.billing_address_line1 = cleanText(input.billing_address_line1) ?? null;
        if (input.billing_city !== undefined) changes.billing_city = cleanText(input.billing_city) ?? null;
        if (input.billing_postal_code !== undefined) changes.billing_postal_code = cleanText(input.billing_postal_code) ?? null;
        if (country !== undefined) changes.billing_country = country;
        if (input.tax_id !== undefined) changes.tax_id = cleanText(input.tax_id) ?? null;
        if (input.default_payment_terms_days !== undefined) changes.default_payment_terms_days = input.default_payment_terms_days;
        if (input.default_currency !== undefined) changes.default_currency = normalizeCurrency(input.default_currency)!;
        if (input.notes !== undefined) changes.notes = cleanNotes(input.notes) ?? null;
        return presentCustomer(await repository.updateCustomer(tx, ctx, id, changes));
      });
    },

    /**
     * Archives (is_active false) or restores a customer. Asking for the state it already
     * has returns it unchanged; archived customers keep their invoices but get no new ones.
     */
    async setCustomerActive(ctx: RequestContext, id: string, active: boolean): Promise<CustomerView> {
      return db.transaction().execute(async (tx) => {
        const current = await repository.findCustomer(tx, ctx, id, { lock: 'update' });
        if (!current) throw notFound('Customer');
        if (current.is_active === active) return presentCustomer(current);
        const row = await repository.updateCustomer(tx, ctx, id, {
          is_active: active,
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        return presentCustomer(row);
      });
    },
  };
}

/** The upper-case country code; null clears; undefined means not sent. Unknown codes are 400. */
function readCountry(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const country = normalizeCountry(value);
  if (country === undefined) {
    throw validationFailed([
      {
        path: 'billing_country',
        code: 'invalid_value',
        message: `"${value}" is not an ISO 3166-1 alpha-2 country code (for example US, GB, DE).`,
      },
    ]);
  }
  return country;
}

/** Notes keep their line breaks; surrounding blank space is dropped and blank notes become null. */
function cleanNotes(value: string | null | undefined): string | null | undefined {
  return cleanText(value);
}
