import { normalizeCurrency } from '../../lib/currency.js';
import { cleanText } from '../../lib/text.js';
import { nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import type { EventLog } from '../../platform/events/event-log.js';
import { AppError, notFound, validationFailed } from '../../platform/errors/app-error.js';
import type { PageRequest } from '../../platform/pagination/index.js';
import { checkMoney, fitCurrency, MIN_AMOUNT_RULE, minorOf, money, MONEY_RULE } from './amounts.js';
import { presentApproval, presentPolicy, presentRefund } from './present.js';
import * as repository from './repository.js';
import type { ApprovalRow, InvoiceRow, InvoicingDb, PaymentRow } from './repository.js';
import type { ApprovalPolicyView, ApprovalView, CreateApprovalPolicyInput, CreateRefundInput, DecideApprovalInput, PendingApprovalView, RefundView } from './schemas.js';
import type { ApprovalStatus } from './tables.js';

export type RefundOutcome = { kind: 'refunded'; refund: RefundView } | { kind: 'pending_approval'; pending: PendingApprovalView };

/**
 * Refunds of recorded payments, the approval policies that hold large ones back, and
 * the approvals that release them. Every path that changes what a payment may still
 * refund locks, in this order, the approval, the invoice, then the payment row.
 */
export function createRefundRules(db: InvoicingDb, events: EventLog, publicBaseUrl: string) {
  const approvalUrl = (approvalId: string) => `${publicBaseUrl.replace(/\/+$/, '')}/api/v1/services/invoicing/approvals/${approvalId}`;

  /** What the payment can still give back: amount - succeeded refunds - refunds awaiting approval. */
  function refundable(payment: PaymentRow): bigint {
    return payment.amount_minor - payment.refunded_minor - payment.reserved_minor;
  }

  function exceedsBalance(available: bigint, currency: string): AppError {
    const availableText = money(available, currency);
    return validationFailed([
      {
        path: 'amount',
        code: 'out_of_range',
        message: `amount must not be above the refundable balance of the payment, ${availableText}.`,
        refundable_amount: availableText,
      },
    ]);
  }

  /**
   * Records a succeeded refund, and its event, on a payment and invoice the caller has
   * locked; `releaseReserved` moves the same amount out of the payment's reservation.
   */
  async function applyRefund(
    tx: InvoicingDb,
    ctx: RequestContext,
    locked: { invoice: InvoiceRow; payment: PaymentRow },
    request: { amountMinor: bigint; currency: string; method: string; reason: string | null; approvalId: string | null },
    releaseReserved: boolean,
  ) {
    const { invoice, payment } = locked;
    const refund = await repository.insertRefund(tx, ctx, {
      invoice_id: invoice.id,
      customer_payment_id: payment.id,
      amount_minor: request.amountMinor,
      currency: request.currency,
      method: request.method,
      reason: request.reason,
      approval_id: request.approvalId,
      created_at: ctx.now,
    });
    await repository.adjustPaymentRefunds(
      tx,
      ctx,
      payment.id,
      { refunded: request.amountMinor, reserved: releaseReserved ? -request.amountMinor : 0n },
      nextUpdatedAt(payment.updated_at, ctx.now),
    );
    await repository.updateInvoice(tx, ctx, invoice.id, {
      amount_refunded_minor: invoice.amount_refunded_minor + request.amountMinor,
      updated_at: nextUpdatedAt(invoice.updated_at, ctx.now),
    });
    const view = presentRefund(refund);
    await events.record(tx, ctx, 'invoicing.refund.created', view);
    return view;
  }

  async function requireApproval(tx: InvoicingDb, ctx: RequestContext, id: string, forUpdate: boolean): Promise<ApprovalRow> {
    const row = await repository.findApproval(tx, ctx, id, { forUpdate });
    if (!row) throw notFound('Approval');
    return row;
  }

  function alreadyDecided(approval: ApprovalRow): AppError {
    return new AppError('approval_already_decided', `This approval was already ${approval.status}; a decision is made once.`, [
      { path: 'status', code: 'already_decided', message: `The approval is ${approval.status}.`, status: approval.status },
    ]);
  }

  async function viewApproval(tx: InvoicingDb, ctx: RequestContext, row: ApprovalRow): Promise<ApprovalView> {
    const [refund] = row.status === 'approved' ? await repository.findRefundsByApproval(tx, ctx, [row.id]) : [];
    return presentApproval(row, refund);
  }

  async function recordDecision(tx: InvoicingDb, ctx: RequestContext, decided: ApprovalRow): Promise<ApprovalView> {
    const view = await viewApproval(tx, ctx, decided);
    await events.record(tx, ctx, 'invoicing.approval.decided', view);
    return view;
  }

  return {
    /**
     * Refunds (part of) a recorded payment, or holds the request for approval when a
     * policy matches. The invoice and payment rows are locked while the balance is checked
     * and the refund or reservation written, so concurrent requests never overdraw.
     */
    async createRefund(ctx: RequestContext, input: CreateRefundInput): Promise<RefundOutcome> {
      const requestedCurrency = input.currency !== undefined ? normalizeCurrency(input.currency)! : undefined;
      const amount = checkMoney(input.amount, 'amount', { ...MONEY_RULE, label: 'amount' }, requestedCurrency);
      if (!amount.ok) throw validationFailed([amount.problem]);
      const amountMinor = minorOf(amount.value);
      const invoiceId = String(input.invoice_id);
      const paymentId = String(input.customer_payment_id);

      return db.transaction().execute(async (tx: InvoicingDb): Promise<RefundOutcome> => {
        const invoice = await repository.findInvoice(tx, ctx, invoiceId, { forUpdate: true });
        if (!invoice) throw notFound('Invoice');
        const payment = await repository.findPayment(tx, ctx, invoiceId, paymentId, { forUpdate: true });
        if (!payment) {
          throw new AppError('not_found', 'Payment not found on this invoice.', [
            { path: 'customer_payment_id', code: 'not_found', message: 'No payment with this id was applied to the invoice.' },
          ]);
        }
        const currency = payment.currency;
        if (requestedCurrency !== undefined && requestedCurrency !== currency) {
          throw validationFailed([{ path: 'currency', code: 'invalid_value', message: `The payment is in ${currency}; a refund of it must be too.` }]);
        }
        const fits = fitCurrency(amount.value, 'amount', currency, 'amount');
        if (!fits.ok) throw validationFailed([fits.problem]);
        const available = refundable(payment);
        if (amountMinor > available) throw exceedsBalance(available, currency);
        const method = input.method?.trim() ?? 'manual';
        const reason = cleanText(input.reason) ?? null;

        const policy = await repository.findMatchingPolicy(tx, ctx, amountMinor, currency);
        if (policy) {
          const approval = await repository.insertApproval(tx, ctx, {
            policy_id: policy.id,
            invoice_id: invoiceId,
            customer_payment_id: paymentId,
            amount_minor: amountMinor,
            currency,
            method,
            reason,
            requested_by_key_id: ctx.keyId,
            created_at: ctx.now,
            updated_at: ctx.now,
          });
          // The amount is reserved now, so a second request cannot spend it while this one waits.
          await repository.adjustPaymentRefunds(tx, ctx, paymentId, { refunded: 0n, reserved: amountMinor }, nextUpdatedAt(payment.updated_at, ctx.now));
          await events.record(tx, ctx, 'invoicing.approval.requested', await viewApproval(tx, ctx, approval));
          const threshold = policy.currency ? `${money(policy.min_amount_minor, policy.currency)} ${policy.currency}` : money(policy.min_amount_minor, currency);
          return {
            kind: 'pending_approval',
            pending: {
              pending_approval: true,
              approval_instance_id: Number(approval.id),
              approval_status_url: approvalUrl(approval.id),
              message: `Refunds of ${threshold} or more need approval (policy ${policy.id}). ${money(amountMinor, currency)} ${currency} is reserved on the payment until the request is approved or rejected; poll approval_status_url.`,
            },
          };
        }
        const refund = await applyRefund(tx, ctx, { invoice, payment }, { amountMinor, currency, method, reason, approvalId: null }, false);
        return { kind: 'refunded', refund };
      });
    },

    async getRefund(ctx: RequestContext, id: string): Promise<RefundView> {
      const row = await repository.findRefund(db, ctx, id);
      if (!row) throw notFound('Refund');
      return presentRefund(row);
    },

    async listRefunds(ctx: RequestContext, filters: { invoice_id?: number; customer_payment_id?: number }, page: PageRequest) {
      const { rows, total } = await repository.listRefunds(
        db,
        ctx,
        {
          ...(filters.invoice_id !== undefined ? { invoiceId: String(filters.invoice_id) } : {}),
          ...(filters.customer_payment_id !== undefined ? { paymentId: String(filters.customer_payment_id) } : {}),
        },
        page,
      );
      return { rows: rows.map(presentRefund), total };
    },

    // Approval policies

    async createPolicy(ctx: RequestContext, input: CreateApprovalPolicyInput): Promise<ApprovalPolicyView> {
      const currency = input.currency !== undefined ? normalizeCurrency(input.currency)! : null;
      const minAmount = checkMoney(input.min_amount, 'min_amount', { ...MIN_AMOUNT_RULE, label: 'min_amount' }, currency ?? undefined);
      if (!minAmount.ok) throw validationFailed([minAmount.problem]);
      const row = await repository.insertPolicy(db, ctx, {
        action: input.action,
        min_amount_minor: minorOf(minAmount.value),
        currency,
        created_at: ctx.now,
      });
      return presentPolicy(row);
    },

    async getPolicy(ctx: RequestContext, id: string): Promise<ApprovalPolicyView> {
      const row = await repository.findPolicy(db, ctx, id);
      if (!row) throw notFound('Approval policy');
      return presentPolicy(row);
    },

    async listPolicies(ctx: RequestContext, page: PageRequest) {
      const { rows, total } = await repository.listPolicies(db, ctx, page);
      return { rows: rows.map(presentPolicy), total };
    },

    /** Deleting a policy affects new requests only; approvals already pending stay pending. */
    async deletePolicy(ctx: RequestContext, policyId: string): Promise<{ id: number; deleted: true }> {
      if (!(await repository.deletePolicy(db, ctx, policyId))) throw notFound('Approval policy');
      return { id: Number(policyId), deleted: true as const };
    },

    // Approvals

    async getApproval(ctx: RequestContext, id: string): Promise<ApprovalView> {
      return viewApproval(db, ctx, await requireApproval(db, ctx, id, false));
    },

    async listApprovals(ctx: RequestContext, filters: { status?: ApprovalStatus }, page: PageRequest) {
      const { rows, total } = await repository.listApprovals(db, ctx, filters.status !== undefined ? { status: filters.status } : {}, page);
      const refunds = await repository.findRefundsByApproval(
        db,
        ctx,
        rows.filter((row) => row.status === 'approved').map((row) => row.id),
      );
      return {
        rows: rows.map((row) =>
          presentApproval(
            row,
            refunds.find((refund) => refund.approval_id === row.id),
          ),
        ),
        total,
      };
    },

    /**
     * Approves a pending refund request: creates its refund exactly once (the approval row
     * is locked, and a unique index allows one refund per approval), after checking again
     * that the payment can give the amount back.
     */
    async approve(ctx: RequestContext, id: string, input: DecideApprovalInput): Promise<ApprovalView> {
      try {
        return await db.transaction().execute(async (tx) => {
          const approval = await requireApproval(tx, ctx, id, true);
          if (approval.status !== 'pending') throw alreadyDecided(approval);
          const invoice = await repository.findInvoice(tx, ctx, approval.invoice_id, { forUpdate: true });
          const payment = invoice && (await repository.findPayment(tx, ctx, approval.invoice_id, approval.customer_payment_id, { forUpdate: true }));
          if (!invoice || !payment) throw notFound('Payment');
          // The request's own reservation counts as available to it.
          const available = refundable(payment) + approval.amount_minor;
          if (approval.amount_minor > available || payment.reserved_minor < approval.amount_minor) throw exceedsBalance(available, approval.currency);
          await applyRefund(
            tx,
            ctx,
            { invoice, payment },
            {
              amountMinor: approval.amount_minor,
              currency: approval.currency,
              method: approval.method,
              reason: approval.reason,
              approvalId: approval.id,
            },
            true,
          );
          const decided = await repository.decideApproval(tx, ctx, approval.id, {
            status: 'approved',
            decided_by_key_id: ctx.keyId,
            decided_at: ctx.now,
            decision_note: cleanText(input.note) ?? null,
            updated_at: nextUpdatedAt(approval.updated_at, ctx.now),
          });
          return recordDecision(tx, ctx, decided);
        });
      } catch (error) {
        if (repository.isUniqueViolation(error, repository.REFUND_APPROVAL_INDEX)) {
          const current = await requireApproval(db, ctx, id, false);
          throw alreadyDecided(current);
        }
        throw error;
      }
    },

    /** Rejects a pending refund request and releases the amount it reserved. */
    async reject(ctx: RequestContext, id: string, input: DecideApprovalInput): Promise<ApprovalView> {
      return db.transaction().execute(async (tx) => {
        const approval = await requireApproval(tx, ctx, id, true);
        if (approval.status !== 'pending') throw alreadyDecided(approval);
        const payment = await repository.findPayment(tx, ctx, approval.invoice_id, approval.customer_payment_id, { forUpdate: true });
        if (!payment) throw notFound('Payment');
        await repository.adjustPaymentRefunds(tx, ctx, payment.id, { refunded: 0n, reserved: -approval.amount_minor }, nextUpdatedAt(payment.updated_at, ctx.now));
        const decided = await repository.decideApproval(tx, ctx, approval.id, {
          status: 'rejected',
          decided_by_key_id: ctx.keyId,
          decided_at: ctx.now,
          decision_note: cleanText(input.note) ?? null,
          updated_at: nextUpdatedAt(approval.updated_at, ctx.now),
        });
        return recordDecision(tx, ctx, decided);
      });
    },
  };
}
