import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import { addMilliseconds, type Clock, DAY_MS, HOUR_MS, SECOND_MS } from '../../lib/clock.js';
import { groupBy } from '../../lib/group.js';
import { newId } from '../../lib/ids.js';
import { open } from '../../lib/secret-box.js';
import { eventJson, type EventLog, type EventRow } from '../../platform/events/event-log.js';
import type { BackgroundWorker } from '../../platform/jobs/runner.js';
import { OutboundRequestError, type OutboundHttp } from '../../platform/outbound/http.js';
import { subscribesTo } from './event-filter.js';
import * as repository from './repository.js';
import type { ClaimedDelivery, EndpointRow, WebhooksDb } from './repository.js';
import { DISABLE_AFTER_FAILING_MS, nextRetryDelay } from './retry-schedule.js';
import { RESPONSE_BODY_BYTES } from './schemas.js';
import { signedHeaders } from './signing.js';

/** A reply within this long, 2xx, is a success. */
export const DELIVERY_TIMEOUT_MS = 10 * SECOND_MS;
/** How long a claimed attempt belongs to its process before another may take it over. */
const LEASE_MS = 60 * SECOND_MS;
const POLL_INTERVAL_MS = SECOND_MS;
/** Events recorded in a burst are looked at together: at most one look per this long after a record. */
const NUDGE_INTERVAL_MS = 50;
const FAN_OUT_BATCH = 100;
/** Larger replies are cut off and the attempt fails: receivers should answer briefly. */
const MAX_RESPONSE_BYTES = 256 * 1024;
const RETENTION_MS = 30 * DAY_MS;
const USER_AGENT = 'business-platform-webhooks/1';

export interface DispatcherOptions {
  db: Db;
  clock: Clock;
  events: EventLog;
  outbound: OutboundHttp;
  secretsKey: Buffer;
  /** Attempts sent at once by this process; more wait in the table. */
  maxInFlight?: number;
  onError?: (error: unknown) => void;
  random?: () => number;
}

export function sealingContext(owner: Owner, endpointId: string): string {
  return `webhooks:${owner.tenantId}:${owner.mode}:${endpointId}`;
}

/**
 * Delivers events to webhook endpoints in the background. Two steps, each safe to run on
 * several processes at once:
 * - fan-out: events not yet dispatched are locked (SKIP LOCKED), one delivery row is written
 *   per matching enabled endpoint of the event's tenant and mode, and they are marked
 *   dispatched, all in one transaction;
 * - attempts: due deliveries are claimed with a lease (SKIP LOCKED again), sent at most
 *   `maxInFlight` at a time, and each outcome recorded with the next retry time.
 * The API never waits for either: records only nudge the loop.
 */
export class WebhookDispatcher implements BackgroundWorker {
  readonly #db: Db;
  readonly #webhooks: WebhooksDb;
  readonly #clock: Clock;
  readonly #events: EventLog;
  readonly #outbound: OutboundHttp;
  readonly #secretsKey: Buffer;
  readonly #maxInFlight: number;
  readonly #onError: (error: unknown) => void;
  readonly #random: () => number;
  readonly #inFlight = new Set<Promise<void>>();
  /** Runs the loop outside any request's context: a request transaction must never be joined. */
  readonly #detached = AsyncLocalStorage.snapshot();
  #stopped = true;
  #timer: NodeJS.Timeout | undefined;
  /** When the timer fires (epoch ms). */
  #timerAt = 0;
  #lastTickAt = 0;
  #ticking: Promise<void> | undefined;
  #tickAgain = false;
  #claiming = false;
  #lastSweep = 0;

  constructor(options: DispatcherOptions) {
    this.#db = options.db;
    this.#webhooks = repository.webhooksDb(options.db);
    this.#clock = options.clock;
    this.#events = options.events;
    this.#outbound = options.outbound;
    this.#secretsKey = options.secretsKey;
    this.#maxInFlight = options.maxInFlight ?? 16;
    this.#onError = options.onError ?? (() => {});
    this.#random = options.random ?? Math.random;
    options.events.onRecorded(() => this.#nudge());
  }

  start(): void {
    this.#stopped = false;
    this.wake();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#ticking;
    await Promise.allSettled([...this.#inFlight]);
  }

  /** Looks for work now rather than at the next poll (an attempt ended, a delivery was made due). */
  wake(): void {
    this.#scheduleTick(0);
  }

  /** An event was recorded: look soon, but under a burst of writes at most once per NUDGE_INTERVAL_MS. */
  #nudge(): void {
    this.#scheduleTick(Math.max(0, this.#lastTickAt + NUDGE_INTERVAL_MS - Date.now()));
  }

  /** Runs the next tick in `delayMs`, unless one is already due sooner. */
  #scheduleTick(delayMs: number): void {
    if (this.#stopped) return;
    const at = Date.now() + delayMs;
    if (this.#timer && this.#timerAt <= at) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#detached(() => void this.#tick());
    }, delayMs).unref();
  }

  /** Dispatches every recorded event and sends every due attempt, waiting for all of them. */
  async runDue(): Promise<void> {
    for (;;) {
      await this.fanOut();
      const started = await this.#startDue();
      if (started === 0 && this.#inFlight.size === 0) return;
      await Promise.allSettled([...this.#inFlight]);
    }
  }

  async #tick(): Promise<void> {
    if (this.#ticking) {
      this.#tickAgain = true;
      return;
    }
    this.#ticking = (async () => {
      do {
        this.#lastTickAt = Date.now();
        this.#tickAgain = false;
        try {
          await this.#sweepNowAndThen();
          await this.fanOut();
          await this.#startDue();
        } catch (error) {
          this.#onError(error);
        }
      } while (this.#tickAgain && !this.#stopped);
    })();
    await this.#ticking;
    this.#ticking = undefined;
    this.#scheduleTick(POLL_INTERVAL_MS);
  }

  /** Writes the deliveries of every event not yet dispatched; returns how many events it dispatched. */
  async fanOut(): Promise<number> {
    let dispatched = 0;
    for (;;) {
      const batch = await this.#db.transaction().execute(async (tx) => {
        const events = await this.#events.claimUndispatched(tx, FAN_OUT_BATCH);
        const webhooks = repository.webhooksDb(tx);
        for (const ownerEvents of groupBy(events, (event) => `${event.tenant_id}:${event.mode}`).values()) {
          const owner = { tenantId: ownerEvents[0]!.tenant_id, mode: ownerEvents[0]!.mode };
          const endpoints = await repository.enabledEndpoints(webhooks, owner);
          await repository.insertDeliveries(webhooks, owner, deliveriesFor(ownerEvents, endpoints, this.#clock.now()));
        }
        await this.#events.markDispatched(
          tx,
          events.map((event) => event.id),
        );
        return events.length;
      });
      dispatched += batch;
      if (batch < FAN_OUT_BATCH) return dispatched;
    }
  }

  async #startDue(): Promise<number> {
    const free = this.#maxInFlight - this.#inFlight.size;
    if (free <= 0 || this.#claiming) return 0;
    this.#claiming = true;
    try {
      const now = this.#clock.now();
      const claimed = await repository.claimDue(this.#db, now, free, addMilliseconds(now, LEASE_MS));
      if (claimed.length === 0) return 0;
      // What the attempts need, in two queries for the whole batch.
      const [endpoints, events] = await Promise.all([
        repository.endpointsByIds(
          this.#webhooks,
          claimed.map((delivery) => delivery.endpoint_id),
        ),
        this.#events.findByIds(claimed.map((delivery) => delivery.event_id)),
      ]);
      const endpointById = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]));
      const eventById = new Map(events.map((event) => [event.id, event]));
      for (const delivery of claimed) {
        const attempt: Promise<void> = this.#attempt(delivery, endpointById.get(delivery.endpoint_id), eventById.get(delivery.event_id))
          .catch((error: unknown) => this.#onError(error))
          .finally(() => {
            this.#inFlight.delete(attempt);
            this.wake();
          });
        this.#inFlight.add(attempt);
      }
      return claimed.length;
    } finally {
      this.#claiming = false;
    }
  }

  async #attempt(delivery: ClaimedDelivery, endpoint: EndpointRow | undefined, event: EventRow | undefined): Promise<void> {
    const owner: Owner = { tenantId: delivery.tenant_id, mode: delivery.mode };
    if (!endpoint || !event || endpoint.status === 'disabled') {
      await repository.abandonDelivery(this.#webhooks, delivery, this.#clock.now());
      return;
    }
    const attemptedAt = this.#clock.now();
    const outcome = await this.#send(endpoint, event, owner, attemptedAt);
    await this.#record(delivery, attemptedAt, outcome);
  }

  async #send(endpoint: EndpointRow, event: EventRow, owner: Owner, attemptedAt: Date): Promise<AttemptOutcome> {
    const body = eventJson(event);
    // The timestamp is the real time of sending: receivers check it against their own clocks.
    const headers = signedHeaders(this.#liveSecrets(endpoint, owner, attemptedAt), event.id, new Date(), body);
    const started = performance.now();
    try {
      const response = await this.#outbound.request(endpoint.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers },
        body,
        maxRedirects: 0,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      const succeeded = response.status >= 200 && response.status < 300;
      return {
        succeeded,
        status_code: response.status,
        duration_ms: elapsedSince(started),
        error: succeeded ? null : `The receiver answered ${response.status}; only a 2xx reply counts as received.`,
        response_body: firstBytes(response.body, RESPONSE_BODY_BYTES),
      };
    } catch (error) {
      return { succeeded: false, status_code: null, duration_ms: elapsedSince(started), error: describeFailure(error), response_body: null };
    }
  }

  /** The current secret, and the previous one while its overlap lasts. */
  #liveSecrets(endpoint: EndpointRow, owner: Owner, now: Date): string[] {
    const context = sealingContext(owner, endpoint.id);
    const secrets = [open(this.#secretsKey, endpoint.secret_sealed, context).toString('utf8')];
    if (endpoint.previous_secret_sealed && endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > now) {
      secrets.push(open(this.#secretsKey, endpoint.previous_secret_sealed, context).toString('utf8'));
    }
    return secrets;
  }

  async #record(delivery: ClaimedDelivery, attemptedAt: Date, outcome: AttemptOutcome): Promise<void> {
    const scheduledAttempts = delivery.scheduled_attempts + (delivery.manual_retry ? 0 : 1);
    const next = outcome.succeeded ? null : this.#nextAttemptAt(delivery, scheduledAttempts, attemptedAt);
    await repository.recordAttempt(this.#db, {
      delivery,
      attempt: {
        id: newId(),
        attempted_at: attemptedAt,
        status_code: outcome.status_code,
        duration_ms: outcome.duration_ms,
        error: outcome.error,
        response_body: outcome.response_body,
        manual: delivery.manual_retry,
      },
      next: { status: outcome.succeeded ? 'succeeded' : next ? 'pending' : 'failed', scheduled_attempts: scheduledAttempts, next_attempt_at: next },
      succeeded: outcome.succeeded,
      disableIfFailingSince: addMilliseconds(attemptedAt, -DISABLE_AFTER_FAILING_MS),
      now: this.#clock.now(),
    });
  }

  /** After a failed scheduled attempt, the schedule's next retry; after a failed manual one, the retry it jumped ahead of. */
  #nextAttemptAt(delivery: ClaimedDelivery, scheduledAttempts: number, attemptedAt: Date): Date | null {
    if (delivery.manual_retry) return delivery.resume_at;
    const delay = nextRetryDelay(scheduledAttempts, this.#random);
    return delay === undefined ? null : addMilliseconds(attemptedAt, delay);
  }

  async #sweepNowAndThen(): Promise<void> {
    const now = this.#clock.now();
    if (now.getTime() - this.#lastSweep < HOUR_MS) return;
    this.#lastSweep = now.getTime();
    await repository.deleteDeliveriesBefore(this.#webhooks, addMilliseconds(now, -RETENTION_MS));
  }
}

interface AttemptOutcome {
  succeeded: boolean;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
}

function deliveriesFor(events: readonly EventRow[], endpoints: ReadonlyArray<Pick<EndpointRow, 'id' | 'enabled_events'>>, now: Date) {
  return events.flatMap((event) =>
    endpoints
      .filter((endpoint) => subscribesTo(endpoint.enabled_events, event.type))
      .map((endpoint) => ({
        id: newId(),
        endpoint_id: endpoint.id,
        event_id: event.id,
        event_type: event.type,
        status: 'pending' as const,
        next_attempt_at: now,
        locked_until: null,
        last_attempt_at: null,
        resume_at: null,
        created_at: now,
        updated_at: now,
      })),
  );
}

function elapsedSince(started: number): number {
  return Math.round(performance.now() - started);
}

/** The first `bytes` bytes as text, never splitting a character. */
export function firstBytes(body: Buffer, bytes: number): string {
  let text = body.subarray(0, bytes).toString('utf8');
  if (body.length > bytes) text = text.replace(/\uFFFD$/, '');
  while (Buffer.byteLength(text) > bytes) text = text.slice(0, -1);
  return text;
}

function describeFailure(error: unknown): string {
  if (error instanceof OutboundRequestError) return `${error.reason}: ${error.message}`.slice(0, 500);
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `timeout: no reply within ${DELIVERY_TIMEOUT_MS / 1000} s.`;
  return 'network: the request failed.';
}
