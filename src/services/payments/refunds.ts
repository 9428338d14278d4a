import type { Db } from '../../db/database.js';
import type { Mode } from '../../db/types.js';
import { newId } from '../../lib/ids.js';
import { minorUnitsProblem } from '../../lib/money.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound, validationFailed } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { PageRequest } from '../../platform/pagination/index.js';
import { effectiveStatus, presentRefund } from './present.js';
import { type PaymentProcessor, ProcessorError } from './processor.js';
import * as repository from './repository.js';
import { MAX_METADATA_KEYS, type CreateRefundInput, type ListRefundsFilters, type RefundView } from './schemas.js';

export interface RefundDeps {
  db: Db;
  events: EventLog;
  processors: { test: PaymentProcessor; live: PaymentProcessor | undefined };
  /** Throws 503 live_payments_not_configured when the mode has no processor. */
  requireLiveConfigured: (mode: Mode) => void;
}

/**
 * Refunds of paid checkout sessions (Stripe's `POST /v1/refunds` of a payment intent). The
 * session row is locked while its refundable amount is checked, the processor asked and the
 * refund written, so concurrent refunds never give back more than was paid; a processor
 * that refuses or fails leaves nothing written.
 */
export function createRefundRules({ db, events, processors, requireLiveConfigured }: RefundDeps) {
  const payments = repository.paymentsDb(db);

  return {
    async createRefund(ctx: RequestContext, input: CreateRefundInput): Promise<RefundView> {
      requireLiveConfigured(ctx.mode);
      const processor = processors[ctx.mode]!;
      return db.transaction().execute(async (transaction) => {
        const tx = repository.paymentsDb(transaction);
        const session = await repository.findSession(tx, ctx, input.checkout_session_id, { forUpdate: true });
        if (!session) throw invalidField('checkout_session_id', 'not_found', 'No checkout session with this id.');
        if (session.status !== 'complete' || session.payment_intent_id === null) {
          const status = effectiveStatus(session, ctx.now);
          throw new AppError('checkout_session_not_paid', `Only a paid (complete) checkout session can be refunded; this one is ${status}.`, [
            { path: 'checkout_session_id', code: 'not_paid', message: `The session is ${status}.`, status },
          ]);
        }
        const total = Number(session.amount_total_cents);
        const refunded = Number(session.amount_refunded_cents);
        const remaining = total - refunded;
        if (input.amount_cents === undefined && remaining === 0) {
          throw new AppError('checkout_session_fully_refunded', 'This checkout session is already refunded in full.', [
            { path: 'checkout_session_id', code: 'fully_refunded', message: `All ${total} minor units were refunded.`, amount_refunded_cents: refunded },
          ]);
        }
        const amount = input.amount_cents ?? remaining;
        if (amount > remaining) {
          throw validationFailed([
            {
              path: 'amount_cents',
              code: 'out_of_range',
              message: `amount_cents must not be above what the session can still refund, ${remaining} minor units.`,
              maximum: remaining,
            },
          ]);
        }
        const unitsProblem = minorUnitsProblem(amount, session.currency, 'amount_cents');
        if (unitsProblem !== undefined) throw invalidField('amount_cents', 'invalid_value', unitsProblem);

        const metadata = input.metadata ?? {};
        let refund;
        try {
          refund = await processor.refund({
            paymentIntentId: session.payment_intent_id,
            amount,
            currency: session.currency,
            reason: input.reason ?? null,
            metadata: Object.keys(metadata).length < MAX_METADATA_KEYS ? { checkout_session_id: session.id, ...metadata } : metadata,
            // The same session state and amount give the same key: a request retried after a lost commit cannot refund twice.
            idempotencyKey: `checkout-session-${session.id}-refund-${refunded}-${amount}`,
          });
        } catch (error) {
          if (!(error instanceof ProcessorError)) throw error;
          throw new AppError('payment_processor_error', `The refund could not be made: ${error.message} Nothing was refunded; try again.`);
        }
        const updated = await repository.addRefundedAmount(tx, ctx, session.id, amount, ctx.now);
        const row = await repository.insertRefund(tx, ctx, {
          id: newId(),
          checkout_session_id: session.id,
          amount_cents: amount,
          currency: session.currency,
          status: refund.status,
          reason: input.reason ?? null,
          metadata: JSON.stringify(metadata),
          payment_intent_id: session.payment_intent_id,
          processor_refund_id: refund.id,
          session_amount_total_cents: total,
          session_amount_refunded_cents: Number(updated.amount_refunded_cents),
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        const view = presentRefund(row);
        await events.record(tx, ctx, 'payments.refund.created', view);
        return view;
      });
    },

    async getRefund(ctx: RequestContext, id: string): Promise<RefundView> {
      const row = await repository.findRefund(payments, ctx, id);
      if (!row) throw notFound('Refund');
      return presentRefund(row);
    },

    async listRefunds(ctx: RequestContext, filters: ListRefundsFilters, page: PageRequest) {
      const { rows, total } = await repository.listRefunds(payments, ctx, filters, page);
      return { rows: rows.map(presentRefund), total };
    },
  };
}
