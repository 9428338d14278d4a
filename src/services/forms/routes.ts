import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorReply } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  CreateFormBody,
  Deleted,
  Form,
  FormIdParams,
  ListFormsQuery,
  ListSubmissionsQuery,
  SlugParams,
  Submission,
  SubmissionParams,
  SubmitBody,
  UpdateFormBody,
  UpdateSubmissionBody,
} from './schemas.js';
import type { FormsService } from './service.js';

const VIEW = 'service.forms.view';
const MANAGE = 'service.forms.manage';
const SUBMIT = 'service.forms.submit';
const SUBMISSIONS_MANAGE = 'service.forms.submissions.manage';
const EXPORT = 'service.forms.export';

const CSV_RESPONSE = {
  description:
    'text/csv; charset=utf-8, sent as an attachment named <slug>-submissions.csv. Header row id,submitted_at,read, then one column per field key in form order; ' +
    'one row per submission, oldest first; RFC 4180 quoting and CRLF line ends; multiselect answers joined with "; "; ' +
    "text cells starting with = + - @, tab or a line break prefixed with ' against spreadsheet formula injection.",
  // Streamed, as long as the submissions make it: no type, so no length limit to state.
  content: { 'text/csv': { schema: { contentMediaType: 'text/csv' } } },
};

export function formsRoutes(forms: FormsService) {
  return async function registerFormsRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const formTags = { tags: ['Forms: forms'] };
    const submissionTags = { tags: ['Forms: submissions'] };

    routes.get('/forms', {
      config: { scope: VIEW },
      schema: {
        ...formTags,
        operationId: 'formsListForms',
        summary: 'List forms with their submission and unread counts, newest first',
        querystring: ListFormsQuery,
        response: { 200: ListEnvelope(Form) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await forms.listForms(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/forms/by-slug/:slug', {
      config: { scope: VIEW },
      schema: { ...formTags, operationId: 'formsGetFormBySlug', summary: 'Fetch a form definition by slug', params: SlugParams, response: { 200: DataEnvelope(Form) } },
      handler: async (request) => ({ data: await forms.getFormBySlug(requestContext(request), request.params.slug) }),
    });

    routes.post('/forms', {
      config: { scope: MANAGE },
      schema: {
        ...formTags,
        operationId: 'formsCreateForm',
        summary: 'Create a form (a draft unless status is sent)',
        body: CreateFormBody,
        response: { 201: DataEnvelope(Form), 409: ErrorReply('slug_taken: another form of this tenant and mode uses the slug.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await forms.createForm(requestContext(request), request.body) };
      },
    });

    routes.get('/forms/:id', {
      config: { scope: VIEW },
      schema: { ...formTags, operationId: 'formsGetForm', summary: 'Fetch a form by id', params: FormIdParams, response: { 200: DataEnvelope(Form) } },
      handler: async (request) => ({ data: await forms.getForm(requestContext(request), request.params.id) }),
    });

    routes.patch('/forms/:id', {
      config: { scope: MANAGE },
      schema: {
        ...formTags,
        operationId: 'formsUpdateForm',
        summary: 'Update a form: any of its settings, its status (draft, published, closed) or its whole field list',
        params: FormIdParams,
        body: UpdateFormBody,
        response: { 200: DataEnvelope(Form), 409: ErrorReply('slug_taken: another form of this tenant and mode uses the slug.') },
      },
      handler: async (request) => ({ data: await forms.updateForm(requestContext(request), request.params.id, request.body) }),
    });

    routes.delete('/forms/:id', {
      config: { scope: MANAGE },
      schema: { ...formTags, operationId: 'formsDeleteForm', summary: 'Delete a form and all its submissions', params: FormIdParams, response: { 200: DataEnvelope(Deleted) } },
      handler: async (request) => ({ data: await forms.deleteForm(requestContext(request), request.params.id) }),
    });

    routes.post('/forms/:slug/submit', {
      config: { scope: SUBMIT },
      schema: {
        ...submissionTags,
        operationId: 'formsSubmit',
        summary: 'Submit a response to a published form',
        description:
          'Only a published form accepts submissions (otherwise 409 form_not_published). The answers are checked against the fields; every problem is one entry of details, at data.<key>.',
        params: SlugParams,
        body: SubmitBody,
        response: { 201: DataEnvelope(Submission), 409: ErrorReply('form_not_published: the form is a draft or closed.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await forms.submit(requestContext(request), request.params.slug, request.body) };
      },
    });

    routes.get('/forms/:id/submissions', {
      config: { scope: VIEW },
      schema: {
        ...submissionTags,
        operationId: 'formsListSubmissions',
        summary: 'List submissions of a form, newest first',
        params: FormIdParams,
        querystring: ListSubmissionsQuery,
        response: { 200: ListEnvelope(Submission) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await forms.listSubmissions(requestContext(request), request.params.id, filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/forms/:id/submissions.csv', {
      config: { scope: EXPORT },
      schema: {
        ...submissionTags,
        operationId: 'formsExportSubmissionsCsv',
        summary: 'Export all submissions of a form as CSV',
        params: FormIdParams,
        response: { 200: CSV_RESPONSE },
      },
      handler: async (request, reply) => {
        const { filename, stream } = await forms.exportSubmissionsCsv(requestContext(request), request.params.id);
        reply.type('text/csv; charset=utf-8').header('Content-Disposition', `attachment; filename="${filename}"`).header('Cache-Control', 'no-store');
        if (request.method === 'HEAD') {
          // Nothing has been read yet; a HEAD must not run the whole export just to discard it.
          stream.destroy();
          return reply.send();
        }
        return reply.send(stream);
      },
    });

    routes.get('/forms/:id/submissions/:subId', {
      config: { scope: VIEW },
      schema: {
        ...submissionTags,
        operationId: 'formsGetSubmission',
        summary: 'Read a submission; marks it read',
        params: SubmissionParams,
        response: { 200: DataEnvelope(Submission) },
      },
      handler: async (request) => ({ data: await forms.readSubmission(requestContext(request), request.params.id, request.params.subId) }),
    });

    routes.patch('/forms/:id/submissions/:subId', {
      config: { scope: SUBMISSIONS_MANAGE },
      schema: {
        ...submissionTags,
        operationId: 'formsUpdateSubmission',
        summary: 'Mark a submission read or unread',
        params: SubmissionParams,
        body: UpdateSubmissionBody,
        response: { 200: DataEnvelope(Submission) },
      },
      handler: async (request) => ({
        data: await forms.updateSubmission(requestContext(request), request.params.id, request.params.subId, request.body),
      }),
    });

    routes.delete('/forms/:id/submissions/:subId', {
      config: { scope: SUBMISSIONS_MANAGE },
      schema: { ...submissionTags, operationId: 'formsDeleteSubmission', summary: 'Delete a submission', params: SubmissionParams, response: { 200: DataEnvelope(Deleted) } },
      handler: async (request) => ({ data: await forms.deleteSubmission(requestContext(request), request.params.id, request.params.subId) }),
    });
  };
}
