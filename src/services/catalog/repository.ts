import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { ownedTables, type OwnedInsert, type OwnedRow, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import type { CatalogCouponsTable, CatalogPricesTable, CatalogProductsTable, CatalogSubscriptionsTable, CatalogTables, SubscriptionStatus } from './tables.js';

export type CatalogDb = Kysely<CatalogTables>;

export function catalogDb(db: Db): CatalogDb {
  return serviceDb(db);
}

/** The unique index on (tenant_id, mode, lower(code)). */
export const COUPON_CODE_INDEX = 'catalog_coupons_code';

export { isUniqueViolation } from '../../db/errors.js';

export type ProductRow = OwnedRow<CatalogProductsTable>;
export type PriceRow = OwnedRow<CatalogPricesTable>;
export type CouponRow = OwnedRow<CatalogCouponsTable>;
export type SubscriptionRow = OwnedRow<CatalogSubscriptionsTable>;
/** Changes to a row: any of its columns but the owner's. */
type Changes<Table> = Partial<OwnedInsert<Table>>;

const PRODUCT_COLUMNS = ['id', 'name', 'description', 'free_trial_days', 'active', 'default_price_id', 'created_at', 'updated_at'] as const;
const PRICE_COLUMNS = ['id', 'product_id', 'unit_price_cents', 'currency', 'billing_interval', 'interval_count', 'created_at'] as const;
const COUPON_COLUMNS = [
  'id',
  'code',
  'description',
  'discount_type',
  'percent_off',
  'amount_off_cents',
  'currency',
  'max_redemptions',
  'redeemed_count',
  'starts_at',
  'expires_at',
  'active',
  'created_at',
  'updated_at',
] as const;
const SUBSCRIPTION_COLUMNS = [
  'id',
  'product_id',
  'price_id',
  'contact_id',
  'company_id',
  'coupon_id',
  'coupon_code',
  'discount_type',
  'percent_off',
  'amount_off_cents',
  'discount_currency',
  'status',
  'quantity',
  'unit_price_cents',
  'currency',
  'billing_interval',
  'interval_count',
  'billing_cycle_anchor',
  'current_period_start',
  'current_period_end',
  'cancel_at_period_end',
  'canceled_at',
  'trial_end',
  'pause_resumes_at',
  'next_event_at',
  'created_at',
  'updated_at',
] as const;

/** Most prices one product may have (the product reply lists them all). */
export const MAX_PRICES_PER_PRODUCT = 100;

const owned = ownedTables<CatalogTables>();
const products = owned('catalog_products');
const prices = owned('catalog_prices');
const coupons = owned('catalog_coupons');
const subscriptions = owned('catalog_subscriptions');

// Products and prices

export function insertProduct(db: CatalogDb, owner: Owner, row: OwnedInsert<CatalogProductsTable>): Promise<ProductRow> {
  return products.insert(db, owner, row).returning(PRODUCT_COLUMNS).executeTakeFirstOrThrow();
}

const productById = products.statement((from, values: { id: string }) => from.select(PRODUCT_COLUMNS).where('id', '=', values.id));
const productByIdForUpdate = products.statement((from, values: { id: string }) => from.select(PRODUCT_COLUMNS).where('id', '=', values.id).forUpdate());

export function findProduct(db: CatalogDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<ProductRow | undefined> {
  return (options.forUpdate ? productByIdForUpdate : productById).first(db, owner, { id });
}

const productList = products.list<{ active?: boolean }, ProductRow>({
  filters: { active: (eb, active) => eb('active', '=', active) },
  select: (from) => from.select(PRODUCT_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listProducts(db: CatalogDb, owner: Owner, filters: { active?: boolean }, page: PageRequest) {
  return productList.page(db, owner, filters, page);
}

export function updateProduct(db: CatalogDb, owner: Owner, id: string, changes: Changes<CatalogProductsTable>): Promise<ProductRow> {
  return products.update(db, owner).set(changes).where('id', '=', id).returning(PRODUCT_COLUMNS).executeTakeFirstOrThrow();
}

export function insertPrice(db: CatalogDb, owner: Owner, row: OwnedInsert<CatalogPricesTable>): Promise<PriceRow> {
  return prices.insert(db, owner, row).returning(PRICE_COLUMNS).executeTakeFirstOrThrow();
}

const priceById = prices.statement((from, values: { productId: string; id: string }) =>
  from.select(PRICE_COLUMNS).where('product_id', '=', values.productId).where('id', '=', values.id),
);

export function findPrice(db: CatalogDb, owner: Owner, productId: string, id: string): Promise<PriceRow | undefined> {
  return priceById.first(db, owner, { productId, id });
}

const pricesByProducts = prices.statement((from, values: { productIds: string[] }) =>
  from
    .select(PRICE_COLUMNS)
    .where((eb) => eb('product_id', '=', eb.fn.any(eb.val(values.productIds))))
    .orderBy('created_at')
    .orderBy('id'),
);

/** Prices of the given products (one, or a page of them), oldest first. */
export function pricesOfProducts(db: CatalogDb, owner: Owner, productIds: string[]): Promise<PriceRow[]> {
  if (productIds.length === 0) return Promise.resolve([]);
  return pricesByProducts.all(db, owner, { productIds });
}

export async function countPrices(db: CatalogDb, owner: Owner, productId: string): Promise<number> {
  const row = await prices
    .select(db, owner)
    .select((eb) => eb.fn.countAll<string>().as('total'))
    .where('product_id', '=', productId)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

// Coupons

export function insertCoupon(db: CatalogDb, owner: Owner, row: OwnedInsert<CatalogCouponsTable>): Promise<CouponRow> {
  return coupons.insert(db, owner, row).returning(COUPON_COLUMNS).executeTakeFirstOrThrow();
}

const couponById = coupons.statement((from, values: { id: string }) => from.select(COUPON_COLUMNS).where('id', '=', values.id));
const couponByIdForUpdate = coupons.statement((from, values: { id: string }) => from.select(COUPON_COLUMNS).where('id', '=', values.id).forUpdate());

export function findCoupon(db: CatalogDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<CouponRow | undefined> {
  return (options.forUpdate ? couponByIdForUpdate : couponById).first(db, owner, { id });
}

const couponByCode = coupons.statement((from, values: { lowerCode: string }) => from.select(COUPON_COLUMNS).where(sql<string>`lower(code)`, '=', values.lowerCode));

/** By code, case-insensitively (through the unique index). */
export function findCouponByCode(db: CatalogDb, owner: Owner, code: string): Promise<CouponRow | undefined> {
  return couponByCode.first(db, owner, { lowerCode: code.toLowerCase() });
}

const couponList = coupons.list<{ active?: boolean; lowerCode?: string }, CouponRow>({
  filters: {
    active: (eb, active) => eb('active', '=', active),
    lowerCode: (eb, lowerCode) => eb(sql<string>`lower(code)`, '=', lowerCode),
  },
  select: (from) => from.select(COUPON_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listCoupons(db: CatalogDb, owner: Owner, filters: { active?: boolean; code?: string }, page: PageRequest) {
  return couponList.page(db, owner, { active: filters.active, lowerCode: filters.code?.toLowerCase() }, page);
}

export function updateCoupon(db: CatalogDb, owner: Owner, id: string, changes: Changes<CatalogCouponsTable>): Promise<CouponRow> {
  return coupons.update(db, owner).set(changes).where('id', '=', id).returning(COUPON_COLUMNS).executeTakeFirstOrThrow();
}

/**
 * Counts one redemption if the coupon is redeemable at `now`, in one conditional
 * statement: concurrent redemptions of the last use queue on the row lock and re-check
 * the condition, so exactly one wins. Returns undefined when the coupon is not redeemable.
 */
export function redeemCoupon(db: CatalogDb, owner: Owner, id: string, now: Date, updatedAt: Date): Promise<CouponRow | undefined> {
  return coupons
    .update(db, owner)
    .set((eb) => ({ redeemed_count: eb('redeemed_count', '+', 1), updated_at: sql<Date>`greatest(${updatedAt}::timestamptz, updated_at + interval '1 millisecond')` }))
    .where('id', '=', id)
    .where('active', '=', true)
    .where((eb) => eb.or([eb('starts_at', 'is', null), eb('starts_at', '<=', now)]))
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => eb.or([eb('max_redemptions', 'is', null), eb('redeemed_count', '<', eb.ref('max_redemptions'))]))
    .returning(COUPON_COLUMNS)
    .executeTakeFirst();
}

// Subscriptions

export function insertSubscription(db: CatalogDb, owner: Owner, row: OwnedInsert<CatalogSubscriptionsTable>): Promise<SubscriptionRow> {
  return subscriptions.insert(db, owner, row).returning(SUBSCRIPTION_COLUMNS).executeTakeFirstOrThrow();
}

const subscriptionById = subscriptions.statement((from, values: { id: string }) => from.select(SUBSCRIPTION_COLUMNS).where('id', '=', values.id));
const subscriptionByIdForUpdate = subscriptions.statement((from, values: { id: string }) => from.select(SUBSCRIPTION_COLUMNS).where('id', '=', values.id).forUpdate());

export function findSubscription(db: CatalogDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<SubscriptionRow | undefined> {
  return (options.forUpdate ? subscriptionByIdForUpdate : subscriptionById).first(db, owner, { id });
}

export type SubscriptionFilters = {
  status?: SubscriptionStatus;
  contact_id?: string;
  company_id?: string;
  product_id?: string;
};

const subscriptionList = subscriptions.list<SubscriptionFilters, SubscriptionRow>({
  filters: {
    status: (eb, status) => eb('status', '=', status),
    contact_id: (eb, contactId) => eb('contact_id', '=', contactId),
    company_id: (eb, companyId) => eb('company_id', '=', companyId),
    product_id: (eb, productId) => eb('product_id', '=', productId),
  },
  select: (from) => from.select(SUBSCRIPTION_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listSubscriptions(db: CatalogDb, owner: Owner, filters: SubscriptionFilters, page: PageRequest) {
  return subscriptionList.page(db, owner, filters, page);
}

const productNamesByIds = products.statement((from, values: { ids: string[] }) => from.select(['id', 'name']).where((eb) => eb('id', '=', eb.fn.any(eb.val(values.ids)))));

/** Current names of the given products (one query for a whole page). */
export async function productNames(db: CatalogDb, owner: Owner, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await productNamesByIds.all(db, owner, { ids });
  return new Map(rows.map((row) => [row.id, row.name]));
}

export function updateSubscription(db: CatalogDb, owner: Owner, id: string, changes: Changes<CatalogSubscriptionsTable>): Promise<SubscriptionRow> {
  return subscriptions.update(db, owner).set(changes).where('id', '=', id).returning(SUBSCRIPTION_COLUMNS).executeTakeFirstOrThrow();
}
