import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import { addMilliseconds, type Clock, DAY_MS, MINUTE_MS, SECOND_MS } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import { AppError } from '../../platform/errors/app-error.js';
import type { EventLog, EventRow } from '../../platform/events/event-log.js';
import type { BackgroundWorker } from '../../platform/jobs/runner.js';
import type { SaleInput } from './conversions.js';
import * as repository from './repository.js';
import type { AffiliatesDb } from './repository.js';
import type { ConversionView } from './schemas.js';
import type { ConversionSource } from './tables.js';

/** The metadata key (checkout sessions) that carries the referral id the landing page was handed. */
export const REFERRAL_METADATA_KEY = 'affiliate_referral_id';
/**
 * The platform events that are sales: a paid checkout session, a subscription's first paid period
 * (started active, or a trial that ended) and each renewal.
 */
export const SALE_EVENT_TYPES = [
  'payments.checkout_session.completed',
  'catalog.subscription.created',
  'catalog.subscription.trial_ended',
  'catalog.subscription.renewed',
] as const;

/** A refund of a checkout session: it voids the session's commission once the session is refunded in full. */
export const REFUND_EVENT_TYPE = 'payments.refund.created';
const READ_EVENT_TYPES = [...SALE_EVENT_TYPES, REFUND_EVENT_TYPE] as const;

/** Events committed this long after a later one (a slow transaction) are still found: the reader looks back this far. */
const LOOK_BACK_MS = 5 * MINUTE_MS;
const BATCH = 200;
const POLL_INTERVAL_MS = SECOND_MS;
const NUDGE_DELAY_MS = 50;
/** Seen events are remembered a day longer than the reader looks back (30 days, as long as the event log keeps events). */
const SEEN_RETENTION_MS = 31 * DAY_MS;

type Record = (tx: AffiliatesDb, owner: Owner, now: Date, sale: SaleInput) => Promise<ConversionView | undefined>;
type VoidRefunded = (tx: AffiliatesDb, owner: Owner, now: Date, source: ConversionSource, externalId: string) => Promise<ConversionView | undefined>;

/**
 * The sale a refund event takes back, when it completed a full refund of its checkout session
 * (the refund carries the session's amounts after it); undefined for a partial refund.
 */
export function refundedSaleOf(event: EventRow): { source: ConversionSource; externalId: string } | undefined {
  const object = JSON.parse(event.object_json) as { [field: string]: unknown };
  const total = Number(object.session_amount_total_cents);
  const refunded = Number(object.session_amount_refunded_cents);
  if (typeof object.checkout_session_id !== 'string' || !Number.isSafeInteger(total) || !(refunded >= total)) return undefined;
  return { source: 'payments', externalId: `checkout_session:${object.checkout_session_id}` };
}

/** The sale an event reports, when it names a referral; undefined when it credits nobody. */
export async function saleOf(tx: AffiliatesDb, event: EventRow): Promise<SaleInput | undefined> {
  const object = JSON.parse(event.object_json) as { [field: string]: unknown };
  const owner: Owner = { tenantId: event.tenant_id, mode: event.mode };
  if (event.type === 'payments.checkout_session.completed') {
    const metadata = (object.metadata ?? {}) as { [key: string]: unknown };
    const referralId = metadata[REFERRAL_METADATA_KEY];
    if (typeof referralId !== 'string' || !isUuid(referralId)) return undefined;
    return {
      source: 'payments',
      referralId: referralId.toLowerCase(),
      amountCents: Number(object.amount_total_cents),
      currency: String(object.currency),
      externalId: `checkout_session:${String(object.id)}`,
    };
  }
  // A subscription: its first paid period (created active, or the end of its trial) and each renewal,
  // credited to the partner its contact was referred by. A trialing start is no sale: its trial_ended is period 1.
  if (event.type === 'catalog.subscription.created' && object.status !== 'active') return undefined;
  const contactId = object.contact_id;
  if (typeof contactId !== 'string' || !isUuid(contactId)) return undefined;
  const referral = await repository.latestReferralOfContact(tx, owner, contactId);
  if (!referral) return undefined;
  const amount = Number(object.unit_price_cents) * Number(object.quantity);
  return {
    source: 'catalog',
    referralId: referral.id,
    amountCents: amount,
    currency: String(object.currency),
    // One event per period, also when a late run catches up several with the same object: the event is the period.
    externalId: `event:${event.id}`,
    subscriptionId: String(object.id),
  };
}

/**
 * Turns sales of the payments and catalog services into conversions, and full refunds of
 * checkout sessions into voided commissions, by reading the platform event log, never their tables. Several processes may run it: each event is handled once,
 * guarded by its row in affiliates_seen_events, inserted in the transaction of its conversion.
 * Reading starts at the newest event handled, less a look-back that catches events committed late.
 */
export class PlatformSalesReader implements BackgroundWorker {
  readonly #tables: AffiliatesDb;
  readonly #events: EventLog;
  readonly #clock: Clock;
  readonly #record: Record;
  readonly #voidRefunded: VoidRefunded;
  readonly #onError: (error: unknown) => void;
  readonly #detached = AsyncLocalStorage.snapshot();
  #stopped = true;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(options: { db: Db; events: EventLog; clock: Clock; record: Record; voidRefunded: VoidRefunded; onError: (error: unknown) => void }) {
    this.#tables = repository.affiliatesDb(options.db);
    this.#events = options.events;
    this.#clock = options.clock;
    this.#record = options.record;
    this.#voidRefunded = options.voidRefunded;
    this.#onError = options.onError;
    options.events.onRecorded(() => this.#schedule(NUDGE_DELAY_MS));
  }

  start(): void {
    this.#stopped = false;
    this.#schedule(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  #schedule(delayMs: number): void {
    if (this.#stopped || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#detached(() => {
        void this.runDue().finally(() => this.#schedule(POLL_INTERVAL_MS));
      });
    }, delayMs).unref();
  }

  /** Reads every sale event not yet handled; errors are reported, never thrown. */
  runDue(): Promise<void> {
    this.#running ??= this.#detached(() => this.#read())
      .catch((error: unknown) => this.#onError(error))
      .finally(() => (this.#running = undefined));
    return this.#running;
  }

  async #read(): Promise<void> {
    const cursor = await repository.lastSeenEventAt(this.#tables);
    // Never start after the clock: a clock moved back (tests; a corrected server clock) records events before the cursor.
    const now = this.#clock.now();
    const from = cursor && cursor.getTime() > now.getTime() ? now : cursor;
    // Events older than the seen rows kept are never read again (the event log keeps 30 days, the seen rows 31).
    const oldest = addMilliseconds(now, -SEEN_RETENTION_MS + DAY_MS);
    const start = from ? addMilliseconds(from, -LOOK_BACK_MS) : oldest;
    let after = { createdAt: start.getTime() < oldest.getTime() ? oldest : start, id: '00000000-0000-0000-0000-000000000000' };
    for (;;) {
      const batch = await this.#events.readAfter(READ_EVENT_TYPES, after, BATCH);
      for (const event of batch) await this.#handle(event);
      if (batch.length < BATCH) break;
      const last = batch[batch.length - 1]!;
      after = { createdAt: last.created_at, id: last.id };
    }
    await repository.forgetSeenBefore(this.#tables, addMilliseconds(this.#clock.now(), -SEEN_RETENTION_MS));
  }

  async #handle(event: EventRow): Promise<void> {
    const owner: Owner = { tenantId: event.tenant_id, mode: event.mode };
    if (await repository.wasSeen(this.#tables, owner, event.id)) return;
    await this.#tables.transaction().execute(async (tx) => {
      if (!(await repository.markSeen(tx, owner, event.id, event.created_at, this.#clock.now()))) return;
      if (event.type === REFUND_EVENT_TYPE) {
        // A partial refund leaves the commission; a full one voids it unless it was paid already.
        const refunded = refundedSaleOf(event);
        if (refunded) await this.#voidRefunded(tx, owner, this.#clock.now(), refunded.source, refunded.externalId);
        return;
      }
      const sale = await saleOf(tx, event);
      if (!sale || !Number.isSafeInteger(sale.amountCents)) return;
      try {
        await this.#record(tx, owner, event.created_at, sale);
      } catch (error) {
        // A sale that credits nobody (unknown or expired referral, other currency) is only marked seen.
        if (!(error instanceof AppError)) throw error;
      }
    });
  }
}
