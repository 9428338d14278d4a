import type { PageRequest } from '../../db/paging.js';
import { isUuid, newId } from '../../lib/ids.js';
import { nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { invalidField, notFound } from '../../platform/errors/app-error.js';
import { normalizePhone } from './phone.js';
import { presentMessage, presentSuppression } from './present.js';
import * as repository from './repository.js';
import type { MessageFilters } from './repository.js';
import type { InboundInput, InboundResultView, ListMessagesInput, MessageView, StatusCallbackInput } from './schemas.js';
import { phone, type OutreachDeps, type Shared } from './shared.js';
import type { MessageStatus } from './tables.js';

/** Keywords that opt a number out (Twilio's default opt-out list), and back in. */
export const STOP_KEYWORDS = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
export const START_KEYWORDS = new Set(['START', 'UNSTOP']);

/** Delivery statuses in the order a message moves through them; a callback never moves a message back. */
const DELIVERY_RANK: Record<MessageStatus, number> = { queued: 0, sent: 1, delivered: 2, failed: 2, received: 3 };

/** The keyword of an inbound message: its text upper-cased without surrounding spaces and punctuation. */
export function keywordOf(body: string): string {
  return body
    .trim()
    .replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '')
    .toUpperCase();
}

/** Messages sent and received: the list, delivery statuses, and inbound replies and keywords. */
export function createMessageRules({ events }: OutreachDeps, { tables, inTransaction, exitEnrollment }: Shared) {
  return {
    async listMessages(ctx: RequestContext, filters: Omit<ListMessagesInput, 'limit' | 'offset'>, page: PageRequest) {
      const query: MessageFilters = {
        sequenceId: filters.sequence_id,
        enrollmentId: filters.enrollment_id,
        direction: filters.direction,
        status: filters.status,
      };
      for (const name of ['address', 'to', 'from'] as const) {
        const value = filters[name];
        if (value === undefined) continue;
        const number = normalizePhone(value);
        if (!number) return { rows: [], total: 0 };
        query[name] = number;
      }
      const { rows, total } = await repository.listMessages(tables, ctx, query, page);
      return { rows: rows.map(presentMessage), total };
    },

    async getMessage(ctx: RequestContext, id: string): Promise<MessageView> {
      const row = await repository.findMessage(tables, ctx, id);
      if (!row) throw notFound('Message');
      return presentMessage(row);
    },

    /** A provider status callback: moves an outbound message to sent, delivered or failed (never back). */
    async recordStatus(ctx: RequestContext, input: StatusCallbackInput): Promise<MessageView> {
      if ((input.message_id === undefined) === (input.provider_message_id === undefined)) {
        throw invalidField('message_id', 'required', 'Send exactly one of message_id and provider_message_id.');
      }
      if (input.message_id !== undefined && !isUuid(input.message_id)) throw notFound('Message');
      const status: MessageStatus = input.status === 'undelivered' ? 'failed' : input.status;
      return inTransaction(async (tx) => {
        const row = await repository.findMessageForUpdate(tx, ctx, { id: input.message_id, providerMessageId: input.provider_message_id });
        if (!row) throw notFound('Message');
        if (row.status === status || DELIVERY_RANK[status] <= DELIVERY_RANK[row.status]) return presentMessage(row);
        const updated = await repository.updateMessage(tx, ctx, row.id, {
          status,
          ...(status === 'failed' ? { error: input.error_message ?? 'failed' } : {}),
          ...(row.sent_at === null && status !== 'failed' ? { sent_at: ctx.now } : {}),
          updated_at: nextUpdatedAt(row.updated_at, ctx.now),
        });
        const view = presentMessage(updated);
        await events.record(tx, ctx, 'outreach.message.status_changed', view);
        return view;
      });
    },

    /**
     * An inbound message from a person: STOP-family keywords suppress the number and exit its
     * active enrollments with `opted_out`; START/UNSTOP remove it from the list; any other text
     * exits its active enrollments with `replied`.
     */
    async inbound(ctx: RequestContext, input: InboundInput): Promise<InboundResultView> {
      const from = phone('from', input.from);
      const to = normalizePhone(input.to) ?? input.to.trim();
      const keyword = keywordOf(input.body);
      const provider = ctx.mode === 'live' ? 'twilio' : 'sandbox';
      const action = START_KEYWORDS.has(keyword) ? 'opted_in' : STOP_KEYWORDS.has(keyword) ? 'opted_out' : 'replied';
      return inTransaction(async (tx) => {
        const message = await repository.insertInboundMessage(tx, ctx, {
          id: newId(),
          direction: 'inbound',
          sequence_id: null,
          enrollment_id: null,
          position: null,
          from_address: from,
          to_address: to,
          body: input.body,
          status: 'received',
          provider,
          provider_message_id: input.provider_message_id ?? null,
          error: null,
          attempts: 0,
          created_at: ctx.now,
          sent_at: null,
          updated_at: ctx.now,
        });
        if (!message) {
          // The same provider message again (a retried webhook): acted on already.
          const recorded = (await repository.findByProviderId(tx, ctx, provider, input.provider_message_id!))!;
          const suppressed = (await repository.findSuppressionByAddress(tx, ctx, from)) !== undefined;
          return { message: presentMessage(recorded), action, exited: 0, suppressed };
        }
        await events.record(tx, ctx, 'outreach.message.received', presentMessage(message));
        if (action === 'opted_in') {
          const listed = await repository.findSuppressionByAddress(tx, ctx, from);
          if (listed) {
            await repository.deleteSuppression(tx, ctx, listed.id);
            await events.record(tx, ctx, 'outreach.suppression.deleted', presentSuppression(listed));
          }
          return { message: presentMessage(message), action: 'opted_in', exited: 0, suppressed: false };
        }
        const optOut = action === 'opted_out';
        if (optOut) {
          const added = await repository.insertSuppression(tx, ctx, { id: newId(), address: from, reason: 'opted_out', note: null, created_at: ctx.now });
          if (added) await events.record(tx, ctx, 'outreach.suppression.created', presentSuppression(added));
        }
        const active = await repository.activeEnrollmentsOf(tx, ctx, from);
        for (const row of active) await exitEnrollment(tx, ctx, row, optOut ? 'opted_out' : 'replied');
        const suppressed = optOut || (await repository.findSuppressionByAddress(tx, ctx, from)) !== undefined;
        return { message: presentMessage(message), action, exited: active.length, suppressed };
      });
    },
  };
}
