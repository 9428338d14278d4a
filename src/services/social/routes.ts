import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorReply } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  AccountParams,
  CreateAccountBody,
  CreatePostBody,
  CreateUploadLinkBody,
  FileParams,
  ListAccountsQuery,
  ListPostsQuery,
  PostParams,
  SocialAccount,
  SocialPost,
  UpdatePostBody,
  UploadBody,
  UploadFile,
  UploadParams,
} from './schemas.js';
import type { SocialService } from './service.js';

const VIEW = 'service.social.view';
const MANAGE = 'service.social.manage';

/** What an Idempotency-Key replay of the upload-link create shows: the same record, its secrets null (they are stored nowhere). */
function withoutUploadSecrets(body: Buffer): Buffer {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { data?: Record<string, unknown> };
    if (parsed.data) Object.assign(parsed.data, { upload_url: null, upload_token: null, how_to_send: null });
    return Buffer.from(JSON.stringify(parsed));
  } catch {
    return body;
  }
}

export function socialRoutes(social: SocialService) {
  return async function registerSocialRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const accounts = { tags: ['Social: accounts'] };
    const files = { tags: ['Social: files'] };
    const posts = { tags: ['Social: posts'] };

    // Accounts

    routes.get('/accounts', {
      config: { scope: VIEW },
      schema: {
        ...accounts,
        operationId: 'socialListAccounts',
        summary: 'List connected social accounts, newest first',
        querystring: ListAccountsQuery,
        response: { 200: ListEnvelope(SocialAccount) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await social.listAccounts(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.post('/accounts', {
      config: { scope: MANAGE },
      schema: {
        ...accounts,
        operationId: 'socialConnectAccount',
        summary: 'Connect a sandbox account (test-mode keys only; real platforms connect through OAuth)',
        body: CreateAccountBody,
        response: { 201: DataEnvelope(SocialAccount) },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await social.createAccount(requestContext(request), request.body) };
      },
    });

    routes.get('/accounts/:id', {
      config: { scope: VIEW },
      schema: { ...accounts, operationId: 'socialGetAccount', summary: 'Fetch a connected account', params: AccountParams, response: { 200: DataEnvelope(SocialAccount) } },
      handler: async (request) => ({ data: await social.getAccount(requestContext(request), request.params.id) }),
    });

    routes.delete('/accounts/:id', {
      config: { scope: MANAGE },
      schema: {
        ...accounts,
        operationId: 'socialDisconnectAccount',
        summary: 'Disconnect an account: its tokens are deleted; the reply is the account as it was',
        params: AccountParams,
        response: { 200: DataEnvelope(SocialAccount) },
      },
      handler: async (request) => ({ data: await social.deleteAccount(requestContext(request), request.params.id) }),
    });

    routes.post('/accounts/:id/validate', {
      config: { scope: MANAGE },
      schema: {
        ...accounts,
        operationId: 'socialValidateAccount',
        summary: 'Run the health check now: refresh a token close to expiry, then ask the platform (sets status, last_validated_at, last_error)',
        params: AccountParams,
        response: { 200: DataEnvelope(SocialAccount) },
      },
      handler: async (request) => ({ data: await social.validateAccount(requestContext(request), request.params.id) }),
    });

    // Files

    routes.post('/files/upload-links', {
      config: { scope: MANAGE, redactStoredReply: withoutUploadSecrets },
      schema: {
        ...files,
        operationId: 'socialCreateUploadLink',
        summary: 'Create a one-time upload link (15 minutes) for a file of the declared size and SHA-256',
        body: CreateUploadLinkBody,
        response: { 201: DataEnvelope(UploadFile) },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await social.createUploadLink(requestContext(request), request.body) };
      },
    });

    routes.get('/files/:file_id', {
      config: { scope: VIEW },
      schema: {
        ...files,
        operationId: 'socialGetFile',
        summary: 'Fetch an uploaded file record: ready, or why it was refused',
        params: FileParams,
        response: { 200: DataEnvelope(UploadFile) },
      },
      handler: async (request) => ({ data: await social.getFile(requestContext(request), request.params.file_id) }),
    });

    // The upload itself: no API key (the token in the URL is the credential), the body a raw stream.
    await app.register(async function uploadRoute(scope) {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
      scope.withTypeProvider<TypeBoxTypeProvider>().put('/uploads/:upload_token', {
        config: { credentialInUrl: true },
        schema: {
          ...files,
          operationId: 'socialUploadFileBytes',
          summary: 'Send the bytes of a file to its one-time upload_url (no API key: the token in the URL is the credential)',
          description:
            'The body is the file as it is, exactly size_bytes long. The link works once, within 15 minutes. The reply is the file record: ready, or rejected with reject_code. More bytes than declared stop the upload at once.',
          consumes: ['application/octet-stream'],
          params: UploadParams,
          body: UploadBody,
          response: {
            200: DataEnvelope(UploadFile),
            410: ErrorReply('link_expired: the link is older than 15 minutes; link_used: the link was used already.'),
          },
        },
        handler: async (request, reply) => {
          const length = request.headers['content-length'];
          const declared = length === undefined || !/^\d+$/.test(length) ? undefined : Number(length);
          // Until the body is read to its end, the connection closes after the reply.
          reply.header('Connection', 'close');
          const { file, closeConnection } = await social.receiveUpload(request.params.upload_token, request.raw, declared);
          if (!closeConnection) reply.removeHeader('Connection');
          return { data: file };
        },
      });
    });

    // Posts

    routes.get('/posts', {
      config: { scope: VIEW },
      schema: { ...posts, operationId: 'socialListPosts', summary: 'List posts, newest first', querystring: ListPostsQuery, response: { 200: ListEnvelope(SocialPost) } },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await social.listPosts(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.post('/posts', {
      config: { scope: MANAGE },
      schema: {
        ...posts,
        operationId: 'socialCreatePost',
        summary: 'Create a post: a draft, scheduled for scheduled_at, or published now (scheduled_at null)',
        body: CreatePostBody,
        response: { 201: DataEnvelope(SocialPost) },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await social.createPost(requestContext(request), request.body) };
      },
    });

    routes.get('/posts/:id', {
      config: { scope: VIEW },
      schema: { ...posts, operationId: 'socialGetPost', summary: 'Fetch a post with its per-account results', params: PostParams, response: { 200: DataEnvelope(SocialPost) } },
      handler: async (request) => ({ data: await social.getPost(requestContext(request), request.params.id) }),
    });

    routes.patch('/posts/:id', {
      config: { scope: MANAGE },
      schema: {
        ...posts,
        operationId: 'socialUpdatePost',
        summary: 'Change a draft or scheduled post (accounts, text, media, time, draft or scheduled)',
        params: PostParams,
        body: UpdatePostBody,
        response: { 200: DataEnvelope(SocialPost), 409: ErrorReply('post_not_editable: the post is publishing or finished.') },
      },
      handler: async (request) => ({ data: await social.updatePost(requestContext(request), request.params.id, request.body) }),
    });

    routes.delete('/posts/:id', {
      config: { scope: MANAGE },
      schema: {
        ...posts,
        operationId: 'socialDeletePost',
        summary: 'Delete a post that is not being published (published posts stay on the platforms)',
        params: PostParams,
        response: { 200: DataEnvelope(SocialPost), 409: ErrorReply('post_not_editable: the post is being published.') },
      },
      handler: async (request) => ({ data: await social.deletePost(requestContext(request), request.params.id) }),
    });
  };
}
