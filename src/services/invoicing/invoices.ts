import { normalizeCurrency } from '../../lib/currency.js';
import { groupBy } from '../../lib/group.js';
import { cleanText } from '../../lib/text.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import type { EventLog } from '../../platform/events/event-log.js';
import { AppError, notFound, validationFailed, type ErrorDetail } from '../../platform/errors/app-error.js';
import type { PageRequest } from '../../platform/pagination/index.js';
import {
  addDays,
  checkDecimal,
  checkMoney,
  checkUnitPrice,
  fitCurrency,
  invoiceAmounts,
  lineAmounts,
  MAX_AMOUNT_MINOR,
  MAX_AMOUNT_TEXT,
  minorOf,
  money,
  MONEY_RULE,
  plain,
  QUANTITY_RULE,
  TAX_RATE_RULE,
  utcDate,
  type InvoiceAmounts,
} from './amounts.js';
import { amountDueMinor, presentInvoice, presentPayment } from './present.js';
import * as repository from './repository.js';
import type { CustomerRow, InvoiceChanges, InvoiceRow, InvoicingDb, NewLine } from './repository.js';
import type { CreateInvoiceInput, InvoiceView, LineItemInputValue, RecordedPaymentView, RecordPaymentInput, UpdateInvoiceInput } from './schemas.js';
import type { InvoiceStatus } from './tables.js';

/**
 * The moves of an invoice. finalize: draft -> open; payments: open / partially_paid ->
 * partially_paid / paid; void: draft or open (no payments) -> void. paid and void are final.
 */
export const INVOICE_MOVES: Readonly<Record<InvoiceStatus, readonly InvoiceStatus[]>> = {
  draft: ['open', 'void'],
  open: ['partially_paid', 'paid', 'void'],
  partially_paid: ['partially_paid', 'paid'],
  paid: [],
  void: [],
};

const PAYABLE: readonly InvoiceStatus[] = ['open', 'partially_paid'];
const NUMBER_PREFIX = 'INV-';
const NUMBER_DIGITS = 6;
const EARLIEST_PAID_AT = Date.UTC(1970, 0, 1);

/** INV-000001; numbers beyond 999999 simply grow a digit. */
export function formatInvoiceNumber(sequence: bigint): string {
  return `${NUMBER_PREFIX}${sequence.toString().padStart(NUMBER_DIGITS, '0')}`;
}

/** Invoices, their lines and the payments applied to them. */
export function createInvoiceRules(db: InvoicingDb, events: EventLog) {
  /** The invoice as the API shows it, with its lines and payments (read through `tx`). */
  async function present(tx: InvoicingDb, ctx: RequestContext, row: InvoiceRow): Promise<InvoiceView> {
    const [lines, payments] = await Promise.all([repository.findLines(tx, ctx, [row.id]), repository.findPayments(tx, ctx, [row.id])]);
    return presentInvoice(row, lines, payments);
  }

  /** A customer new invoices may be addressed to: 400 when unknown, 409 when archived. */
  async function requireBillableCustomer(tx: InvoicingDb, ctx: RequestContext, customerId: number): Promise<CustomerRow> {
    // Share lock: an archive running at the same time waits for this invoice, or wins before it.
    const customer = await repository.findCustomer(tx, ctx, String(customerId), { lock: 'share' });
    if (!customer) {
      throw validationFailed([{ path: 'customer_id', code: 'not_found', message: 'No customer with this id.' }], 'The customer does not exist.');
    }
    if (!customer.is_active) {
      throw new AppError('customer_archived', 'The customer is archived; unarchive it to invoice it.', [
        { path: 'customer_id', code: 'archived', message: 'Archived customers get no new invoices.', customer_id: customerId },
      ]);
    }
    return customer;
  }

  async function requireInvoice(tx: InvoicingDb, ctx: RequestContext, invoiceId: string): Promise<InvoiceRow> {
    const row = await repository.findInvoice(tx, ctx, invoiceId, { forUpdate: true });
    if (!row) throw notFound('Invoice');
    return row;
  }

  return {
    async createInvoice(ctx: RequestContext, input: CreateInvoiceInput): Promise<InvoiceView> {
      // Lines are checked once before any query (every problem at once), and again in the
      // customer's default currency when the request names none.
      const currency = input.currency !== undefined ? normalizeCurrency(input.currency)! : undefined;
      const items = input.line_items ?? [];
      if (currency !== undefined) readLines(items, currency);
      const issueDate = input.issue_date ?? utcDate(ctx.now);
      return db.transaction().execute(async (tx) => {
        const customer = await requireBillableCustomer(tx, ctx, input.customer_id);
        const { lines, totals } = readLines(items, currency ?? customer.default_currency);
        const dueDate = input.due_date ?? addDays(issueDate, customer.default_payment_terms_days);
        checkDates(issueDate, dueDate);
        const sequence = await repository.nextInvoiceNumber(tx, ctx);
        const row = await repository.insertInvoice(tx, ctx, {
          number: formatInvoiceNumber(sequence),
          customer_id: customer.id,
          status: 'draft',
          currency: currency ?? customer.default_currency,
          issue_date: issueDate,
          due_date: dueDate,
          notes: cleanText(input.notes) ?? null,
          subtotal_minor: totals.subtotalMinor,
          tax_total_minor: totals.taxTotalMinor,
          total_minor: totals.totalMinor,
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        await repository.replaceLines(tx, ctx, row.id, lines);
        return present(tx, ctx, row);
      });
    },

    async getInvoice(ctx: RequestContext, id: string): Promise<InvoiceView> {
      const row = await repository.findInvoice(db, ctx, id);
      if (!row) throw notFound('Invoice');
      return present(db, ctx, row);
    },

    async listInvoices(ctx: RequestContext, filters: { status?: InvoiceStatus; customer_id?: number }, page: PageRequest) {
      const { rows, total } = await repository.listInvoices(
        db,
        ctx,
        {
          ...(filters.status !== undefined ? { status: filters.status } : {}),
          ...(filters.customer_id !== undefined ? { customerId: String(filters.customer_id) } : {}),
        },
        page,
      );
      const ids = rows.map((row) => String(row.id));
      const [lines, payments] = await Promise.all([repository.findLines(db, ctx, ids), repository.findPayments(db, ctx, ids)]);
      const linesOf = groupBy(lines, (line) => String(line.invoice_id));
      const paymentsOf = groupBy(payments, (payment) => String(payment.invoice_id));
      return { rows: rows.map((row, index) => presentInvoice(row, linesOf.get(ids[index]!) ?? [], paymentsOf.get(ids[index]!) ?? [])), total };
    },

    /** Drafts only: the fields sent change; `line_items` replaces every line and the totals. */
    async updateInvoice(ctx: RequestContext, invoiceId: string, input: UpdateInvoiceInput): Promise<InvoiceView> {
      const currency = input.currency !== undefined ? normalizeCurrency(input.currency)! : undefined;
      if (input.line_items !== undefined && currency !== undefined) readLines(input.line_items, currency);
      return db.transaction().execute(async (tx) => {
        const current = await requireInvoice(tx, ctx, invoiceId);
        assertFresh(input.expected_updated_at, current.updated_at);
        if (current.status !== 'draft') throw notEditable(current, 'edited');
        const changes: InvoiceChanges = { updated_at: nextUpdatedAt(current.updated_at, ctx.now) };
        if (input.customer_id !== undefined && String(input.customer_id) !== current.customer_id) {
          changes.customer_id = (await requireBillableCustomer(tx, ctx, input.customer_id)).id;
        }
        if (currency !== undefined) changes.currency = currency;
        if (input.issue_date !== undefined) changes.issue_date = input.issue_date;
        if (input.due_date !== undefined) changes.due_date = input.due_date;
        checkDates(changes.issue_date ?? current.issue_date, changes.due_date ?? current.due_date);
        if (input.notes !== undefined) changes.notes = cleanText(input.notes) ?? null;
        const newLines =
          input.line_items !== undefined
            ? readLines(input.line_items, currency ?? current.currency)
            : currency !== undefined && currency !== current.currency
              ? await repriceLines(tx, ctx, invoiceId, currency)
              : undefined;
        if (newLines) {
          await repository.replaceLines(tx, ctx, invoiceId, newLines.lines);
          changes.subtotal_minor = newLines.totals.subtotalMinor;
          changes.tax_total_minor = newLines.totals.taxTotalMinor;
          changes.total_minor = newLines.totals.totalMinor;
        }
        return present(tx, ctx, await repository.updateInvoice(tx, ctx, invoiceId, changes));
      });
    },

    /** Deletes a draft. Its number stays used: numbers are never handed out twice. */
    async deleteInvoice(ctx: RequestContext, invoiceId: string): Promise<{ id: number; deleted: true }> {
      return db.transaction().execute(async (tx) => {
        const current = await requireInvoice(tx, ctx, invoiceId);
        if (current.status !== 'draft') throw notEditable(current, 'deleted');
        await repository.deleteDraftInvoice(tx, ctx, invoiceId);
        return { id: Number(invoiceId), deleted: true as const };
      });
    },

    /** draft -> open: needs at least one line and a total above zero. */
    async finalizeInvoice(ctx: RequestContext, invoiceId: string): Promise<InvoiceView> {
      return db.transaction().execute(async (tx: InvoicingDb) => {
        const current = await requireInvoice(tx, ctx, invoiceId);
        if (current.status !== 'draft') throw invalidTransition(current.status, 'open');
        const lines = await repository.findLines(tx, ctx, [invoiceId]);
        if (lines.length === 0) {
          throw new AppError('invoice_not_finalizable', 'An invoice needs at least one line item to be finalized.', [
            { path: 'line_items', code: 'required', message: 'Add at least one line item first.' },
          ]);
        }
        if (current.total_minor <= 0n) {
          throw new AppError('invoice_not_finalizable', 'An invoice with a total of 0.00 cannot be finalized; void or delete it instead.', [
            { path: 'total', code: 'out_of_range', message: 'The total must be greater than 0.' },
          ]);
        }
        const row = await repository.updateInvoice(tx, ctx, invoiceId, {
          status: 'open',
          finalized_at: ctx.now,
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        const invoice = await present(tx, ctx, row);
        await events.record(tx, ctx, 'invoicing.invoice.finalized', invoice);
        return invoice;
      });
    },

    /** draft or open -> void. An invoice with payments cannot be voided (refund them instead). */
    async voidInvoice(ctx: RequestContext, invoiceId: string): Promise<InvoiceView> {
      return db.transaction().execute(async (tx) => {
        const current = await requireInvoice(tx, ctx, invoiceId);
        if (!INVOICE_MOVES[current.status].includes('void') || current.amount_paid_minor > 0n) throw invalidTransition(current.status, 'void');
        const row = await repository.updateInvoice(tx, ctx, invoiceId, {
          status: 'void',
          voided_at: ctx.now,
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        return present(tx, ctx, row);
      });
    },

    /**
     * Records money received against an open or partially paid invoice: at most the
     * amount due, in the invoice currency. Moves the invoice to partially_paid or paid.
     */
    async recordPayment(ctx: RequestContext, invoiceId: string, input: RecordPaymentInput): Promise<RecordedPaymentView> {
      const currency = input.currency !== undefined ? normalizeCurrency(input.currency)! : undefined;
      const amount = checkMoney(input.amount, 'amount', { ...MONEY_RULE, label: 'amount' }, currency);
      const problems: ErrorDetail[] = amount.ok ? [] : [amount.problem];
      const paidAt = input.paid_at !== undefined ? new Date(Date.parse(input.paid_at)) : ctx.now;
      if (Number.isNaN(paidAt.getTime())) {
        problems.push({ path: 'paid_at', code: 'invalid_format', message: 'paid_at must be an ISO 8601 date-time such as 2026-11-21T09:30:00.000Z.' });
      } else if (paidAt.getTime() > ctx.now.getTime() || paidAt.getTime() < EARLIEST_PAID_AT) {
        problems.push({ path: 'paid_at', code: 'out_of_range', message: 'paid_at must not be in the future (nor before 1970).' });
      }
      if (!amount.ok || problems.length > 0) throw validationFailed(problems);
      const amountMinor = minorOf(amount.value);

      return db.transaction().execute(async (tx: InvoicingDb) => {
        const current = await requireInvoice(tx, ctx, invoiceId);
        if (!PAYABLE.includes(current.status)) {
          throw new AppError('invoice_not_payable', `A ${current.status} invoice takes no payments; only open and partially_paid invoices do.`, [
            { path: 'status', code: 'invalid_state', message: 'Payments are recorded on open or partially_paid invoices.', status: current.status },
          ]);
        }
        if (currency !== undefined && currency !== current.currency) {
          throw validationFailed([{ path: 'currency', code: 'invalid_value', message: `The invoice is in ${current.currency}; a payment must be too.` }]);
        }
        const fits = fitCurrency(amount.value, 'amount', current.currency, 'amount');
        if (!fits.ok) throw validationFailed([fits.problem]);
        const due = amountDueMinor(current);
        if (amountMinor > due) {
          const dueText = money(due, current.currency);
          throw validationFailed([{ path: 'amount', code: 'out_of_range', message: `amount must be at most the amount due, ${dueText}.`, amount_due: dueText }]);
        }
        const payment = await repository.insertPayment(tx, ctx, {
          invoice_id: invoiceId,
          amount_minor: amountMinor,
          currency: current.currency,
          method: input.method?.trim() ?? 'manual',
          reference: cleanText(input.reference) ?? null,
          paid_at: paidAt,
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        const paid = current.amount_paid_minor + amountMinor;
        const fullyPaid = paid === current.total_minor;
        const row = await repository.updateInvoice(tx, ctx, invoiceId, {
          amount_paid_minor: paid,
          status: fullyPaid ? 'paid' : 'partially_paid',
          paid_at: fullyPaid ? paidAt : null,
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        const recorded = { ...presentPayment(payment), invoice: await present(tx, ctx, row) };
        await events.record(tx, ctx, 'invoicing.payment.created', recorded);
        if (fullyPaid) await events.record(tx, ctx, 'invoicing.invoice.paid', recorded.invoice);
        return recorded;
      });
    },
  };
}

/**
 * A draft moved to another currency keeps its lines, priced again with that currency's
 * rounding; a unit price the new currency cannot hold (12.50 in JPY) refuses the move.
 */
async function repriceLines(tx: InvoicingDb, ctx: RequestContext, invoiceId: string, currency: string) {
  const stored = await repository.findLines(tx, ctx, [invoiceId]);
  try {
    return readLines(
      stored.map((line) => ({ description: line.description, quantity: line.quantity, unit_price: line.unit_price, tax_rate: line.tax_rate })),
      currency,
    );
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const problems = (error.details ?? []).map((detail) => `${detail.path}: ${detail.message}`).join(' ');
    throw validationFailed([{ path: 'currency', code: 'invalid_value', message: `The draft's lines do not fit ${currency}; send line_items with the currency. ${problems}` }]);
  }
}

/** Checks and prices the lines of a create or update in `currency`; every problem is reported at once. */
export function readLines(items: readonly LineItemInputValue[], currency: string): { lines: NewLine[]; totals: InvoiceAmounts } {
  const problems: ErrorDetail[] = [];
  const lines: NewLine[] = [];
  items.forEach((item, index) => {
    const at = `line_items[${index}]`;
    const quantity = checkDecimal(item.quantity, `${at}.quantity`, { ...QUANTITY_RULE, label: 'quantity' });
    const unitPrice = checkUnitPrice(item.unit_price, `${at}.unit_price`, currency);
    const taxRate = item.tax_rate === undefined || item.tax_rate === null ? null : checkDecimal(item.tax_rate, `${at}.tax_rate`, { ...TAX_RATE_RULE, label: 'tax_rate' });
    for (const checked of [quantity, unitPrice, taxRate]) if (checked && !checked.ok) problems.push(checked.problem);
    if (!quantity.ok || !unitPrice.ok || (taxRate && !taxRate.ok)) return;
    const values = { quantity: quantity.value, unitPrice: unitPrice.value, taxRate: taxRate ? taxRate.value : null };
    const amounts = lineAmounts(values, currency);
    if (amounts.subtotalMinor + amounts.taxMinor > MAX_AMOUNT_MINOR) {
      problems.push({ path: at, code: 'out_of_range', message: `A line may total at most ${MAX_AMOUNT_TEXT}.` });
      return;
    }
    lines.push({
      position: index + 1,
      description: item.description.trim(),
      quantity: plain(values.quantity),
      unit_price: plain(values.unitPrice),
      tax_rate: values.taxRate === null ? null : plain(values.taxRate),
      subtotal_minor: amounts.subtotalMinor,
      tax_minor: amounts.taxMinor,
    });
  });
  if (problems.length > 0) throw validationFailed(problems);
  const totals = invoiceAmounts(lines.map((line) => ({ subtotalMinor: line.subtotal_minor, taxMinor: line.tax_minor })));
  if (totals.totalMinor > MAX_AMOUNT_MINOR) {
    throw validationFailed([{ path: 'line_items', code: 'out_of_range', message: `An invoice may total at most ${MAX_AMOUNT_TEXT}.` }]);
  }
  return { lines, totals };
}

function checkDates(issueDate: string, dueDate: string): void {
  if (dueDate < issueDate) {
    throw validationFailed([{ path: 'due_date', code: 'out_of_range', message: `due_date must not be before issue_date (${issueDate}).` }]);
  }
}

function notEditable(invoice: InvoiceRow, verb: 'edited' | 'deleted'): AppError {
  return new AppError('invoice_not_editable', `Only draft invoices can be ${verb}; this one is ${invoice.status}.`, [
    { path: 'status', code: 'invalid_state', message: `Only drafts can be ${verb}.`, status: invoice.status },
  ]);
}

function invalidTransition(from: InvoiceStatus, to: InvoiceStatus): AppError {
  const allowed = INVOICE_MOVES[from];
  return new AppError('invalid_status_transition', `A ${from} invoice cannot be moved to ${to}.`, [
    {
      path: 'status',
      code: 'invalid_transition',
      message: allowed.length > 0 ? `From ${from} an invoice can move to: ${allowed.join(', ')}.` : `${from} is final.`,
      from,
      to,
      allowed: [...allowed],
    },
  ]);
}
