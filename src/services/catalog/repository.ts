import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import type { Owner } from '../../platform/context.js';
import { selectPage } from '../../db/paging.js';
import type { PageRequest } from '../../platform/pagination/index.js';
import type {
  CatalogCouponsTable,
  CatalogPricesTable,
  CatalogProductsTable,
  CatalogSubscriptionsTable,
  CatalogTables,
  SubscriptionStatus,
} from './tables.js';

export type { Owner };

export type CatalogDb = Kysely<CatalogTables>;

export function catalogDb(db: Db): CatalogDb {
  return serviceDb(db);
}

/** The unique index on (tenant_id, mode, lower(code)). */
export const COUPON_CODE_INDEX = 'catalog_coupons_code';

export { isUniqueViolation } from '../../db/errors.js';

export type ProductRow = Omit<Selectable<CatalogProductsTable>, 'tenant_id' | 'mode'>;
export type PriceRow = Omit<Selectable<CatalogPricesTable>, 'tenant_id' | 'mode'>;
export type CouponRow = Omit<Selectable<CatalogCouponsTable>, 'tenant_id' | 'mode'>;
export type SubscriptionRow = Omit<Selectable<CatalogSubscriptionsTable>, 'tenant_id' | 'mode'>;
/** A subscription with its product's current name, as reads show it. */
export type SubscriptionWithProduct = SubscriptionRow & { product_name: string | null };

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

// Products and prices

export function insertProduct(db: CatalogDb, row: Insertable<CatalogProductsTable>): Promise<ProductRow> {
  return db.insertInto('catalog_products').values(row).returning(PRODUCT_COLUMNS).executeTakeFirstOrThrow();
}

export function findProduct(db: CatalogDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<ProductRow | undefined> {
  let query = db
    .selectFrom('catalog_products')
    .select(PRODUCT_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function listProducts(db: CatalogDb, owner: Owner, filters: { active?: boolean }, page: PageRequest) {
  let base = db.selectFrom('catalog_products').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.active !== undefined) base = base.where('active', '=', filters.active);
  return selectPage(db, base, base.select(PRODUCT_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

export function updateProduct(db: CatalogDb, owner: Owner, id: string, changes: Updateable<CatalogProductsTable>): Promise<ProductRow> {
  return db
    .updateTable('catalog_products')
    .set(changes)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .returning(PRODUCT_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function insertPrice(db: CatalogDb, row: Insertable<CatalogPricesTable>): Promise<PriceRow> {
  return db.insertInto('catalog_prices').values(row).returning(PRICE_COLUMNS).executeTakeFirstOrThrow();
}

export function findPrice(db: CatalogDb, owner: Owner, productId: string, id: string): Promise<PriceRow | undefined> {
  return db
    .selectFrom('catalog_prices')
    .select(PRICE_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('product_id', '=', productId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Prices of the given products, oldest first. */
export function pricesOfProducts(db: CatalogDb, owner: Owner, productIds: string[]): Promise<PriceRow[]> {
  if (productIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('catalog_prices')
    .select(PRICE_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('product_id', 'in', productIds)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function countPrices(db: CatalogDb, owner: Owner, productId: string): Promise<number> {
  const row = await db
    .selectFrom('catalog_prices')
    .select((eb) => eb.fn.countAll<string>().as('total'))
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('product_id', '=', productId)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

// Coupons

export function insertCoupon(db: CatalogDb, row: Insertable<CatalogCouponsTable>): Promise<CouponRow> {
  return db.insertInto('catalog_coupons').values(row).returning(COUPON_COLUMNS).executeTakeFirstOrThrow();
}

export function findCoupon(db: CatalogDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<CouponRow | undefined> {
  let query = db
    .selectFrom('catalog_coupons')
    .select(COUPON_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** By code, case-insensitively (through the unique index). */
export function findCouponByCode(db: CatalogDb, owner: Owner, code: string): Promise<CouponRow | undefined> {
  return db
    .selectFrom('catalog_coupons')
    .select(COUPON_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where(sql<string>`lower(code)`, '=', code.toLowerCase())
    .executeTakeFirst();
}

export async function listCoupons(db: CatalogDb, owner: Owner, filters: { active?: boolean; code?: string }, page: PageRequest) {
  let base = db.selectFrom('catalog_coupons').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.active !== undefined) base = base.where('active', '=', filters.active);
  if (filters.code !== undefined) base = base.where(sql<string>`lower(code)`, '=', filters.code.toLowerCase());
  return selectPage(db, base, base.select(COUPON_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

export function updateCoupon(db: CatalogDb, owner: Owner, id: string, changes: Updateable<CatalogCouponsTable>): Promise<CouponRow> {
  return db
    .updateTable('catalog_coupons')
    .set(changes)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .returning(COUPON_COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * Counts one redemption if the coupon is redeemable at `now`, in one conditional
 * statement: concurrent redemptions of the last use queue on the row lock and re-check
 * the condition, so exactly one wins. Returns undefined when the coupon is not redeemable.
 */
export function redeemCoupon(db: CatalogDb, owner: Owner, id: string, now: Date, updatedAt: Date): Promise<CouponRow | undefined> {
  return db
    .updateTable('catalog_coupons')
    .set((eb) => ({ redeemed_count: eb('redeemed_count', '+', 1), updated_at: sql<Date>`greatest(${updatedAt}::timestamptz, updated_at + interval '1 millisecond')` }))
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .where('active', '=', true)
    .where((eb) => eb.or([eb('starts_at', 'is', null), eb('starts_at', '<=', now)]))
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => eb.or([eb('max_redemptions', 'is', null), eb('redeemed_count', '<', eb.ref('max_redemptions'))]))
    .returning(COUPON_COLUMNS)
    .executeTakeFirst();
}

// Subscriptions

export function insertSubscription(db: CatalogDb, row: Insertable<CatalogSubscriptionsTable>): Promise<SubscriptionRow> {
  return db.insertInto('catalog_subscriptions').values(row).returning(SUBSCRIPTION_COLUMNS).executeTakeFirstOrThrow();
}

export function findSubscription(db: CatalogDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<SubscriptionRow | undefined> {
  let query = db
    .selectFrom('catalog_subscriptions')
    .select(SUBSCRIPTION_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export interface SubscriptionFilters {
  status?: SubscriptionStatus;
  contact_id?: string;
  company_id?: string;
  product_id?: string;
}

export async function listSubscriptions(db: CatalogDb, owner: Owner, filters: SubscriptionFilters, page: PageRequest) {
  let base = db.selectFrom('catalog_subscriptions').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.status) base = base.where('status', '=', filters.status);
  if (filters.contact_id) base = base.where('contact_id', '=', filters.contact_id);
  if (filters.company_id) base = base.where('company_id', '=', filters.company_id);
  if (filters.product_id) base = base.where('product_id', '=', filters.product_id);
  return selectPage(db, base, base.select(SUBSCRIPTION_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

/** Current names of the given products (one query for a whole page). */
export async function productNames(db: CatalogDb, owner: Owner, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('catalog_products')
    .select(['id', 'name'])
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}

export function updateSubscription(db: CatalogDb, owner: Owner, id: string, changes: Updateable<CatalogSubscriptionsTable>): Promise<SubscriptionRow> {
  return db
    .updateTable('catalog_subscriptions')
    .set(changes)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .returning(SUBSCRIPTION_COLUMNS)
    .executeTakeFirstOrThrow();
}
