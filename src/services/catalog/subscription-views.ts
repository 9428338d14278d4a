import type { Owner } from '../../db/owned.js';
import type { ServiceRegistry } from '../registry.js';
import { presentSubscription } from './present.js';
import * as repository from './repository.js';
import type { CatalogDb, SubscriptionRow } from './repository.js';
import type { SubscriptionView } from './schemas.js';

/** The crm names subscriptions show, by contact and by company id. */
export interface CustomerNames {
  contacts: ReadonlyMap<string, { name: string }>;
  companies: ReadonlyMap<string, { name: string }>;
}

type Customer = Pick<SubscriptionRow, 'contact_id' | 'company_id'>;

/**
 * Subscriptions as the API shows them: with their product's and their crm customer's current
 * names. A view made inside a transaction takes crm names read before it began: crm queries
 * go through the pool, and on the embedded database (one session) they would wait for the
 * transaction forever.
 */
export function createSubscriptionViews(catalog: CatalogDb, services: ServiceRegistry) {
  async function customerNames(owner: Owner, customers: readonly Customer[]): Promise<CustomerNames> {
    const crm = services.get('crm');
    const contactIds = distinct(customers.map((customer) => customer.contact_id));
    const companyIds = distinct(customers.map((customer) => customer.company_id));
    const [contacts, companies] = await Promise.all([
      contactIds.length > 0 ? crm.contactsById(owner, contactIds) : new Map<string, { name: string }>(),
      companyIds.length > 0 ? crm.companiesById(owner, companyIds) : new Map<string, { name: string }>(),
    ]);
    return { contacts, companies };
  }

  function productNames(db: CatalogDb, owner: Owner, rows: readonly SubscriptionRow[]): Promise<Map<string, string>> {
    return repository.productNames(db, owner, distinct(rows.map((row) => row.product_id)));
  }

  function withNames(row: SubscriptionRow, products: ReadonlyMap<string, string>, names: CustomerNames): SubscriptionView {
    return presentSubscription(row, {
      product: products.get(row.product_id) ?? null,
      contact: row.contact_id === null ? null : (names.contacts.get(row.contact_id)?.name ?? null),
      company: row.company_id === null ? null : (names.companies.get(row.company_id)?.name ?? null),
    });
  }

  return {
    customerNames,

    /** Outside a transaction: one query per kind of name for the whole page. */
    async list(owner: Owner, rows: SubscriptionRow[]): Promise<SubscriptionView[]> {
      if (rows.length === 0) return [];
      const [products, names] = await Promise.all([productNames(catalog, owner, rows), customerNames(owner, rows)]);
      return rows.map((row) => withNames(row, products, names));
    },

    /** Inside transaction `tx`, with the crm names read before it. */
    async one(tx: CatalogDb, owner: Owner, row: SubscriptionRow, names: CustomerNames): Promise<SubscriptionView> {
      return withNames(row, await productNames(tx, owner, [row]), names);
    },
  };
}

export type SubscriptionViews = ReturnType<typeof createSubscriptionViews>;

function distinct(ids: readonly (string | null)[]): string[] {
  return [...new Set(ids.filter((id): id is string => id !== null))];
}
