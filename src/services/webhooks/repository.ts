import { sql, type Kysely, type Updateable } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { ownedTables, type OwnedInsert, type OwnedRow, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import type { Mode } from '../../db/types.js';
import type { DeliveryStatus, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable, WebhookTables } from './tables.js';

export type WebhooksDb = Kysely<WebhookTables>;
export type EndpointRow = OwnedRow<WebhookEndpointsTable>;
export type DeliveryRow = OwnedRow<WebhookDeliveriesTable>;
export type AttemptRow = Omit<OwnedRow<WebhookAttemptsTable>, 'id'>;

export function webhooksDb(db: Db): WebhooksDb {
  return serviceDb(db);
}

const owned = ownedTables<WebhookTables>();
const endpoints = owned('webhook_endpoints');
const deliveries = owned('webhook_deliveries');
const attempts = owned('webhook_attempts');

const ENDPOINT_COLUMNS = [
  'id',
  'url',
  'description',
  'enabled_events',
  'status',
  'disabled_reason',
  'secret_sealed',
  'previous_secret_sealed',
  'previous_secret_expires_at',
  'failing_since',
  'last_success_at',
  'created_at',
  'updated_at',
] as const;
const DELIVERY_COLUMNS = [
  'id',
  'endpoint_id',
  'event_id',
  'event_type',
  'status',
  'attempt_count',
  'scheduled_attempts',
  'next_attempt_at',
  'manual_retry',
  'resume_at',
  'locked_until',
  'last_attempt_at',
  'created_at',
  'updated_at',
] as const;
const ATTEMPT_COLUMNS = ['delivery_id', 'attempted_at', 'status_code', 'duration_ms', 'error', 'response_body', 'manual'] as const;

// Endpoints

export function insertEndpoint(db: WebhooksDb, owner: Owner, row: OwnedInsert<WebhookEndpointsTable>): Promise<EndpointRow> {
  return endpoints.insert(db, owner, row).returning(ENDPOINT_COLUMNS).executeTakeFirstOrThrow();
}

const endpointById = endpoints.statement((from, values: { id: string }) => from.select(ENDPOINT_COLUMNS).where('id', '=', values.id));
const endpointByIdForUpdate = endpoints.statement((from, values: { id: string }) => from.select(ENDPOINT_COLUMNS).where('id', '=', values.id).forUpdate());

export function findEndpoint(db: WebhooksDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<EndpointRow | undefined> {
  return (options.forUpdate ? endpointByIdForUpdate : endpointById).first(db, owner, { id });
}

const endpointList = endpoints.list<Record<string, never>, EndpointRow>({
  filters: {},
  select: (from) => from.select(ENDPOINT_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listEndpoints(db: WebhooksDb, owner: Owner, page: PageRequest) {
  return endpointList.page(db, owner, {}, page);
}

export async function countEndpoints(db: WebhooksDb, owner: Owner): Promise<number> {
  const row = await endpoints
    .select(db, owner)
    .select((eb) => eb.fn.countAll<string>().as('total'))
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

/** The enabled endpoints of one tenant and mode: those an event of theirs may go to. */
export function enabledEndpoints(db: WebhooksDb, owner: Owner): Promise<Array<Pick<EndpointRow, 'id' | 'enabled_events'>>> {
  return endpoints.select(db, owner).select(['id', 'enabled_events']).where('status', '=', 'enabled').execute();
}

export function updateEndpoint(db: WebhooksDb, owner: Owner, id: string, changes: Updateable<WebhookEndpointsTable>): Promise<EndpointRow> {
  return endpoints.update(db, owner).set(changes).where('id', '=', id).returning(ENDPOINT_COLUMNS).executeTakeFirstOrThrow();
}

export async function deleteEndpoint(db: WebhooksDb, owner: Owner, id: string): Promise<boolean> {
  const result = await endpoints.delete(db, owner).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

// Deliveries

export async function insertDeliveries(db: WebhooksDb, owner: Owner, rows: ReadonlyArray<OwnedInsert<WebhookDeliveriesTable>>): Promise<DeliveryRow[]> {
  if (rows.length === 0) return [];
  return deliveries
    .insert(db, owner, rows)
    .onConflict((conflict) => conflict.columns(['endpoint_id', 'event_id']).doNothing())
    .returning(DELIVERY_COLUMNS)
    .execute();
}

const deliveryById = deliveries.statement((from, values: { endpointId: string; id: string }) =>
  from.select(DELIVERY_COLUMNS).where('endpoint_id', '=', values.endpointId).where('id', '=', values.id),
);

export function findDelivery(db: WebhooksDb, owner: Owner, endpointId: string, id: string): Promise<DeliveryRow | undefined> {
  return deliveryById.first(db, owner, { endpointId, id });
}

const deliveryList = deliveries.list<{ endpoint_id: string; status?: DeliveryStatus; event_id?: string }, DeliveryRow>({
  filters: {
    endpoint_id: (eb, endpointId) => eb('endpoint_id', '=', endpointId),
    status: (eb, status) => eb('status', '=', status),
    event_id: (eb, eventId) => eb('event_id', '=', eventId),
  },
  select: (from) => from.select(DELIVERY_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listDeliveries(db: WebhooksDb, owner: Owner, filters: { endpoint_id: string; status?: DeliveryStatus; event_id?: string }, page: PageRequest) {
  return deliveryList.page(db, owner, filters, page);
}

/** Makes a manual attempt due now, remembering the scheduled retry (if any) it jumps ahead of. */
export function scheduleManualRetry(db: WebhooksDb, owner: Owner, id: string, now: Date): Promise<DeliveryRow> {
  return deliveries
    .update(db, owner)
    .set((eb) => ({
      resume_at: eb.case().when('status', '=', 'pending').then(eb.fn.coalesce('resume_at', 'next_attempt_at')).else(null).end(),
      status: 'pending',
      next_attempt_at: now,
      manual_retry: true,
      updated_at: now,
    }))
    .where('id', '=', id)
    .returning(DELIVERY_COLUMNS)
    .executeTakeFirstOrThrow();
}

export function attemptsOf(db: WebhooksDb, owner: Owner, deliveryIds: readonly string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return Promise.resolve([]);
  return attempts.select(db, owner).select(ATTEMPT_COLUMNS).where('delivery_id', 'in', deliveryIds).orderBy('attempted_at').orderBy('id').execute();
}

// The dispatcher's queries, across tenants.

export interface ClaimedDelivery {
  id: string;
  tenant_id: string;
  mode: Mode;
  endpoint_id: string;
  event_id: string;
  attempt_count: number;
  scheduled_attempts: number;
  manual_retry: boolean;
  resume_at: Date | null;
}

/**
 * Locks up to `limit` due deliveries for `leaseMs`: other processes skip them until the lease
 * lapses (a process that died mid-attempt), so one attempt is sent by one process.
 */
export async function claimDue(db: Db, now: Date, limit: number, leaseUntil: Date): Promise<ClaimedDelivery[]> {
  const result = await sql<ClaimedDelivery>`
    update webhook_deliveries
       set locked_until = ${leaseUntil}
     where id in (
       select id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= ${now} and (locked_until is null or locked_until < ${now})
        order by next_attempt_at, id
        limit ${limit}
        for update skip locked)
    returning id, tenant_id, mode, endpoint_id, event_id, attempt_count, scheduled_attempts, manual_retry, resume_at`.execute(db);
  return result.rows;
}

/** The endpoints of claimed deliveries, whoever owns them. */
export async function endpointsByIds(db: WebhooksDb, ids: readonly string[]): Promise<Array<EndpointRow & { tenant_id: string; mode: Mode }>> {
  if (ids.length === 0) return [];
  return endpoints
    .acrossOwners(db)
    .select(ENDPOINT_COLUMNS)
    .where('id', 'in', [...new Set(ids)])
    .execute();
}

export async function deleteDeliveriesBefore(db: WebhooksDb, before: Date): Promise<number> {
  const result = await deliveries.deleteAcrossOwners(db).where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export interface AttemptRecord {
  delivery: ClaimedDelivery;
  attempt: Omit<OwnedInsert<WebhookAttemptsTable>, 'delivery_id'>;
  /** The delivery's state after the attempt. */
  next: { status: DeliveryStatus; scheduled_attempts: number; next_attempt_at: Date | null };
  succeeded: boolean;
  /** An enabled endpoint failing since this instant or earlier is disabled. */
  disableIfFailingSince: Date;
  now: Date;
}

/**
 * Records an attempt in one statement: the attempt row, the delivery's next state, and the
 * endpoint's failure record. On success the endpoint row is written only when that changes
 * something (a failure record to clear, a success time a minute old), so a busy endpoint's
 * concurrent attempts do not queue on its lock. After three days of failures without a single
 * success, an enabled endpoint is disabled (`failing`).
 */
export async function recordAttempt(db: Db, record: AttemptRecord): Promise<void> {
  const { delivery, attempt, next, now } = record;
  const at = attempt.attempted_at;
  const endpointUpdate = record.succeeded
    ? sql`update webhook_endpoints set last_success_at = ${at}, failing_since = null
           where id = ${delivery.endpoint_id} and tenant_id = ${delivery.tenant_id} and mode = ${delivery.mode}
             and (failing_since is not null or last_success_at is null or last_success_at < ${new Date(at.getTime() - 60_000)})`
    : sql`update webhook_endpoints set
             failing_since = coalesce(failing_since, ${at}),
             status = case when status = 'enabled' and coalesce(failing_since, ${at}) <= ${record.disableIfFailingSince} then 'disabled' else status end,
             disabled_reason = case when status = 'enabled' and coalesce(failing_since, ${at}) <= ${record.disableIfFailingSince} then 'failing' else disabled_reason end,
             updated_at = case when status = 'enabled' and coalesce(failing_since, ${at}) <= ${record.disableIfFailingSince}
                               then greatest(${at}, updated_at + interval '1 millisecond') else updated_at end
           where id = ${delivery.endpoint_id} and tenant_id = ${delivery.tenant_id} and mode = ${delivery.mode}`;
  await sql`
    with attempt as (
      insert into webhook_attempts (id, tenant_id, mode, delivery_id, attempted_at, status_code, duration_ms, error, response_body, manual)
      values (${attempt.id}, ${delivery.tenant_id}, ${delivery.mode}, ${delivery.id}, ${at}, ${attempt.status_code}, ${attempt.duration_ms},
              ${attempt.error}, ${attempt.response_body}, ${attempt.manual})
    ), delivery as (
      update webhook_deliveries
         set status = ${next.status}, attempt_count = attempt_count + 1, scheduled_attempts = ${next.scheduled_attempts},
             next_attempt_at = ${next.next_attempt_at}, manual_retry = false, resume_at = null, locked_until = null,
             last_attempt_at = ${at}, updated_at = ${now}
       where id = ${delivery.id} and tenant_id = ${delivery.tenant_id} and mode = ${delivery.mode}
    )
    ${endpointUpdate}`.execute(db);
}

/** Ends a claimed delivery without an attempt: its endpoint or event is gone, or the endpoint is disabled. */
export async function abandonDelivery(db: WebhooksDb, delivery: ClaimedDelivery, now: Date): Promise<void> {
  await deliveries
    .update(db, { tenantId: delivery.tenant_id, mode: delivery.mode })
    .set({ status: 'failed', next_attempt_at: null, locked_until: null, manual_retry: false, resume_at: null, updated_at: now })
    .where('id', '=', delivery.id)
    .execute();
}
