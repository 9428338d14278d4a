import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorReply, IntegerIdParams } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  ActorBody,
  AssignBody,
  AssignReply,
  Assignment,
  AssignmentDetail,
  Category,
  CheckBody,
  CheckParams,
  CreateCategoryBody,
  CreateTaskBody,
  Deleted,
  DueBody,
  LinkBody,
  LinkParams,
  ListAssignmentsQuery,
  ListCategoriesQuery,
  ListLinksQuery,
  ListTasksQuery,
  Review,
  ReviewBody,
  Rollup,
  Submission,
  SubmitBody,
  Task,
  TaskLink,
  TransferBody,
  UpdateAssignmentBody,
  UpdateCategoryBody,
  UpdateTaskBody,
} from './schemas.js';
import type { TasksService } from './service.js';

const VIEW = 'service.tasks.view';
const MANAGE = 'service.tasks.manage';

const STALE = ErrorReply('stale_update: the object changed since expected_updated_at.');
const MOVE = ErrorReply('invalid_status_transition: the move is not allowed from the current status.');
/** The submission (or review) as created, with the assignment as it is after it beside. */
const SubmitReply = Type.Object(
  { ...Submission.properties, assignment: Type.Object(Assignment.properties, { additionalProperties: false, description: 'The assignment after the submission.' }) },
  { title: 'TasksSubmitResult', additionalProperties: false },
);
const ReviewReply = Type.Object(
  { ...Review.properties, assignment: Type.Object(Assignment.properties, { additionalProperties: false, description: 'The assignment after the review.' }) },
  { title: 'TasksReviewResult', additionalProperties: false },
);

export function tasksRoutes(tasks: TasksService) {
  return async function registerTasksRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const categories = { tags: ['Tasks: categories'] };
    const taskTags = { tags: ['Tasks: tasks'] };
    const assignmentTags = { tags: ['Tasks: assignments'] };
    const linkTags = { tags: ['Tasks: links'] };

    // Categories

    routes.post('/categories', {
      config: { scope: MANAGE },
      schema: {
        ...categories,
        operationId: 'tasksCreateCategory',
        summary: 'Create a category with a default grading scheme',
        body: CreateCategoryBody,
        response: { 201: DataEnvelope(Category) },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await tasks.createCategory(requestContext(request), request.body) };
      },
    });

    routes.get('/categories', {
      config: { scope: VIEW },
      schema: {
        ...categories,
        operationId: 'tasksListCategories',
        summary: 'List categories, newest first',
        querystring: ListCategoriesQuery,
        response: { 200: ListEnvelope(Category) },
      },
      handler: async (request) => {
        const { limit, offset } = request.query;
        const { rows, total } = await tasks.listCategories(requestContext(request), { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/categories/:id', {
      config: { scope: VIEW },
      schema: { ...categories, operationId: 'tasksGetCategory', summary: 'Fetch a category', params: IntegerIdParams, response: { 200: DataEnvelope(Category) } },
      handler: async (request) => ({ data: await tasks.getCategory(requestContext(request), request.params.id) }),
    });

    routes.patch('/categories/:id', {
      config: { scope: MANAGE },
      schema: {
        ...categories,
        operationId: 'tasksUpdateCategory',
        summary: 'Update a category',
        params: IntegerIdParams,
        body: UpdateCategoryBody,
        response: { 200: DataEnvelope(Category), 409: STALE },
      },
      handler: async (request) => ({ data: await tasks.updateCategory(requestContext(request), request.params.id, request.body) }),
    });

    routes.delete('/categories/:id', {
      config: { scope: MANAGE },
      schema: {
        ...categories,
        operationId: 'tasksDeleteCategory',
        summary: 'Delete a category without tasks',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Deleted), 409: ErrorReply('conflict: the category has tasks.') },
      },
      handler: async (request) => ({ data: await tasks.deleteCategory(requestContext(request), request.params.id) }),
    });

    routes.get('/categories/:id/rollup', {
      config: { scope: VIEW },
      schema: {
        ...categories,
        operationId: 'tasksCategoryRollup',
        summary: "A person's grade in a category, weighted by task weight",
        params: IntegerIdParams,
        querystring: Type.Object(
          {
            assignee_user_id: Type.Optional(
              Type.Integer({
                format: 'int64',
                minimum: 1,
                maximum: Number.MAX_SAFE_INTEGER,
                description: "Whose grades; without it, every assignee's graded work together.",
                examples: [7],
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: DataEnvelope(Rollup) },
      },
      handler: async (request) => ({ data: await tasks.rollup(requestContext(request), request.params.id, request.query.assignee_user_id) }),
    });

    // Tasks

    routes.post('/tasks', {
      config: { scope: MANAGE },
      schema: {
        ...taskTags,
        operationId: 'tasksCreateTask',
        summary: 'Create a task (draft unless status published)',
        body: CreateTaskBody,
        response: { 201: DataEnvelope(Task) },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await tasks.createTask(requestContext(request), request.body) };
      },
    });

    routes.get('/tasks', {
      config: { scope: VIEW },
      schema: { ...taskTags, operationId: 'tasksListTasks', summary: 'List tasks, newest first', querystring: ListTasksQuery, response: { 200: ListEnvelope(Task) } },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await tasks.listTasks(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/tasks/:id', {
      config: { scope: VIEW },
      schema: { ...taskTags, operationId: 'tasksGetTask', summary: 'Fetch a task', params: IntegerIdParams, response: { 200: DataEnvelope(Task) } },
      handler: async (request) => ({ data: await tasks.getTask(requestContext(request), request.params.id) }),
    });

    routes.patch('/tasks/:id', {
      config: { scope: MANAGE },
      schema: {
        ...taskTags,
        operationId: 'tasksUpdateTask',
        summary: 'Update a task or move its status (cancelling cancels its open assignments)',
        params: IntegerIdParams,
        body: UpdateTaskBody,
        response: {
          200: DataEnvelope(Task),
          409: ErrorReply('stale_update: the task changed since expected_updated_at. invalid_status_transition: the status move is not allowed.'),
        },
      },
      handler: async (request) => ({ data: await tasks.updateTask(requestContext(request), request.params.id, request.body) }),
    });

    routes.delete('/tasks/:id', {
      config: { scope: MANAGE },
      schema: {
        ...taskTags,
        operationId: 'tasksDeleteTask',
        summary: 'Delete a task with its assignments, submissions, reviews and links',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(Deleted) },
      },
      handler: async (request) => ({ data: await tasks.deleteTask(requestContext(request), request.params.id) }),
    });

    // Assignments

    routes.post('/tasks/:id/assignments', {
      config: { scope: MANAGE },
      schema: {
        ...assignmentTags,
        operationId: 'tasksAssignTask',
        summary: 'Assign a task to people',
        params: IntegerIdParams,
        body: AssignBody,
        response: { 201: DataEnvelope(AssignReply), 409: ErrorReply('invalid_status_transition: the task cannot be assigned. conflict: a user already holds an open assignment.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await tasks.assign(requestContext(request), request.params.id, request.body) };
      },
    });

    routes.get('/assignments', {
      config: { scope: VIEW },
      schema: {
        ...assignmentTags,
        operationId: 'tasksListAssignments',
        summary: "List assignments, newest first; with assignee_user_id, that person's view",
        querystring: ListAssignmentsQuery,
        response: { 200: ListEnvelope(Assignment) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await tasks.listAssignments(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/assignments/:id', {
      config: { scope: VIEW },
      schema: {
        ...assignmentTags,
        operationId: 'tasksGetAssignment',
        summary: 'Fetch one assignment with its task, submissions (newest first), reviews and events',
        params: IntegerIdParams,
        response: { 200: DataEnvelope(AssignmentDetail) },
      },
      handler: async (request) => ({ data: await tasks.getAssignment(requestContext(request), request.params.id) }),
    });

    const action = (
      path: string,
      operationId: string,
      summary: string,
      body: typeof ActorBody | typeof TransferBody | typeof DueBody,
      run: (request: { params: { id: string }; body: never }, ctx: ReturnType<typeof requestContext>) => Promise<unknown>,
    ) =>
      routes.post(`/assignments/:id/${path}`, {
        config: { scope: MANAGE },
        schema: { ...assignmentTags, operationId, summary, params: IntegerIdParams, body, response: { 200: DataEnvelope(Assignment), 409: MOVE } },
        handler: async (request) => ({ data: (await run(request as never, requestContext(request))) as never }),
      });

    action('start', 'tasksStartAssignment', 'Start work on an assignment', ActorBody, (request, ctx) => tasks.start(ctx, request.params.id, request.body));
    action('reassign', 'tasksReassignAssignment', 'Hand the assignment to another person', TransferBody, (request, ctx) =>
      tasks.transfer(ctx, request.params.id, 'reassigned', request.body),
    );
    action('delegate', 'tasksDelegateAssignment', 'Delegate the assignment to another person, with a reason', TransferBody, (request, ctx) =>
      tasks.transfer(ctx, request.params.id, 'delegated', request.body),
    );
    action('extend-due', 'tasksChangeAssignmentDue', 'Change the due date (original_due_at stays)', DueBody, (request, ctx) =>
      tasks.changeDue(ctx, request.params.id, request.body),
    );
    action('reopen', 'tasksReopenAssignment', 'Reopen a completed, rejected or cancelled assignment', ActorBody, (request, ctx) =>
      tasks.reopen(ctx, request.params.id, request.body),
    );

    routes.patch('/assignments/:id', {
      config: { scope: MANAGE },
      schema: {
        ...assignmentTags,
        operationId: 'tasksUpdateAssignment',
        summary: 'Change the due date or custom fields of an assignment',
        params: IntegerIdParams,
        body: UpdateAssignmentBody,
        response: {
          200: DataEnvelope(Assignment),
          409: ErrorReply('stale_update: the assignment changed since expected_updated_at. invalid_status_transition: a cancelled assignment keeps its due date.'),
        },
      },
      handler: async (request) => ({ data: await tasks.changeDue(requestContext(request), request.params.id, request.body) }),
    });

    routes.post('/assignments/:id/checklist/:itemId', {
      config: { scope: MANAGE },
      schema: {
        ...assignmentTags,
        operationId: 'tasksCheckItem',
        summary: 'Check (or uncheck) a checklist item; requires_note and requires_file are enforced',
        params: CheckParams,
        body: CheckBody,
        response: { 200: DataEnvelope(Assignment), 409: MOVE },
      },
      handler: async (request) => ({ data: await tasks.check(requestContext(request), request.params.id, request.params.itemId, request.body) }),
    });

    routes.post('/assignments/:id/submissions', {
      config: { scope: MANAGE },
      schema: {
        ...assignmentTags,
        operationId: 'tasksSubmit',
        summary: 'Submit an attempt (note, files, custom fields)',
        params: IntegerIdParams,
        body: SubmitBody,
        response: {
          201: DataEnvelope(SubmitReply),
          409: ErrorReply('invalid_status_transition: the assignment takes no submission now. conflict: no attempts left, or past due.'),
        },
      },
      handler: async (request, reply) => {
        reply.code(201);
        const { submission, assignment } = await tasks.submit(requestContext(request), request.params.id, request.body);
        return { data: { ...submission, assignment } };
      },
    });

    routes.post('/submissions/:id/reviews', {
      config: { scope: MANAGE },
      schema: {
        ...assignmentTags,
        operationId: 'tasksReviewSubmission',
        summary: 'Review a submission at its next stage, with a decision and a score by the grading scheme',
        params: IntegerIdParams,
        body: ReviewBody,
        response: { 201: DataEnvelope(ReviewReply), 409: MOVE },
      },
      handler: async (request, reply) => {
        reply.code(201);
        const { review, assignment } = await tasks.review(requestContext(request), request.params.id, request.body);
        return { data: { ...review, assignment } };
      },
    });

    // Links

    routes.post('/tasks/:id/links', {
      config: { scope: MANAGE },
      schema: {
        ...linkTags,
        operationId: 'tasksCreateLink',
        summary: 'Link a task to a record',
        params: IntegerIdParams,
        body: LinkBody,
        response: { 201: DataEnvelope(TaskLink) },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await tasks.createLink(requestContext(request), request.params.id, request.body) };
      },
    });

    routes.get('/tasks/:id/links', {
      config: { scope: VIEW },
      schema: {
        ...linkTags,
        operationId: 'tasksListLinks',
        summary: "List a task's links, labels resolved now",
        params: IntegerIdParams,
        querystring: ListLinksQuery,
        response: { 200: ListEnvelope(TaskLink) },
      },
      handler: async (request) => {
        const { limit, offset } = request.query;
        const { rows, total } = await tasks.listLinks(requestContext(request), request.params.id, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.delete('/tasks/:id/links/:linkId', {
      config: { scope: MANAGE },
      schema: { ...linkTags, operationId: 'tasksDeleteLink', summary: 'Delete a link', params: LinkParams, response: { 200: DataEnvelope(Deleted) } },
      handler: async (request) => ({ data: await tasks.deleteLink(requestContext(request), request.params.id, request.params.linkId) }),
    });
  };
}
