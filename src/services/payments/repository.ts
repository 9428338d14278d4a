import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import type { Owner } from '../../platform/context.js';
import type { Mode } from '../../db/types.js';
import { selectPage } from '../../db/paging.js';
import type { PageRequest } from '../../platform/pagination/index.js';
import type { PaymentCheckoutSessionsTable, PaymentLinksTable, PaymentTables, SessionStatus } from './tables.js';

export type { Owner };

export type PaymentsDb = Kysely<PaymentTables>;

export function paymentsDb(db: Db): PaymentsDb {
  return serviceDb(db);
}

export type SessionRow = Omit<Selectable<PaymentCheckoutSessionsTable>, 'tenant_id' | 'mode'>;
export type LinkRow = Omit<Selectable<PaymentLinksTable>, 'tenant_id' | 'mode'>;
/** A session found by its id alone (the hosted page), with the owner it belongs to. */
export type OwnedSessionRow = SessionRow & { tenant_id: string; mode: Mode };
export type OwnedLinkRow = LinkRow & { tenant_id: string; mode: Mode };

const SESSION_COLUMNS = [
  'id',
  'status',
  'payment_status',
  'line_items',
  'description',
  'currency',
  'amount_total_cents',
  'success_url',
  'cancel_url',
  'customer_email',
  'metadata',
  'payment_link_id',
  'expires_at',
  'completed_at',
  'processing_until',
  'payment_intent_id',
  'card_brand',
  'card_last4',
  'created_at',
  'updated_at',
] as const;

const LINK_COLUMNS = [
  'id',
  'name',
  'line_items',
  'description',
  'currency',
  'amount_total_cents',
  'active',
  'allow_quantity',
  'max_uses',
  'use_count',
  'after_completion_url',
  'created_at',
  'updated_at',
] as const;

// Checkout sessions

export function insertSession(db: PaymentsDb, row: Insertable<PaymentCheckoutSessionsTable>): Promise<SessionRow> {
  return db.insertInto('payment_checkout_sessions').values(row).returning(SESSION_COLUMNS).executeTakeFirstOrThrow();
}

export function findSession(db: PaymentsDb, owner: Owner, id: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('payment_checkout_sessions')
    .select(SESSION_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * The one lookup by id alone: the hosted page, where the unguessable session id in the
 * URL is the buyer's capability. It returns the owner, and every later query uses it.
 */
export function findSessionByCapability(db: PaymentsDb, id: string): Promise<OwnedSessionRow | undefined> {
  return db
    .selectFrom('payment_checkout_sessions')
    .select([...SESSION_COLUMNS, 'tenant_id', 'mode'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listSessions(
  db: PaymentsDb,
  owner: Owner,
  filters: { status?: SessionStatus; payment_link_id?: string },
  now: Date,
  page: PageRequest,
) {
  let base = db.selectFrom('payment_checkout_sessions').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  // An open session past its expiry is expired even before the expiry job has run.
  if (filters.status === 'open') base = base.where('status', '=', 'open').where('expires_at', '>', now);
  if (filters.status === 'expired') {
    base = base.where((eb) => eb.or([eb('status', '=', 'expired'), eb.and([eb('status', '=', 'open'), eb('expires_at', '<=', now)])]));
  }
  if (filters.status === 'complete') base = base.where('status', '=', 'complete');
  if (filters.payment_link_id) base = base.where('payment_link_id', '=', filters.payment_link_id);
  return selectPage(db, base, base.select(SESSION_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

/**
 * Takes the session for one payment attempt: only an open, unexpired session that no other
 * attempt holds. Returns undefined when another request holds it or its state changed.
 */
export function claimSessionForPayment(db: PaymentsDb, owner: Owner, id: string, now: Date, holdUntil: Date): Promise<SessionRow | undefined> {
  return db
    .updateTable('payment_checkout_sessions')
    .set({ processing_until: holdUntil })
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .where('status', '=', 'open')
    .where('expires_at', '>', now)
    .where((eb) => eb.or([eb('processing_until', 'is', null), eb('processing_until', '<=', now)]))
    .returning(SESSION_COLUMNS)
    .executeTakeFirst();
}

export async function setPaymentIntent(db: PaymentsDb, owner: Owner, id: string, paymentIntentId: string): Promise<void> {
  await db
    .updateTable('payment_checkout_sessions')
    .set({ payment_intent_id: paymentIntentId })
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .execute();
}

/** Ends a payment attempt that did not pay (declined or failed): the session is open again. */
export async function releaseSession(db: PaymentsDb, owner: Owner, id: string): Promise<void> {
  await db
    .updateTable('payment_checkout_sessions')
    .set({ processing_until: null })
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .where('status', '=', 'open')
    .execute();
}

/** Marks an open session paid; the status condition makes a double submit pay once. */
export function completeSession(
  db: PaymentsDb,
  owner: Owner,
  id: string,
  paid: { now: Date; cardBrand: string; cardLast4: string; paymentIntentId: string },
): Promise<SessionRow | undefined> {
  return db
    .updateTable('payment_checkout_sessions')
    .set({
      status: 'complete',
      payment_status: 'paid',
      completed_at: paid.now,
      processing_until: null,
      payment_intent_id: paid.paymentIntentId,
      card_brand: paid.cardBrand,
      card_last4: paid.cardLast4,
      updated_at: paid.now,
    })
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .where('status', '=', 'open')
    .returning(SESSION_COLUMNS)
    .executeTakeFirst();
}

/** Expires the session if it is still open, due, and not held by a payment attempt. */
export function expireSessionIfDue(db: PaymentsDb, owner: Owner, id: string, now: Date): Promise<SessionRow | undefined> {
  return db
    .updateTable('payment_checkout_sessions')
    .set({ status: 'expired', updated_at: now })
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .where('status', '=', 'open')
    .where('expires_at', '<=', now)
    .where((eb) => eb.or([eb('processing_until', 'is', null), eb('processing_until', '<=', now)]))
    .returning(SESSION_COLUMNS)
    .executeTakeFirst();
}

// Payment links

export function insertLink(db: PaymentsDb, row: Insertable<PaymentLinksTable>): Promise<LinkRow> {
  return db.insertInto('payment_links').values(row).returning(LINK_COLUMNS).executeTakeFirstOrThrow();
}

export function findLink(db: PaymentsDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<LinkRow | undefined> {
  let query = db
    .selectFrom('payment_links')
    .select(LINK_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** The link page's lookup by id alone: the link id in its public URL is what buyers hold. */
export function findLinkByCapability(db: PaymentsDb, id: string): Promise<OwnedLinkRow | undefined> {
  return db
    .selectFrom('payment_links')
    .select([...LINK_COLUMNS, 'tenant_id', 'mode'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function listLinks(db: PaymentsDb, owner: Owner, filters: { active?: boolean }, page: PageRequest) {
  let base = db.selectFrom('payment_links').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.active !== undefined) base = base.where('active', '=', filters.active);
  return selectPage(db, base, base.select(LINK_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

export function updateLink(db: PaymentsDb, owner: Owner, id: string, changes: Omit<Updateable<PaymentLinksTable>, 'use_count'>): Promise<LinkRow> {
  return db
    .updateTable('payment_links')
    .set(changes)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .returning(LINK_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Counts one use, unless the link is used up; false when it is. */
export async function reserveLinkUse(db: PaymentsDb, owner: Owner, id: string): Promise<boolean> {
  const row = await db
    .updateTable('payment_links')
    .set((eb) => ({ use_count: eb('use_count', '+', 1) }))
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .where((eb) => eb.or([eb('max_uses', 'is', null), eb('use_count', '<', eb.ref('max_uses'))]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Gives back a use reserved for a payment that did not go through. */
export async function releaseLinkUse(db: PaymentsDb, owner: Owner, id: string): Promise<void> {
  await db
    .updateTable('payment_links')
    .set((eb) => ({ use_count: eb('use_count', '-', 1) }))
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .where('use_count', '>', 0)
    .execute();
}
