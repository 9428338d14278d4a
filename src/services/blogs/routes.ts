import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorReply, IdParams } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  Analytics,
  AnalyticsQuery,
  Category,
  ChangePostStatusBody,
  CreatePostBody,
  CreateSubscriberBody,
  Deleted,
  ListCategoriesQuery,
  ListPostsQuery,
  ListPublishedPostsQuery,
  ListSubscribersQuery,
  Post,
  SlugParams,
  Subscriber,
  UpdatePostBody,
  UpdateSubscriberBody,
} from './schemas.js';
import type { BlogsService } from './service.js';

const READ = 'service.blogs.read';
const VIEW = 'service.blogs.view';
const MANAGE = 'service.blogs.manage';
const PUBLISH = 'service.blogs.publish';

export function blogsRoutes(blogs: BlogsService) {
  return async function registerBlogsRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const published = { tags: ['Blogs: published posts'] };
    const posts = { tags: ['Blogs: posts'] };
    const subscribers = { tags: ['Blogs: subscribers'] };
    const insights = { tags: ['Blogs: analytics and categories'] };

    // The public reading side (for a site): published posts only.

    routes.get('/posts/published', {
      config: { scope: READ },
      schema: {
        ...published,
        operationId: 'blogsListPublishedPosts',
        summary: 'List published posts, most recently published first',
        querystring: ListPublishedPostsQuery,
        response: { 200: ListEnvelope(Post) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await blogs.listPublishedPosts(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/posts/published/:slug', {
      config: { scope: READ },
      schema: {
        ...published,
        operationId: 'blogsGetPublishedPost',
        summary: 'Fetch a published post by slug (counts one view)',
        description: 'Only published posts are found; every read adds one to view_count and to the day in analytics.',
        params: SlugParams,
        response: { 200: DataEnvelope(Post) },
      },
      handler: async (request) => ({ data: await blogs.readPublishedPost(requestContext(request), request.params.slug) }),
    });

    // Authoring.

    routes.get('/posts', {
      config: { scope: VIEW },
      schema: { ...posts, operationId: 'blogsListPosts', summary: 'List posts of any status, newest first', querystring: ListPostsQuery, response: { 200: ListEnvelope(Post) } },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await blogs.listPosts(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/posts/:id', {
      config: { scope: VIEW },
      schema: { ...posts, operationId: 'blogsGetPost', summary: 'Fetch a post by id', params: IdParams, response: { 200: DataEnvelope(Post) } },
      handler: async (request) => ({ data: await blogs.getPost(requestContext(request), request.params.id) }),
    });

    routes.post('/posts', {
      config: { scope: MANAGE },
      schema: {
        ...posts,
        operationId: 'blogsCreatePost',
        summary: 'Create a draft post',
        description: 'Always creates a draft; publish or schedule it with POST /posts/{id}/status.',
        body: CreatePostBody,
        response: { 201: DataEnvelope(Post), 409: ErrorReply('slug_taken: another post of this tenant and mode uses the slug.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await blogs.createPost(requestContext(request), request.body) };
      },
    });

    routes.patch('/posts/:id', {
      config: { scope: MANAGE },
      schema: {
        ...posts,
        operationId: 'blogsUpdatePost',
        summary: 'Update a post',
        params: IdParams,
        body: UpdatePostBody,
        response: { 200: DataEnvelope(Post), 409: ErrorReply('slug_taken: another post of this tenant and mode uses the slug.') },
      },
      handler: async (request) => ({ data: await blogs.updatePost(requestContext(request), request.params.id, request.body) }),
    });

    routes.post('/posts/:id/status', {
      config: { scope: PUBLISH },
      schema: {
        ...posts,
        operationId: 'blogsChangePostStatus',
        summary: 'Publish, schedule, unpublish or archive a post',
        description:
          'Moves: draft -> published | scheduled | archived; scheduled -> published | scheduled (new time) | draft | archived; ' +
          'published -> draft | archived; archived -> published | draft. Asking for the current status returns the post unchanged; ' +
          'any other move is 409 invalid_status_transition. A scheduled post is published by a background job at scheduled_for.',
        params: IdParams,
        body: ChangePostStatusBody,
        response: { 200: DataEnvelope(Post), 409: ErrorReply('invalid_status_transition: the post cannot move from its status to the one asked for.') },
      },
      handler: async (request) => ({ data: await blogs.changePostStatus(requestContext(request), request.params.id, request.body) }),
    });

    routes.delete('/posts/:id', {
      config: { scope: MANAGE },
      schema: { ...posts, operationId: 'blogsDeletePost', summary: 'Delete a post (and its view counts)', params: IdParams, response: { 200: DataEnvelope(Deleted) } },
      handler: async (request) => ({ data: await blogs.deletePost(requestContext(request), request.params.id) }),
    });

    // Subscribers.

    routes.get('/subscribers', {
      config: { scope: VIEW },
      schema: {
        ...subscribers,
        operationId: 'blogsListSubscribers',
        summary: 'List subscribers, newest first',
        querystring: ListSubscribersQuery,
        response: { 200: ListEnvelope(Subscriber) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await blogs.listSubscribers(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/subscribers/:id', {
      config: { scope: VIEW },
      schema: { ...subscribers, operationId: 'blogsGetSubscriber', summary: 'Fetch a subscriber', params: IdParams, response: { 200: DataEnvelope(Subscriber) } },
      handler: async (request) => ({ data: await blogs.getSubscriber(requestContext(request), request.params.id) }),
    });

    routes.post('/subscribers', {
      config: { scope: MANAGE },
      schema: {
        ...subscribers,
        operationId: 'blogsCreateSubscriber',
        summary: 'Add a subscriber',
        description: 'An email already on the list is 409 subscriber_already_exists (details carry its subscriber_id).',
        body: CreateSubscriberBody,
        response: { 201: DataEnvelope(Subscriber), 409: ErrorReply('subscriber_already_exists: the email is subscribed already.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await blogs.createSubscriber(requestContext(request), request.body) };
      },
    });

    routes.patch('/subscribers/:id', {
      config: { scope: MANAGE },
      schema: {
        ...subscribers,
        operationId: 'blogsUpdateSubscriber',
        summary: 'Update a subscriber (status, name, email)',
        params: IdParams,
        body: UpdateSubscriberBody,
        response: { 200: DataEnvelope(Subscriber), 409: ErrorReply('subscriber_already_exists: another subscriber has the email.') },
      },
      handler: async (request) => ({ data: await blogs.updateSubscriber(requestContext(request), request.params.id, request.body) }),
    });

    routes.delete('/subscribers/:id', {
      config: { scope: MANAGE },
      schema: { ...subscribers, operationId: 'blogsDeleteSubscriber', summary: 'Delete a subscriber', params: IdParams, response: { 200: DataEnvelope(Deleted) } },
      handler: async (request) => ({ data: await blogs.deleteSubscriber(requestContext(request), request.params.id) }),
    });

    // Analytics and categories.

    routes.get('/analytics', {
      config: { scope: VIEW },
      schema: {
        ...insights,
        operationId: 'blogsGetAnalytics',
        summary: 'Post and subscriber counts, views and top posts',
        description:
          'Counts by status are current; views, published_in_range, new_in_range and unsubscribed_in_range cover the UTC days from..to (inclusive; either may be left out).',
        querystring: AnalyticsQuery,
        response: { 200: DataEnvelope(Analytics) },
      },
      handler: async (request) => ({ data: await blogs.analytics(requestContext(request), request.query) }),
    });

    routes.get('/categories', {
      config: { scope: VIEW },
      schema: {
        ...insights,
        operationId: 'blogsListCategories',
        summary: 'Categories used by at least one post, by name',
        querystring: ListCategoriesQuery,
        response: { 200: ListEnvelope(Category) },
      },
      handler: async (request) => {
        const { limit, offset } = request.query;
        const { rows, total } = await blogs.listCategories(requestContext(request), { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });
  };
}
