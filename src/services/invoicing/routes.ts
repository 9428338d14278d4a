import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorReply, IntegerIdParams } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  Approval,
  ApprovalPolicy,
  CreateApprovalPolicyBody,
  CreateCustomerBody,
  CreatedCustomer,
  CreateInvoiceBody,
  CreateRefundBody,
  Customer,
  DecideApprovalBody,
  Deleted,
  Invoice,
  ListApprovalPoliciesQuery,
  ListApprovalsQuery,
  ListCustomersQuery,
  ListInvoicesQuery,
  ListRefundsQuery,
  PendingApproval,
  RecordedPayment,
  RecordPaymentBody,
  Refund,
  UpdateCustomerBody,
  UpdateInvoiceBody,
} from './schemas.js';
import type { InvoicingService } from './service.js';

const VIEW = 'service.invoicing.view';
const MANAGE = 'service.invoicing.manage';
/** Deciding refund approvals and setting the policies that require them: kept apart from manage. */
const APPROVE = 'service.invoicing.approve';

export function invoicingRoutes(invoicing: InvoicingService) {
  return async function registerInvoicingRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const customers = { tags: ['Invoicing: customers'] };
    const invoices = { tags: ['Invoicing: invoices'] };
    const refunds = { tags: ['Invoicing: refunds'] };
    const approvals = { tags: ['Invoicing: approvals'] };

    // Customers

    routes.post('/customers', {
      config: { scope: MANAGE },
      schema: {
        ...customers,
        operationId: 'invoicingCreateCustomer',
        summary: 'Create a customer',
        description: 'display_name is required and trimmed; email is lower-cased; defaults: 30 days payment terms, USD. notes is stored but not returned in this reply.',
        body: CreateCustomerBody,
        response: { 201: DataEnvelope(CreatedCustomer) },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await invoicing.createCustomer(requestContext(request), request.body) };
      },
    });

    routes.get('/customers', {
      config: { scope: VIEW },
      schema: {
        ...customers,
        operationId: 'invoicingListCustomers',
        summary: 'List customers, newest first',
        querystring: ListCustomersQuery,
        response: { 200: ListEnvelope(Customer) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await invoicing.listCustomers(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/customers/:id', {
      config: { scope: VIEW },
      schema: { ...customers, operationId: 'invoicingGetCustomer', summary: 'Fetch a customer', params: IntegerIdParams, response: { 200: DataEnvelope(Customer) } },
      handler: async (request) => ({ data: await invoicing.getCustomer(requestContext(request), request.params.id) }),
    });

    routes.patch('/customers/:id', {
      config: { scope: MANAGE },
      schema: {
        ...customers,
        operationId: 'invoicingUpdateCustomer',
        summary: 'Update a customer',
        description: 'Send expected_updated_at to refuse the write (409 stale_update) if the customer changed since you read it.',
        params: IntegerIdParams,
        body: UpdateCustomerBody,
        response: { 200: DataEnvelope(Customer) },
      },
      handler: async (request) => ({ data: await invoicing.updateCustomer(requestContext(request), request.params.id, request.body) }),
    });

    routes.post('/customers/:id/archive', {
      config: { scope: MANAGE },
      schema: {
        ...customers,
        operationId: 'invoicingArchiveCustomer',
        summary: 'Archive a customer (is_active false)',
        description: 'Archived customers keep their invoices and payments but cannot be billed on new invoices. Archiving an archived customer returns it unchanged.',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Customer) },
      },
      handler: async (request) => ({ data: await invoicing.setCustomerActive(requestContext(request), request.params.id, false) }),
    });

    routes.post('/customers/:id/unarchive', {
      config: { scope: MANAGE },
      schema: {
        ...customers,
        operationId: 'invoicingUnarchiveCustomer',
        summary: 'Unarchive a customer (is_active true)',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Customer) },
      },
      handler: async (request) => ({ data: await invoicing.setCustomerActive(requestContext(request), request.params.id, true) }),
    });

    // Invoices

    routes.post('/invoices', {
      config: { scope: MANAGE },
      schema: {
        ...invoices,
        operationId: 'invoicingCreateInvoice',
        summary: 'Create a draft invoice',
        description: 'The invoice gets the next number of the tenant and mode (INV-000001, ...), never reused. Only drafts can be edited or deleted.',
        body: CreateInvoiceBody,
        response: { 201: DataEnvelope(Invoice), 409: ErrorReply('customer_archived: the customer is archived.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await invoicing.createInvoice(requestContext(request), request.body) };
      },
    });

    routes.get('/invoices', {
      config: { scope: VIEW },
      schema: {
        ...invoices,
        operationId: 'invoicingListInvoices',
        summary: 'List invoices, newest first',
        querystring: ListInvoicesQuery,
        response: { 200: ListEnvelope(Invoice) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await invoicing.listInvoices(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/invoices/:id', {
      config: { scope: VIEW },
      schema: {
        ...invoices,
        operationId: 'invoicingGetInvoice',
        summary: 'Fetch an invoice with its lines and payments',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Invoice) },
      },
      handler: async (request) => ({ data: await invoicing.getInvoice(requestContext(request), request.params.id) }),
    });

    routes.patch('/invoices/:id', {
      config: { scope: MANAGE },
      schema: {
        ...invoices,
        operationId: 'invoicingUpdateInvoice',
        summary: 'Update a draft invoice',
        description: 'Drafts only (else 409 invoice_not_editable). line_items replaces every line.',
        params: IntegerIdParams,
        body: UpdateInvoiceBody,
        response: { 200: DataEnvelope(Invoice), 409: ErrorReply('invoice_not_editable: the invoice is not a draft; customer_archived: the new customer is archived.') },
      },
      handler: async (request) => ({ data: await invoicing.updateInvoice(requestContext(request), request.params.id, request.body) }),
    });

    routes.delete('/invoices/:id', {
      config: { scope: MANAGE },
      schema: {
        ...invoices,
        operationId: 'invoicingDeleteInvoice',
        summary: 'Delete a draft invoice',
        description: 'Drafts only (else 409 invoice_not_editable; void an open invoice instead). The number stays used.',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Deleted), 409: ErrorReply('invoice_not_editable: the invoice is not a draft.') },
      },
      handler: async (request) => ({ data: await invoicing.deleteInvoice(requestContext(request), request.params.id) }),
    });

    routes.post('/invoices/:id/finalize', {
      config: { scope: MANAGE },
      schema: {
        ...invoices,
        operationId: 'invoicingFinalizeInvoice',
        summary: 'Finalize a draft: draft -> open',
        description: 'Needs at least one line and a total above 0 (else 409 invoice_not_finalizable). Any other status: 409 invalid_status_transition.',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Invoice), 409: ErrorReply('invalid_status_transition: the invoice is not a draft; invoice_not_finalizable: no lines, or a total of 0.00.') },
      },
      handler: async (request) => ({ data: await invoicing.finalizeInvoice(requestContext(request), request.params.id) }),
    });

    routes.post('/invoices/:id/void', {
      config: { scope: MANAGE },
      schema: {
        ...invoices,
        operationId: 'invoicingVoidInvoice',
        summary: 'Void a draft or open invoice',
        description: 'Only draft or open invoices (no payments) can be voided; otherwise 409 invalid_status_transition. Void is final.',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Invoice), 409: ErrorReply('invalid_status_transition: the invoice is paid, void, or has payments.') },
      },
      handler: async (request) => ({ data: await invoicing.voidInvoice(requestContext(request), request.params.id) }),
    });

    routes.post('/invoices/:id/payments', {
      config: { scope: MANAGE },
      schema: {
        ...invoices,
        operationId: 'invoicingRecordPayment',
        summary: 'Record a customer payment on an invoice',
        description:
          'Open or partially_paid invoices only (else 409 invoice_not_payable). amount > 0, at most 2 decimals, at most the amount due (else 400). ' +
          'The invoice becomes partially_paid, or paid when nothing is left due.',
        params: IntegerIdParams,
        body: RecordPaymentBody,
        response: { 201: DataEnvelope(RecordedPayment), 409: ErrorReply('invoice_not_payable: the invoice is not open or partially paid.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await invoicing.recordPayment(requestContext(request), request.params.id, request.body) };
      },
    });

    // Refunds

    routes.post('/refunds', {
      config: { scope: MANAGE },
      schema: {
        ...refunds,
        operationId: 'invoicingCreateRefund',
        summary: 'Refund a recorded payment',
        description:
          'Refunds part or all of a payment, up to its refundable balance (amount - refunds - refunds awaiting approval). ' +
          'When an approval policy matches, nothing is refunded yet: 202 with pending_approval and the approval to poll.',
        body: CreateRefundBody,
        response: {
          201: { ...DataEnvelope(Refund), description: 'The refund was recorded.' },
          202: { ...DataEnvelope(PendingApproval), description: 'An approval policy matched: the request waits for approval.' },
        },
      },
      handler: async (request, reply) => {
        const outcome = await invoicing.createRefund(requestContext(request), request.body);
        if (outcome.kind === 'pending_approval') {
          reply.code(202);
          return { data: outcome.pending };
        }
        reply.code(201);
        return { data: outcome.refund };
      },
    });

    routes.get('/refunds', {
      config: { scope: VIEW },
      schema: { ...refunds, operationId: 'invoicingListRefunds', summary: 'List refunds, newest first', querystring: ListRefundsQuery, response: { 200: ListEnvelope(Refund) } },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await invoicing.listRefunds(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/refunds/:id', {
      config: { scope: VIEW },
      schema: { ...refunds, operationId: 'invoicingGetRefund', summary: 'Fetch a refund', params: IntegerIdParams, response: { 200: DataEnvelope(Refund) } },
      handler: async (request) => ({ data: await invoicing.getRefund(requestContext(request), request.params.id) }),
    });

    // Approval policies

    routes.post('/approval-policies', {
      config: { scope: APPROVE },
      schema: {
        ...approvals,
        operationId: 'invoicingCreateApprovalPolicy',
        summary: 'Require approval for refunds at or above an amount',
        description: 'A refund request matches when its amount is at or above min_amount and, if the policy names a currency, is in that currency.',
        body: CreateApprovalPolicyBody,
        response: { 201: DataEnvelope(ApprovalPolicy) },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await invoicing.createPolicy(requestContext(request), request.body) };
      },
    });

    routes.get('/approval-policies', {
      config: { scope: VIEW },
      schema: {
        ...approvals,
        operationId: 'invoicingListApprovalPolicies',
        summary: 'List approval policies, newest first',
        querystring: ListApprovalPoliciesQuery,
        response: { 200: ListEnvelope(ApprovalPolicy) },
      },
      handler: async (request) => {
        const { limit, offset } = request.query;
        const { rows, total } = await invoicing.listPolicies(requestContext(request), { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/approval-policies/:id', {
      config: { scope: VIEW },
      schema: {
        ...approvals,
        operationId: 'invoicingGetApprovalPolicy',
        summary: 'Fetch an approval policy',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(ApprovalPolicy) },
      },
      handler: async (request) => ({ data: await invoicing.getPolicy(requestContext(request), request.params.id) }),
    });

    routes.delete('/approval-policies/:id', {
      config: { scope: APPROVE },
      schema: {
        ...approvals,
        operationId: 'invoicingDeleteApprovalPolicy',
        summary: 'Delete an approval policy',
        description: 'New refund requests no longer match it; approvals already pending stay pending.',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Deleted) },
      },
      handler: async (request) => ({ data: await invoicing.deletePolicy(requestContext(request), request.params.id) }),
    });

    // Approvals

    routes.get('/approvals', {
      config: { scope: VIEW },
      schema: {
        ...approvals,
        operationId: 'invoicingListApprovals',
        summary: 'List refund approvals, newest first',
        querystring: ListApprovalsQuery,
        response: { 200: ListEnvelope(Approval) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await invoicing.listApprovals(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/approvals/:id', {
      config: { scope: VIEW },
      schema: {
        ...approvals,
        operationId: 'invoicingGetApproval',
        summary: 'Fetch an approval (poll it after a 202 refund request)',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Approval) },
      },
      handler: async (request) => ({ data: await invoicing.getApproval(requestContext(request), request.params.id) }),
    });

    routes.post('/approvals/:id/approve', {
      config: { scope: APPROVE },
      schema: {
        ...approvals,
        operationId: 'invoicingApprove',
        summary: 'Approve a pending refund request (creates the refund)',
        description: 'Creates the refund exactly once, after checking the balance again. Deciding an approval twice is 409 approval_already_decided.',
        params: IntegerIdParams,
        body: DecideApprovalBody,
        response: { 200: DataEnvelope(Approval), 409: ErrorReply('approval_already_decided: the approval was approved or rejected already.') },
      },
      handler: async (request) => ({ data: await invoicing.approve(requestContext(request), request.params.id, request.body) }),
    });

    routes.post('/approvals/:id/reject', {
      config: { scope: APPROVE },
      schema: {
        ...approvals,
        operationId: 'invoicingReject',
        summary: 'Reject a pending refund request (releases the reserved amount)',
        description: 'Deciding an approval twice is 409 approval_already_decided.',
        params: IntegerIdParams,
        body: DecideApprovalBody,
        response: { 200: DataEnvelope(Approval), 409: ErrorReply('approval_already_decided: the approval was approved or rejected already.') },
      },
      handler: async (request) => ({ data: await invoicing.reject(requestContext(request), request.params.id, request.body) }),
    });
  };
}
