import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { addMilliseconds, DAY_MS } from '../../lib/clock.js';
import { groupBy } from '../../lib/group.js';
import { newId } from '../../lib/ids.js';
import { seal } from '../../lib/secret-box.js';
import { SERVICE_IDS } from '../../platform/auth/scopes.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound, validationFailed } from '../../platform/errors/app-error.js';
import { presentEvent, type EventFilters, type EventLog } from '../../platform/events/event-log.js';
import { sealingContext } from './dispatcher.js';
import * as repository from './repository.js';
import type { AttemptRow, DeliveryRow, EndpointRow, WebhooksDb } from './repository.js';
import { MAX_ATTEMPTS_SHOWN, type CreateEndpointInput, type UpdateEndpointInput, type WebhookDeliveryView, type WebhookEndpointView } from './schemas.js';
import { newSigningSecret } from './signing.js';
import type { DeliveryStatus } from './tables.js';

/** Endpoints per tenant and mode (Stripe allows 16). */
export const MAX_ENDPOINTS = 16;
/** After a rotation, the previous secret keeps signing this long, so receivers can switch over. */
export const SECRET_OVERLAP_MS = DAY_MS;
export const PING_EVENT = 'webhooks.endpoint.pinged';

export interface WebhooksServiceDeps {
  db: Db;
  events: EventLog;
  secretsKey: Buffer;
  /** Nudges the dispatcher: a delivery is due now. */
  wake: () => void;
}

/** Webhook endpoints, their deliveries, and the event log as clients read it. */
export function createWebhooksService({ db, events, secretsKey, wake }: WebhooksServiceDeps) {
  const webhooks = repository.webhooksDb(db);
  const knownPrefixes = new Set([...SERVICE_IDS, 'webhooks'].map((service) => `${service.replaceAll('-', '_')}.*`));

  function checkEnabledEvents(patterns: readonly string[]): string[] {
    const details = patterns.flatMap((pattern, index) =>
      pattern === '*' || knownPrefixes.has(pattern) || events.isDeclared(pattern)
        ? []
        : [{ path: `enabled_events[${index}]`, code: 'unknown_event_type', message: `${pattern} is not an event type; GET /webhooks/event-types lists them.` }],
    );
    if (details.length > 0) throw validationFailed(details, details[0]!.message);
    return [...new Set(patterns)];
  }

  function checkUrl(owner: Owner, url: string): string {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidField('url', 'invalid_format', 'url is not a valid absolute URL.');
    }
    if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && owner.mode === 'test')) {
      throw invalidField('url', 'insecure_url', owner.mode === 'test' ? 'url must use https or http.' : 'url must use https with a live-mode key.');
    }
    if (parsed.username || parsed.password) throw invalidField('url', 'invalid_format', 'url must not carry a user name or password.');
    return parsed.href;
  }

  function sealSecret(owner: Owner, endpointId: string, secret: string): string {
    return seal(secretsKey, Buffer.from(secret, 'utf8'), sealingContext(owner, endpointId));
  }

  async function requireEndpoint(db: WebhooksDb, ctx: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<EndpointRow> {
    const endpoint = await repository.findEndpoint(db, ctx, id, options);
    if (!endpoint) throw notFound('Webhook endpoint');
    return endpoint;
  }

  async function presentDeliveries(ctx: Owner, rows: DeliveryRow[]): Promise<WebhookDeliveryView[]> {
    const attempts = groupBy(
      await repository.attemptsOf(
        webhooks,
        ctx,
        rows.map((row) => row.id),
      ),
      (attempt) => attempt.delivery_id,
    );
    return rows.map((row) => presentDelivery(row, attempts.get(row.id) ?? []));
  }

  return {
    eventTypes(page: PageRequest) {
      const all = events.catalogue();
      return { rows: all.slice(page.offset, page.offset + page.limit), total: all.length };
    },

    async listEvents(ctx: RequestContext, filters: EventFilters, page: PageRequest) {
      const { rows, total } = await events.list(ctx, filters, page);
      return { rows: rows.map(presentEvent), total };
    },

    async getEvent(ctx: RequestContext, id: string) {
      const row = await events.get(ctx, id);
      if (!row) throw notFound('Event');
      return presentEvent(row);
    },

    async createEndpoint(ctx: RequestContext, input: CreateEndpointInput) {
      const url = checkUrl(ctx, input.url);
      const enabledEvents = checkEnabledEvents(input.enabled_events);
      if ((await repository.countEndpoints(webhooks, ctx)) >= MAX_ENDPOINTS) {
        throw new AppError('conflict', `A tenant has at most ${MAX_ENDPOINTS} webhook endpoints per mode; delete one first.`);
      }
      const id = newId();
      const secret = newSigningSecret();
      const row = await repository.insertEndpoint(webhooks, ctx, {
        id,
        url,
        description: input.description?.trim() || null,
        enabled_events: enabledEvents,
        status: 'enabled',
        disabled_reason: null,
        secret_sealed: sealSecret(ctx, id, secret),
        previous_secret_sealed: null,
        previous_secret_expires_at: null,
        failing_since: null,
        last_success_at: null,
        created_at: ctx.now,
        updated_at: ctx.now,
      });
      return { ...presentEndpoint(ctx, row), secret };
    },

    async listEndpoints(ctx: RequestContext, page: PageRequest) {
      const { rows, total } = await repository.listEndpoints(webhooks, ctx, page);
      return { rows: rows.map((row) => presentEndpoint(ctx, row)), total };
    },

    async getEndpoint(ctx: RequestContext, id: string) {
      return presentEndpoint(ctx, await requireEndpoint(webhooks, ctx, id));
    },

    async updateEndpoint(ctx: RequestContext, id: string, input: UpdateEndpointInput) {
      const url = input.url === undefined ? undefined : checkUrl(ctx, input.url);
      const enabledEvents = input.enabled_events === undefined ? undefined : checkEnabledEvents(input.enabled_events);
      return webhooks.transaction().execute(async (tx) => {
        const current = await requireEndpoint(tx, ctx, id, { forUpdate: true });
        assertFresh(input.expected_updated_at, current.updated_at);
        const statusChange =
          input.status === undefined || input.status === current.status
            ? {}
            : input.status === 'enabled'
              ? { status: 'enabled' as const, disabled_reason: null, failing_since: null }
              : { status: 'disabled' as const, disabled_reason: 'manual' as const };
        const row = await repository.updateEndpoint(tx, ctx, id, {
          ...(url !== undefined ? { url } : {}),
          ...(enabledEvents !== undefined ? { enabled_events: enabledEvents } : {}),
          ...(input.description !== undefined ? { description: input.description?.trim() || null } : {}),
          ...statusChange,
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        return presentEndpoint(ctx, row);
      });
    },

    async deleteEndpoint(ctx: RequestContext, id: string) {
      if (!(await repository.deleteEndpoint(webhooks, ctx, id))) throw notFound('Webhook endpoint');
      return { id, deleted: true as const };
    },

    /** A new secret; the old one keeps signing, beside it, for a day. */
    async rotateSecret(ctx: RequestContext, id: string) {
      return webhooks.transaction().execute(async (tx) => {
        const current = await requireEndpoint(tx, ctx, id, { forUpdate: true });
        const secret = newSigningSecret();
        const row = await repository.updateEndpoint(tx, ctx, id, {
          secret_sealed: sealSecret(ctx, id, secret),
          previous_secret_sealed: current.secret_sealed,
          previous_secret_expires_at: addMilliseconds(ctx.now, SECRET_OVERLAP_MS),
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        return { ...presentEndpoint(ctx, row), secret };
      });
    },

    /** Records a `webhooks.endpoint.pinged` event for this endpoint alone and makes its delivery due now. */
    async sendTestEvent(ctx: RequestContext, id: string): Promise<WebhookDeliveryView> {
      const delivery = await webhooks.transaction().execute(async (tx) => {
        const endpoint = await requireEndpoint(tx, ctx, id);
        if (endpoint.status === 'disabled') throw new AppError('conflict', 'The endpoint is disabled; enable it first.');
        const event = await events.record(tx, ctx, PING_EVENT, presentEndpoint(ctx, endpoint), { dispatched: true });
        const [row] = await repository.insertDeliveries(tx, ctx, [
          {
            id: newId(),
            endpoint_id: id,
            event_id: event.id,
            event_type: event.type,
            status: 'pending',
            next_attempt_at: ctx.now,
            locked_until: null,
            last_attempt_at: null,
            resume_at: null,
            created_at: ctx.now,
            updated_at: ctx.now,
          },
        ]);
        return row!;
      });
      wake();
      return presentDelivery(delivery, []);
    },

    async listDeliveries(ctx: RequestContext, endpointId: string, filters: { status?: DeliveryStatus; event_id?: string }, page: PageRequest) {
      await requireEndpoint(webhooks, ctx, endpointId);
      const { rows, total } = await repository.listDeliveries(webhooks, ctx, { ...filters, endpoint_id: endpointId }, page);
      return { rows: await presentDeliveries(ctx, rows), total };
    },

    /** A manual redelivery, due now; a failed one gets this one attempt, a pending one keeps its schedule after it. */
    async retryDelivery(ctx: RequestContext, endpointId: string, deliveryId: string): Promise<WebhookDeliveryView> {
      const endpoint = await requireEndpoint(webhooks, ctx, endpointId);
      const delivery = await repository.findDelivery(webhooks, ctx, endpointId, deliveryId);
      if (!delivery) throw notFound('Delivery');
      if (endpoint.status === 'disabled') throw new AppError('conflict', 'The endpoint is disabled; enable it before retrying its deliveries.');
      const row = await repository.scheduleManualRetry(webhooks, ctx, deliveryId, ctx.now);
      wake();
      return (await presentDeliveries(ctx, [row]))[0]!;
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;

export function presentEndpoint(owner: Owner, row: EndpointRow): WebhookEndpointView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    enabled_events: row.enabled_events,
    status: row.status,
    disabled_reason: row.disabled_reason,
    livemode: owner.mode === 'live',
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function presentDelivery(row: DeliveryRow, attempts: AttemptRow[]): WebhookDeliveryView {
  const last = attempts.at(-1);
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: row.next_attempt_at,
    last_attempt_at: row.last_attempt_at,
    status_code: last?.status_code ?? null,
    duration_ms: last?.duration_ms ?? null,
    error: last?.error ?? null,
    response_body: last?.response_body ?? null,
    attempts: attempts.slice(-MAX_ATTEMPTS_SHOWN).map((attempt) => ({
      attempted_at: attempt.attempted_at,
      status_code: attempt.status_code,
      duration_ms: attempt.duration_ms,
      error: attempt.error,
      response_body: attempt.response_body,
      manual: attempt.manual,
    })),
    created_at: row.created_at,
  };
}
