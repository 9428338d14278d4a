import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { ownedTables, type OwnedInsert, type OwnedRow, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import type { Mode } from '../../db/types.js';
import type { PaymentCheckoutSessionsTable, PaymentLinksTable, PaymentRefundsTable, PaymentTables, SessionStatus } from './tables.js';

export type PaymentsDb = Kysely<PaymentTables>;

export function paymentsDb(db: Db): PaymentsDb {
  return serviceDb(db);
}

export type SessionRow = OwnedRow<PaymentCheckoutSessionsTable>;
export type LinkRow = OwnedRow<PaymentLinksTable>;
export type RefundRow = OwnedRow<PaymentRefundsTable>;
/** A session found by its id alone (the hosted page), with the owner it belongs to. */
export type OwnedSessionRow = SessionRow & { tenant_id: string; mode: Mode };
export type OwnedLinkRow = LinkRow & { tenant_id: string; mode: Mode };

const owned = ownedTables<PaymentTables>();
const sessions = owned('payment_checkout_sessions');
const links = owned('payment_links');
const refunds = owned('payment_refunds');

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
  'amount_refunded_cents',
  'created_at',
  'updated_at',
] as const;

const REFUND_COLUMNS = [
  'id',
  'checkout_session_id',
  'amount_cents',
  'currency',
  'status',
  'reason',
  'metadata',
  'payment_intent_id',
  'processor_refund_id',
  'session_amount_total_cents',
  'session_amount_refunded_cents',
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

export function insertSession(db: PaymentsDb, owner: Owner, row: OwnedInsert<PaymentCheckoutSessionsTable>): Promise<SessionRow> {
  return sessions.insert(db, owner, row).returning(SESSION_COLUMNS).executeTakeFirstOrThrow();
}

const sessionById = sessions.statement((from, values: { id: string }) => from.select(SESSION_COLUMNS).where('id', '=', values.id));
const sessionByIdForUpdate = sessions.statement((from, values: { id: string }) => from.select(SESSION_COLUMNS).where('id', '=', values.id).forUpdate());

export function findSession(db: PaymentsDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<SessionRow | undefined> {
  return (options.forUpdate ? sessionByIdForUpdate : sessionById).first(db, owner, { id });
}

/** Adds a refund to the session's amount_refunded_cents; the CHECK keeps it within the amount paid. */
export function addRefundedAmount(db: PaymentsDb, owner: Owner, id: string, amountCents: number, now: Date): Promise<SessionRow> {
  return sessions
    .update(db, owner)
    .set({ amount_refunded_cents: sql<number>`amount_refunded_cents + ${amountCents}`, updated_at: now })
    .where('id', '=', id)
    .returning(SESSION_COLUMNS)
    .executeTakeFirstOrThrow();
}

// Refunds

export function insertRefund(db: PaymentsDb, owner: Owner, row: OwnedInsert<PaymentRefundsTable>): Promise<RefundRow> {
  return refunds.insert(db, owner, row).returning(REFUND_COLUMNS).executeTakeFirstOrThrow();
}

const refundById = refunds.statement((from, values: { id: string }) => from.select(REFUND_COLUMNS).where('id', '=', values.id));

export function findRefund(db: PaymentsDb, owner: Owner, id: string): Promise<RefundRow | undefined> {
  return refundById.first(db, owner, { id });
}

const refundList = refunds.list<{ checkout_session_id?: string }, RefundRow>({
  filters: { checkout_session_id: (eb, sessionId) => eb('checkout_session_id', '=', sessionId) },
  select: (from) => from.select(REFUND_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listRefunds(db: PaymentsDb, owner: Owner, filters: { checkout_session_id?: string }, page: PageRequest) {
  return refundList.page(db, owner, filters, page);
}

/**
 * The one lookup by id alone: the hosted page, where the unguessable session id in the
 * URL is the buyer's capability. It returns the owner, and every later query uses it.
 */
export function findSessionByCapability(db: PaymentsDb, id: string): Promise<OwnedSessionRow | undefined> {
  return sessions.acrossOwners(db).select(SESSION_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/*
 * The `status` filter of the list. An open session past its expiry is expired even before
 * the expiry job has run, so `open` and `expired` compare with the time of the request.
 */
const sessionList = sessions.list<{ openAt?: Date; expiredAt?: Date; status?: SessionStatus; payment_link_id?: string }, SessionRow>({
  filters: {
    openAt: (eb, now) => eb.and([eb('status', '=', 'open'), eb('expires_at', '>', now)]),
    expiredAt: (eb, now) => eb.or([eb('status', '=', 'expired'), eb.and([eb('status', '=', 'open'), eb('expires_at', '<=', now)])]),
    status: (eb, status) => eb('status', '=', status),
    payment_link_id: (eb, linkId) => eb('payment_link_id', '=', linkId),
  },
  select: (from) => from.select(SESSION_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listSessions(db: PaymentsDb, owner: Owner, filters: { status?: SessionStatus; payment_link_id?: string }, now: Date, page: PageRequest) {
  return sessionList.page(
    db,
    owner,
    {
      openAt: filters.status === 'open' ? now : undefined,
      expiredAt: filters.status === 'expired' ? now : undefined,
      status: filters.status === 'complete' ? 'complete' : undefined,
      payment_link_id: filters.payment_link_id,
    },
    page,
  );
}

/**
 * Takes the session for one payment attempt: only an open, unexpired session that no other
 * attempt holds. Returns undefined when another request holds it or its state changed.
 */
export function claimSessionForPayment(db: PaymentsDb, owner: Owner, id: string, now: Date, holdUntil: Date): Promise<SessionRow | undefined> {
  return sessions
    .update(db, owner)
    .set({ processing_until: holdUntil })
    .where('id', '=', id)
    .where('status', '=', 'open')
    .where('expires_at', '>', now)
    .where((eb) => eb.or([eb('processing_until', 'is', null), eb('processing_until', '<=', now)]))
    .returning(SESSION_COLUMNS)
    .executeTakeFirst();
}

export async function setPaymentIntent(db: PaymentsDb, owner: Owner, id: string, paymentIntentId: string): Promise<void> {
  await sessions.update(db, owner).set({ payment_intent_id: paymentIntentId }).where('id', '=', id).execute();
}

/** Ends a payment attempt that did not pay (declined or failed): the session is open again. */
export async function releaseSession(db: PaymentsDb, owner: Owner, id: string): Promise<void> {
  await sessions.update(db, owner).set({ processing_until: null }).where('id', '=', id).where('status', '=', 'open').execute();
}

export interface PaidSession {
  now: Date;
  cardBrand: string;
  cardLast4: string;
  paymentIntentId: string;
}

/** Marks an open session paid; the status condition makes a double submit pay once. */
export function completeSession(db: PaymentsDb, owner: Owner, id: string, paid: PaidSession): Promise<SessionRow | undefined> {
  return sessions
    .update(db, owner)
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
    .where('id', '=', id)
    .where('status', '=', 'open')
    .returning(SESSION_COLUMNS)
    .executeTakeFirst();
}

/** Expires the session if it is still open, due, and not held by a payment attempt. */
export function expireSessionIfDue(db: PaymentsDb, owner: Owner, id: string, now: Date): Promise<SessionRow | undefined> {
  return sessions
    .update(db, owner)
    .set({ status: 'expired', updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'open')
    .where('expires_at', '<=', now)
    .where((eb) => eb.or([eb('processing_until', 'is', null), eb('processing_until', '<=', now)]))
    .returning(SESSION_COLUMNS)
    .executeTakeFirst();
}

// Payment links

export function insertLink(db: PaymentsDb, owner: Owner, row: OwnedInsert<PaymentLinksTable>): Promise<LinkRow> {
  return links.insert(db, owner, row).returning(LINK_COLUMNS).executeTakeFirstOrThrow();
}

const linkById = links.statement((from, values: { id: string }) => from.select(LINK_COLUMNS).where('id', '=', values.id));
const linkByIdForUpdate = links.statement((from, values: { id: string }) => from.select(LINK_COLUMNS).where('id', '=', values.id).forUpdate());

export function findLink(db: PaymentsDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<LinkRow | undefined> {
  return (options.forUpdate ? linkByIdForUpdate : linkById).first(db, owner, { id });
}

/** The link page's lookup by id alone: the link id in its public URL is what buyers hold. */
export function findLinkByCapability(db: PaymentsDb, id: string): Promise<OwnedLinkRow | undefined> {
  return links.acrossOwners(db).select(LINK_COLUMNS).where('id', '=', id).executeTakeFirst();
}

const linkList = links.list<{ active?: boolean }, LinkRow>({
  filters: { active: (eb, active) => eb('active', '=', active) },
  select: (from) => from.select(LINK_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listLinks(db: PaymentsDb, owner: Owner, filters: { active?: boolean }, page: PageRequest) {
  return linkList.page(db, owner, filters, page);
}

export function updateLink(db: PaymentsDb, owner: Owner, id: string, changes: Partial<Omit<OwnedInsert<PaymentLinksTable>, 'use_count'>>): Promise<LinkRow> {
  return links.update(db, owner).set(changes).where('id', '=', id).returning(LINK_COLUMNS).executeTakeFirstOrThrow();
}

/** Counts one use, unless the link is used up; false when it is. */
export async function reserveLinkUse(db: PaymentsDb, owner: Owner, id: string): Promise<boolean> {
  const row = await links
    .update(db, owner)
    .set((eb) => ({ use_count: eb('use_count', '+', 1) }))
    .where('id', '=', id)
    .where((eb) => eb.or([eb('max_uses', 'is', null), eb('use_count', '<', eb.ref('max_uses'))]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Gives back a use reserved for a payment that did not go through. */
export async function releaseLinkUse(db: PaymentsDb, owner: Owner, id: string): Promise<void> {
  await links
    .update(db, owner)
    .set((eb) => ({ use_count: eb('use_count', '-', 1) }))
    .where('id', '=', id)
    .where('use_count', '>', 0)
    .execute();
}
