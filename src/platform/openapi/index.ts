import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { entityTag } from '../http/conditional.js';
import { finishDocument } from './document.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';

const DESCRIPTION = `One API for twelve business services. Every request under /api/v1/services
authenticates with \`Authorization: Bearer <API_KEY>\` (sk_test_… or sk_live_…); each operation
lists the scope it needs. Errors are always \`{ "error": { "code", "message", "details" } }\`;
lists take \`limit\` (1-200, default 50) and \`offset\` and answer \`{ data, meta }\`. POST and PATCH
accept \`Idempotency-Key\`; rate limits are per key and reported in X-RateLimit-* headers.`;

/** Registers the OpenAPI 3.1 generator (fed by every route's schema) and the /docs page. */
export async function installOpenApi(app: FastifyInstance, publicBaseUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Business platform API', version: '1.0.0', description: DESCRIPTION },
      servers: [{ url: publicBaseUrl }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'sk_test_… or sk_live_…',
            description: 'A tenant API key. The scopes listed on each operation are the ones the key must hold.',
          },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The operator token (ADMIN_TOKEN).' },
        },
      },
    },
    transformObject: (document) => ('openapiObject' in document ? finishDocument(document.openapiObject) : document.swaggerObject),
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });

  // The document never changes while the process runs: serialised and tagged once (it is about 500 KB).
  let document: { json: string; etag: string } | undefined;
  app.get(OPENAPI_PATH, { schema: { hide: true }, config: { etag: true } }, async (_request, reply) => {
    if (!document) {
      const json = JSON.stringify(app.swagger());
      document = { json, etag: entityTag(json) };
    }
    return reply.type('application/json; charset=utf-8').header('ETag', document.etag).send(document.json);
  });
}
