import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorReply, IdParams } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  CreateEnrollmentBody,
  CreateSequenceBody,
  CreateSuppressionBody,
  DeletedSequence,
  DeletedSuppression,
  Enrollment,
  EnrollmentParams,
  EnrollmentReply,
  InboundBody,
  InboundResult,
  ListEnrollmentsQuery,
  ListMessagesQuery,
  ListSequencesQuery,
  ListSuppressionsQuery,
  Message,
  MessageStatusBody,
  Sequence,
  SequenceParams,
  StatusCallbackBody,
  Suppression,
  SuppressionParams,
  UpdateSequenceBody,
} from './schemas.js';
import type { OutreachService } from './service.js';

const VIEW = 'service.outreach.view';
const MANAGE = 'service.outreach.manage';

export function outreachRoutes(outreach: OutreachService) {
  return async function registerOutreachRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const sequences = { tags: ['Outreach: sequences'] };
    const enrollments = { tags: ['Outreach: enrollments'] };
    const messages = { tags: ['Outreach: messages'] };
    const suppressions = { tags: ['Outreach: suppressions'] };

    // Sequences

    routes.post('/sequences', {
      config: { scope: MANAGE },
      schema: { ...sequences, operationId: 'outreachCreateSequence', summary: 'Create a message sequence', body: CreateSequenceBody, response: { 201: DataEnvelope(Sequence) } },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await outreach.createSequence(requestContext(request), request.body) };
      },
    });

    routes.get('/sequences', {
      config: { scope: VIEW },
      schema: {
        ...sequences,
        operationId: 'outreachListSequences',
        summary: 'List sequences, newest first, with enrollment counts',
        querystring: ListSequencesQuery,
        response: { 200: ListEnvelope(Sequence) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await outreach.listSequences(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/sequences/:id', {
      config: { scope: VIEW },
      schema: { ...sequences, operationId: 'outreachGetSequence', summary: 'Fetch a sequence', params: SequenceParams, response: { 200: DataEnvelope(Sequence) } },
      handler: async (request) => ({ data: await outreach.getSequence(requestContext(request), request.params.id) }),
    });

    routes.patch('/sequences/:id', {
      config: { scope: MANAGE },
      schema: {
        ...sequences,
        operationId: 'outreachUpdateSequence',
        summary: 'Update a sequence: name, status, steps, send window, time zone',
        params: SequenceParams,
        body: UpdateSequenceBody,
        response: { 200: DataEnvelope(Sequence), 409: ErrorReply('stale_update: the sequence changed since expected_updated_at.') },
      },
      handler: async (request) => ({ data: await outreach.updateSequence(requestContext(request), request.params.id, request.body) }),
    });

    routes.delete('/sequences/:id', {
      config: { scope: MANAGE },
      schema: {
        ...sequences,
        operationId: 'outreachDeleteSequence',
        summary: 'Delete a sequence without enrollments',
        params: SequenceParams,
        response: { 200: DataEnvelope(DeletedSequence), 409: ErrorReply('sequence_in_use: the sequence has enrollments; archive it instead.') },
      },
      handler: async (request) => ({ data: await outreach.deleteSequence(requestContext(request), request.params.id) }),
    });

    // Enrollments

    routes.post('/sequences/:id/enrollments', {
      config: { scope: MANAGE },
      schema: {
        ...enrollments,
        operationId: 'outreachCreateEnrollments',
        summary: 'Enrol one person (address) or a batch (enrollments); a person already active is returned with 200',
        params: SequenceParams,
        body: CreateEnrollmentBody,
        response: {
          200: DataEnvelope(EnrollmentReply),
          201: DataEnvelope(EnrollmentReply),
          409: ErrorReply('address_suppressed: the number is on the suppression list; sequence_archived: the sequence is archived.'),
        },
      },
      handler: async (request, reply) => {
        const { created, data } = await outreach.enroll(requestContext(request), request.params.id, request.body);
        reply.code(created ? 201 : 200);
        return { data };
      },
    });

    routes.get('/sequences/:id/enrollments', {
      config: { scope: VIEW },
      schema: {
        ...enrollments,
        operationId: 'outreachListEnrollments',
        summary: 'List the enrollments of a sequence, newest first',
        params: SequenceParams,
        querystring: ListEnrollmentsQuery,
        response: { 200: ListEnvelope(Enrollment) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await outreach.listEnrollments(requestContext(request), request.params.id, filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/sequences/:id/enrollments/:enrollment_id', {
      config: { scope: VIEW },
      schema: { ...enrollments, operationId: 'outreachGetEnrollment', summary: 'Fetch an enrollment', params: EnrollmentParams, response: { 200: DataEnvelope(Enrollment) } },
      handler: async (request) => ({ data: await outreach.getEnrollment(requestContext(request), request.params.id, request.params.enrollment_id) }),
    });

    routes.delete('/sequences/:id/enrollments/:enrollment_id', {
      config: { scope: MANAGE },
      schema: {
        ...enrollments,
        operationId: 'outreachRemoveEnrollment',
        summary: 'Take a person off the sequence (status exited, exit_reason removed); a repeat gives the same reply',
        params: EnrollmentParams,
        response: { 200: DataEnvelope(Enrollment) },
      },
      handler: async (request) => ({ data: await outreach.removeEnrollment(requestContext(request), request.params.id, request.params.enrollment_id) }),
    });

    // Messages

    routes.get('/messages', {
      config: { scope: VIEW },
      schema: {
        ...messages,
        operationId: 'outreachListMessages',
        summary: 'List messages sent and received, newest first',
        querystring: ListMessagesQuery,
        response: { 200: ListEnvelope(Message) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await outreach.listMessages(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/messages/:id', {
      config: { scope: VIEW },
      schema: { ...messages, operationId: 'outreachGetMessage', summary: 'Fetch a message', params: IdParams, response: { 200: DataEnvelope(Message) } },
      handler: async (request) => ({ data: await outreach.getMessage(requestContext(request), request.params.id) }),
    });

    routes.post('/status-callbacks', {
      config: { scope: MANAGE },
      schema: {
        ...messages,
        operationId: 'outreachRecordMessageStatus',
        summary: 'Record a delivery status reported by the provider (sent, delivered, failed); never moves a message back',
        body: StatusCallbackBody,
        response: { 200: DataEnvelope(Message) },
      },
      handler: async (request) => ({ data: await outreach.recordStatus(requestContext(request), request.body) }),
    });

    routes.post('/messages/:id/status', {
      config: { scope: MANAGE },
      schema: {
        ...messages,
        operationId: 'outreachSetMessageStatus',
        summary: 'Record the delivery status of one message (sent, delivered, failed); never moves it back',
        params: IdParams,
        body: MessageStatusBody,
        response: { 200: DataEnvelope(Message) },
      },
      handler: async (request) => ({ data: await outreach.recordStatus(requestContext(request), { message_id: request.params.id, ...request.body }) }),
    });

    routes.post('/inbound', {
      config: { scope: MANAGE },
      schema: {
        ...messages,
        operationId: 'outreachReceiveMessage',
        summary: 'Receive a message from a person: a reply exits their enrollments, STOP opts out, START opts back in',
        body: InboundBody,
        response: { 200: DataEnvelope(InboundResult) },
      },
      handler: async (request) => ({ data: await outreach.inbound(requestContext(request), request.body) }),
    });

    // Suppressions

    routes.get('/suppressions', {
      config: { scope: VIEW },
      schema: {
        ...suppressions,
        operationId: 'outreachListSuppressions',
        summary: 'List suppressed numbers, newest first',
        querystring: ListSuppressionsQuery,
        response: { 200: ListEnvelope(Suppression) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await outreach.listSuppressions(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.post('/suppressions', {
      config: { scope: MANAGE },
      schema: {
        ...suppressions,
        operationId: 'outreachCreateSuppression',
        summary: 'Suppress a number (its active enrollments exit with opted_out); a number already listed is returned with 200',
        body: CreateSuppressionBody,
        response: { 200: DataEnvelope(Suppression), 201: DataEnvelope(Suppression) },
      },
      handler: async (request, reply) => {
        const { created, data } = await outreach.createSuppression(requestContext(request), request.body);
        reply.code(created ? 201 : 200);
        return { data };
      },
    });

    routes.get('/suppressions/:id', {
      config: { scope: VIEW },
      schema: {
        ...suppressions,
        operationId: 'outreachGetSuppression',
        summary: 'Fetch a suppression by id or by number',
        params: SuppressionParams,
        response: { 200: DataEnvelope(Suppression) },
      },
      handler: async (request) => ({ data: await outreach.getSuppression(requestContext(request), request.params.id) }),
    });

    routes.delete('/suppressions/:id', {
      config: { scope: MANAGE },
      schema: {
        ...suppressions,
        operationId: 'outreachDeleteSuppression',
        summary: 'Remove a number from the suppression list (by id or by number)',
        params: SuppressionParams,
        response: { 200: DataEnvelope(DeletedSuppression) },
      },
      handler: async (request) => ({ data: await outreach.deleteSuppression(requestContext(request), request.params.id) }),
    });
  };
}
