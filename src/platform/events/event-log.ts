import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { sql, type Kysely } from 'kysely';
import type { TSchema } from 'typebox';
import type { Db } from '../../db/database.js';
import { ownedTables, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import type { Mode, PlatformTables } from '../../db/types.js';
import { addMilliseconds, DAY_MS, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';

/** One kind of event a service reports, as it declares it in its module. */
export interface EventTypeDeclaration {
  /** `<service>.<resource>.<verb>`, the verb in the past tense; a hyphen in the service id is written `_`. */
  type: string;
  description: string;
  /** The schema of `data.object`: the resource's reply schema, so the event carries the resource as its GET returns it. */
  object: TSchema;
}

export interface EventTypeInfo {
  type: string;
  /** The service id, as it appears in URLs (`customer-auth`). */
  service: string;
  description: string;
}

/** An event as the API and webhook deliveries show it. */
export interface PlatformEvent {
  id: string;
  type: string;
  created_at: Date;
  livemode: boolean;
  data: { object: Record<string, unknown> };
}

export interface EventRow {
  id: string;
  tenant_id: string;
  mode: Mode;
  type: string;
  created_at: Date;
  object_json: string;
}

export interface EventFilters {
  type?: string;
  created_after?: string;
  created_before?: string;
}

/** How long events are kept, for clients that catch up on missed deliveries. */
export const EVENT_RETENTION_DAYS = 30;

const TYPE_PATTERN = /^[a-z][a-z_]*\.[a-z][a-z_]*\.[a-z][a-z_]*$/;
const EVENT_COLUMNS = ['id', 'tenant_id', 'mode', 'type', 'created_at', 'object_json'] as const;

const events = ownedTables<PlatformTables>()('events');

const eventList = events.list<{ type?: string; created_after?: string; created_before?: string }, EventRow>({
  filters: {
    type: (eb, type) => eb('type', '=', type),
    created_after: (eb, after) => eb('created_at', '>', sql<Date>`${after}::timestamptz`),
    created_before: (eb, before) => eb('created_at', '<', sql<Date>`${before}::timestamptz`),
  },
  select: (from) => from.select(EVENT_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

const eventById = events.statement((from, values: { id: string }) => from.select(EVENT_COLUMNS).where('id', '=', values.id));

/**
 * The platform's event log, a transactional outbox: a service records an event with the same
 * transaction (or request transaction) as the change it reports, so either both are stored or
 * neither. Delivery (the webhooks service) reads the log afterwards; nothing here calls out.
 */
export class EventLog {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #types = new Map<string, EventTypeInfo & { serialize: (object: unknown) => string }>();
  readonly #listeners: Array<() => void> = [];
  #notifying = false;
  readonly #compile = SerializerSelector()({}, {});

  constructor(options: { db: Db; clock: Clock }) {
    this.#db = options.db;
    this.#clock = options.clock;
  }

  /** Adds a service's event types to the catalogue; each must be named after the service. */
  declare(service: string, declarations: readonly EventTypeDeclaration[]): void {
    const prefix = `${service.replaceAll('-', '_')}.`;
    for (const { type, description, object } of declarations) {
      if (!TYPE_PATTERN.test(type) || !type.startsWith(prefix)) throw new Error(`Event type ${type} must be named ${prefix}<resource>.<verb>.`);
      if (this.#types.has(type)) throw new Error(`Event type ${type} is declared twice.`);
      const serialize = this.#compile({ schema: object, method: 'POST', url: type, httpStatus: '200' }) as (object: unknown) => string;
      this.#types.set(type, { type, service, description, serialize });
    }
  }

  /** Every declared event type, sorted by name. */
  catalogue(): EventTypeInfo[] {
    return [...this.#types.values()].map(({ type, service, description }) => ({ type, service, description })).sort((a, b) => a.type.localeCompare(b.type));
  }

  isDeclared(type: string): boolean {
    return this.#types.has(type);
  }

  /** Called (soon, not at once) after each record: the change may not be committed yet when it runs. */
  onRecorded(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Records an event with `db`, which must be the transaction of the change it reports.
   * `object` is serialised with the type's declared schema, exactly as its GET reply would be.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the transaction of any service, whatever its tables
  async record(db: Kysely<any>, owner: Owner, type: string, object: unknown, options: { dispatched?: boolean } = {}): Promise<EventRow> {
    const declared = this.#types.get(type);
    if (!declared) throw new Error(`Event type ${type} is not declared by any service.`);
    const row: EventRow = { id: newId(), tenant_id: owner.tenantId, mode: owner.mode, type, created_at: this.#clock.now(), object_json: declared.serialize(object) };
    await (db as Db)
      .insertInto('events')
      .values({ ...row, dispatched: options.dispatched ?? false })
      .execute();
    this.#notify();
    return row;
  }

  list(owner: Owner, filters: EventFilters, page: PageRequest): Promise<{ rows: EventRow[]; total: number }> {
    return eventList.page(this.#db, owner, filters, page);
  }

  get(owner: Owner, id: string): Promise<EventRow | undefined> {
    return eventById.first(this.#db, owner, { id });
  }

  /** Events of any owner by id: for delivering them. */
  async findByIds(ids: readonly string[]): Promise<EventRow[]> {
    if (ids.length === 0) return [];
    return this.#db.selectFrom('events').select(EVENT_COLUMNS).where('id', 'in', ids).execute();
  }

  /**
   * Locks up to `limit` events not yet dispatched, oldest first, skipping those another process
   * holds. `db` must be a transaction; mark them with `markDispatched` in the same one.
   */
  async claimUndispatched(db: Db, limit: number): Promise<EventRow[]> {
    return db.selectFrom('events').select(EVENT_COLUMNS).where('dispatched', '=', false).orderBy('created_at').orderBy('id').limit(limit).forUpdate().skipLocked().execute();
  }

  async markDispatched(db: Db, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await db.updateTable('events').set({ dispatched: true }).where('id', 'in', ids).execute();
  }

  /**
   * Events of any owner with one of `types`, oldest first, after the position (`created_at`,
   * `id`) given: for services that react to other services' events (they keep their own cursor
   * and record what they handled, as the event log knows nothing of its readers).
   */
  async readAfter(types: readonly string[], after: { createdAt: Date; id: string }, limit: number): Promise<EventRow[]> {
    if (types.length === 0) return [];
    return this.#db
      .selectFrom('events')
      .select(EVENT_COLUMNS)
      .where('type', 'in', types)
      .where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]))
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  /** Deletes events older than the retention period; returns how many. */
  async sweep(now: Date): Promise<number> {
    const before = addMilliseconds(now, -EVENT_RETENTION_DAYS * DAY_MS);
    const result = await this.#db.deleteFrom('events').where('created_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  #notify(): void {
    // One pending call for a burst of records: under load a timer per event costs more than the event.
    if (this.#listeners.length === 0 || this.#notifying) return;
    this.#notifying = true;
    // After the caller's commit, usually: a listener that looks too early finds the event on its next poll.
    setTimeout(() => {
      this.#notifying = false;
      for (const listener of this.#listeners) listener();
    }, 10).unref();
  }
}

/** The event as the API and webhook bodies show it. */
export function presentEvent(row: EventRow): PlatformEvent {
  return { id: row.id, type: row.type, created_at: row.created_at, livemode: row.mode === 'live', data: { object: JSON.parse(row.object_json) as Record<string, unknown> } };
}

/** The exact JSON body of the event's webhook deliveries; the same bytes on every attempt. */
export function eventJson(row: EventRow): string {
  return `{"id":${JSON.stringify(row.id)},"type":${JSON.stringify(row.type)},"created_at":${JSON.stringify(row.created_at.toISOString())},"livemode":${row.mode === 'live'},"data":{"object":${row.object_json}}}`;
}
