import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { DataEnvelope, IdParams, Nullable, ONE_LINE_NOT_BLANK, PathParams, Timestamp, Uuid, UuidParam } from '../http/schemas.js';
import { ListEnvelope, ListQuery, toPage } from '../pagination/index.js';
import type { KeyCache } from '../auth/key-cache.js';
import type { TenantAdmin } from '../tenants/service.js';

const Tenant = Type.Object(
  {
    id: Uuid,
    name: Type.String({ maxLength: 200, examples: ['Acme Ltd'] }),
    created_at: Timestamp,
    key_count: Type.Integer({ minimum: 0, maximum: 2147483647, format: 'int32', description: 'API keys not revoked. 0: every key was revoked; create a new one.' }),
  },
  { title: 'Tenant', additionalProperties: false },
);

const TenantName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: ONE_LINE_NOT_BLANK,
  description: 'One line, 1-200 characters; leading and trailing spaces are trimmed. Names need not be unique.',
  examples: ['Acme Ltd'],
});

const Mode = Type.Union([Type.Literal('test'), Type.Literal('live')], { description: 'test keys see only test data; live keys only live data.' });

const ApiKey = Type.Object(
  {
    id: Uuid,
    tenant_id: Uuid,
    mode: Mode,
    name: Nullable(Type.String({ maxLength: 200 })),
    key_prefix: Type.String({ maxLength: 32, description: 'First characters of the secret, to recognise the key.', examples: ['sk_test_4fQz'] }),
    scopes: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 }),
    rate_limit_per_minute: Type.Integer({ format: 'int32', minimum: 1, maximum: 1_000_000 }),
    created_at: Timestamp,
    revoked_at: Nullable(Timestamp),
  },
  { title: 'ApiKey', additionalProperties: false },
);

const CreatedApiKey = Type.Object(
  {
    id: Uuid,
    key: Type.String({ maxLength: 128, description: 'The whole secret. Shown only in this reply; only its hash is stored.' }),
    mode: Mode,
    scopes: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 }),
    rate_limit_per_minute: Type.Integer({ format: 'int32', minimum: 1, maximum: 1_000_000 }),
    name: Nullable(Type.String({ maxLength: 200 })),
    created_at: Timestamp,
  },
  { title: 'CreatedApiKey', additionalProperties: false },
);

const TenantParams = PathParams({ tenant_id: UuidParam });

/** Operator API under /admin/v1, mounted only when ADMIN_TOKEN is set. */
export function adminRoutes(deps: { admin: TenantAdmin; keyCache: KeyCache }) {
  return async function registerAdminRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Operator'];

    routes.post('/tenants', {
      schema: {
        operationId: 'adminCreateTenant',
        summary: 'Create a tenant',
        tags,
        body: Type.Object({ name: TenantName }, { additionalProperties: false }),
        response: { 201: DataEnvelope(Tenant) },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await deps.admin.createTenant(request.body.name) };
      },
    });

    routes.get('/tenants', {
      schema: {
        operationId: 'adminListTenants',
        summary: 'List tenants, newest first',
        description: 'Each with the count of its active API keys: how an operator who lost every key finds the tenant to create a new one for.',
        tags,
        querystring: ListQuery({}),
        response: { 200: ListEnvelope(Tenant) },
      },
      handler: async (request) => {
        const { rows, total } = await deps.admin.listTenants(request.query);
        return toPage(rows, total, request.query);
      },
    });

    routes.get('/tenants/:tenant_id', {
      schema: {
        operationId: 'adminGetTenant',
        summary: 'Get a tenant',
        tags,
        params: TenantParams,
        response: { 200: DataEnvelope(Tenant) },
      },
      handler: async (request) => ({ data: await deps.admin.getTenant(request.params.tenant_id) }),
    });

    routes.patch('/tenants/:tenant_id', {
      schema: {
        operationId: 'adminUpdateTenant',
        summary: 'Rename a tenant',
        description: 'The name is shown on hosted checkout pages and as the issuer in TOTP apps.',
        tags,
        params: TenantParams,
        body: Type.Object({ name: TenantName }, { additionalProperties: false }),
        response: { 200: DataEnvelope(Tenant) },
      },
      handler: async (request) => ({ data: await deps.admin.renameTenant(request.params.tenant_id, request.body.name) }),
    });

    routes.post('/tenants/:tenant_id/api-keys', {
      schema: {
        operationId: 'adminCreateApiKey',
        summary: 'Create an API key for a tenant',
        description: 'The reply holds the whole secret once; store it, it cannot be shown again.',
        tags,
        params: TenantParams,
        body: Type.Object(
          {
            mode: Mode,
            scopes: Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 100, examples: [['service.forms.view', 'service.forms.manage']] }),
            rate_limit_per_minute: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 1_000_000, default: 60 })),
            name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
          },
          { additionalProperties: false },
        ),
        response: { 201: DataEnvelope(CreatedApiKey) },
      },
      handler: async (request, reply) => {
        const { key, secret } = await deps.admin.createApiKey(request.params.tenant_id, request.body);
        reply.code(201);
        return {
          data: {
            id: key.id,
            key: secret,
            mode: key.mode,
            scopes: key.scopes,
            rate_limit_per_minute: key.rate_limit_per_minute,
            name: key.name,
            created_at: key.created_at,
          },
        };
      },
    });

    routes.get('/tenants/:tenant_id/api-keys', {
      schema: {
        operationId: 'adminListApiKeys',
        summary: "List a tenant's API keys (never their secrets)",
        tags,
        params: TenantParams,
        querystring: ListQuery({}),
        response: { 200: ListEnvelope(ApiKey) },
      },
      handler: async (request) => {
        const { rows, total } = await deps.admin.listApiKeys(request.params.tenant_id, request.query);
        return toPage(rows, total, request.query);
      },
    });

    routes.delete('/api-keys/:id', {
      schema: {
        operationId: 'adminRevokeApiKey',
        summary: 'Revoke an API key',
        description: 'Refused at once by this process and within 5 seconds by every other API process.',
        tags,
        params: IdParams,
        response: { 200: DataEnvelope(ApiKey) },
      },
      handler: async (request) => {
        const key = await deps.admin.revokeApiKey(request.params.id);
        deps.keyCache.evictKey(key.id);
        return { data: key };
      },
    });
  };
}
