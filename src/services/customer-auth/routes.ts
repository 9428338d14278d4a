import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorRef, IdParams } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  ActiveSession,
  CompleteEmailVerificationBody,
  ConfirmTotpBody,
  CreateUserBody,
  Deleted,
  EmailVerification,
  EndUser,
  JtiParams,
  ListSessionsQuery,
  ListUsersQuery,
  LoginBody,
  MfaLoginBody,
  MfaRequired,
  RevokedSession,
  SetPasswordBody,
  TotpEnrollment,
  UpdateUserBody,
  UserWithRecoveryCodes,
  UserWithSession,
  UserWithSessionInfo,
  VerifySessionBody,
} from './schemas.js';
import type { CustomerAuthService } from './service.js';

const VIEW = 'service.customer-auth.view';
const MANAGE = 'service.customer-auth.manage';

/**
 * Routes whose body holds a password or whose reply holds a secret are not idempotent:
 * the platform would keep the reply (tokens, TOTP secrets, recovery codes) in the clear,
 * and a fast SHA-256 of a body holding a password, for 24 hours.
 */
const SECRET_BEARING = { scope: MANAGE, idempotent: false } as const;

const error = (description: string) => ({ ...ErrorRef, description });

export function customerAuthRoutes(auth: CustomerAuthService) {
  return async function registerCustomerAuthRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const users = { tags: ['Customer auth: end users'] };
    const verification = { tags: ['Customer auth: email verification'] };
    const sessions = { tags: ['Customer auth: sessions'] };
    const mfa = { tags: ['Customer auth: MFA'] };

    app.addHook('onReady', async () => {
      await auth.scheduleSweep();
    });

    // End users

    routes.post('/users', {
      config: SECRET_BEARING,
      schema: {
        ...users,
        operationId: 'customerAuthCreateUser',
        summary: 'Create an end user',
        description: 'Not idempotent (the body may hold a password); a retry of a create that succeeded is answered 409 email_taken.',
        body: CreateUserBody,
        response: { 201: DataEnvelope(EndUser), 409: error('email_taken: the address is used by another end user of this tenant and mode.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await auth.createUser(requestContext(request), request.body) };
      },
    });

    routes.get('/users', {
      config: { scope: VIEW },
      schema: { ...users, operationId: 'customerAuthListUsers', summary: 'List end users, newest first', querystring: ListUsersQuery, response: { 200: ListEnvelope(EndUser) } },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await auth.listUsers(requestContext(request), filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/users/:id', {
      config: { scope: VIEW },
      schema: { ...users, operationId: 'customerAuthGetUser', summary: 'Fetch an end user', params: IdParams, response: { 200: DataEnvelope(EndUser) } },
      handler: async (request) => ({ data: await auth.getUser(requestContext(request), request.params.id) }),
    });

    routes.patch('/users/:id', {
      config: { scope: MANAGE },
      schema: {
        ...users,
        operationId: 'customerAuthUpdateUser',
        summary: 'Update an end user (disabling ends their sessions)',
        params: IdParams,
        body: UpdateUserBody,
        response: { 200: DataEnvelope(EndUser), 409: error('email_taken, or stale_update when expected_updated_at is not the current version.') },
      },
      handler: async (request) => ({ data: await auth.updateUser(requestContext(request), request.params.id, request.body) }),
    });

    routes.delete('/users/:id', {
      config: { scope: MANAGE },
      schema: {
        ...users,
        operationId: 'customerAuthDeleteUser',
        summary: 'Delete an end user with their sessions, codes and tokens',
        params: IdParams,
        response: { 200: DataEnvelope(Deleted) },
      },
      handler: async (request) => ({ data: await auth.deleteUser(requestContext(request), request.params.id) }),
    });

    routes.post('/users/:id/password', {
      config: SECRET_BEARING,
      schema: {
        ...users,
        operationId: 'customerAuthSetPassword',
        summary: 'Set or change the password of an end user',
        description:
          'Refused (400 validation_failed) when shorter than 8 or longer than 256 characters, on the common-password list (detail password_too_common) or equal to the email or its local part (password_matches_email).',
        params: IdParams,
        body: SetPasswordBody,
        response: { 200: DataEnvelope(EndUser) },
      },
      handler: async (request) => ({ data: await auth.setPassword(requestContext(request), request.params.id, request.body) }),
    });

    // Email verification

    routes.post('/users/:id/email-verifications', {
      config: SECRET_BEARING,
      schema: {
        ...verification,
        operationId: 'customerAuthCreateEmailVerification',
        summary: 'Issue an email verification token (send it to the user yourself)',
        description: 'Single use, valid 24 hours, bound to the current address; issuing a new one cancels older unused ones. The body may be omitted.',
        params: IdParams,
        response: { 201: DataEnvelope(EmailVerification) },
      },
      handler: async (request, reply) => {
        reply.code(201).header('Cache-Control', 'no-store');
        return { data: await auth.createEmailVerification(requestContext(request), request.params.id) };
      },
    });

    routes.post('/email-verifications/complete', {
      config: SECRET_BEARING,
      schema: {
        ...verification,
        operationId: 'customerAuthCompleteEmailVerification',
        summary: 'Complete email verification',
        body: CompleteEmailVerificationBody,
        response: {
          200: DataEnvelope(EndUser),
          400: error('validation_failed, or verification_token_invalid: unknown, replaced by a newer token, or issued for an address the user no longer has.'),
          410: error('verification_token_used or verification_token_expired.'),
        },
      },
      handler: async (request) => ({ data: await auth.completeEmailVerification(requestContext(request), request.body.token) }),
    });

    // Sessions

    routes.post('/sessions', {
      config: SECRET_BEARING,
      schema: {
        ...sessions,
        operationId: 'customerAuthLogin',
        summary: 'Sign an end user in with email and password',
        description:
          'Without MFA: 201 with the user and a session (30 days). With TOTP MFA on: 200 with mfa_required and a challenge token for POST /sessions/mfa (5 minutes). A wrong email, a wrong password and a disabled account all give the same 401 invalid_credentials; the 11th failed attempt for an address within 15 minutes and later ones get 429 too_many_attempts with Retry-After, even with the right password.',
        body: LoginBody,
        response: {
          200: { ...DataEnvelope(MfaRequired), description: 'TOTP is on: a challenge to complete with POST /sessions/mfa.' },
          201: { ...DataEnvelope(UserWithSession), description: 'Signed in: the end user and a new session.' },
          401: error('invalid_credentials (or unauthorized: the API key).'),
          429: error('too_many_attempts for this address (or rate_limited for the API key); see Retry-After.'),
        },
      },
      handler: async (request, reply) => {
        const result = await auth.login(requestContext(request), request.body);
        reply.header('Cache-Control', 'no-store');
        if (result.kind === 'mfa') {
          return reply.code(200).send({ data: { mfa_required: result.mfa_required, challenge_token: result.challenge_token, expires_at: result.expires_at } });
        }
        return reply.code(201).send({ data: { user: result.user, session: result.session } });
      },
    });

    routes.post('/sessions/mfa', {
      config: SECRET_BEARING,
      schema: {
        ...sessions,
        operationId: 'customerAuthCompleteMfaLogin',
        summary: 'Complete an MFA login challenge',
        description:
          'With a 6-digit TOTP code (one 30-second step of drift either side; a code is accepted once, never one for a step at or before the last accepted) or a 19-character recovery code (single use). Five wrong codes end the challenge; wrong codes also count towards the 15-minute lockout of the address.',
        body: MfaLoginBody,
        response: {
          200: DataEnvelope(UserWithSession),
          401: error('invalid_challenge (unknown, used, expired or ended), invalid_mfa_code, or unauthorized (the API key).'),
          429: error('too_many_attempts for this account (or rate_limited for the API key); see Retry-After.'),
        },
      },
      handler: async (request, reply) => {
        const data = await auth.completeMfaLogin(requestContext(request), request.body);
        reply.header('Cache-Control', 'no-store');
        return { data };
      },
    });

    routes.post('/sessions/verify', {
      config: SECRET_BEARING,
      schema: {
        ...sessions,
        operationId: 'customerAuthVerifySession',
        summary: "Check an end user's session token",
        description: 'For the tenant app: 200 with the user and the session (without its token) while it is valid.',
        body: VerifySessionBody,
        response: {
          200: DataEnvelope(UserWithSessionInfo),
          401: error('invalid_session: unknown, expired or revoked token, or a disabled user (or unauthorized: the API key).'),
        },
      },
      handler: async (request) => ({ data: await auth.verifySession(requestContext(request), request.body.token) }),
    });

    routes.get('/users/:id/sessions', {
      config: { scope: VIEW },
      schema: {
        ...sessions,
        operationId: 'customerAuthListSessions',
        summary: "List an end user's active sessions, newest first",
        params: IdParams,
        querystring: ListSessionsQuery,
        response: { 200: ListEnvelope(ActiveSession) },
      },
      handler: async (request) => {
        const { limit, offset } = request.query;
        const { rows, total } = await auth.listSessions(requestContext(request), request.params.id, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.delete('/sessions/:jti', {
      config: { scope: MANAGE },
      schema: {
        ...sessions,
        operationId: 'customerAuthRevokeSession',
        summary: 'Revoke a session',
        description: 'Its token stops working at once; a second revoke is 404.',
        params: JtiParams,
        response: { 200: DataEnvelope(RevokedSession) },
      },
      handler: async (request) => ({ data: await auth.revokeSession(requestContext(request), request.params.jti) }),
    });

    // TOTP MFA

    routes.post('/users/:id/mfa/totp', {
      config: SECRET_BEARING,
      schema: {
        ...mfa,
        operationId: 'customerAuthStartTotpEnrollment',
        summary: 'Start TOTP enrolment (pending until confirmed)',
        description: 'Returns a new secret; starting again before confirming replaces it. 409 mfa_already_enabled while TOTP is on. The body may be omitted.',
        params: IdParams,
        response: { 201: DataEnvelope(TotpEnrollment), 409: error('mfa_already_enabled.') },
      },
      handler: async (request, reply) => {
        reply.code(201).header('Cache-Control', 'no-store');
        return { data: await auth.startTotpEnrollment(requestContext(request), request.params.id) };
      },
    });

    routes.post('/users/:id/mfa/totp/confirm', {
      config: SECRET_BEARING,
      schema: {
        ...mfa,
        operationId: 'customerAuthConfirmTotp',
        summary: 'Confirm TOTP enrolment with a first code; returns recovery codes once',
        description: 'A wrong code is 400 validation_failed (detail invalid_mfa_code). The confirming code cannot be used again to sign in.',
        params: IdParams,
        body: ConfirmTotpBody,
        response: { 200: DataEnvelope(UserWithRecoveryCodes), 409: error('mfa_already_enabled or mfa_not_pending.') },
      },
      handler: async (request, reply) => {
        reply.header('Cache-Control', 'no-store');
        return { data: await auth.confirmTotp(requestContext(request), request.params.id, request.body.code) };
      },
    });

    routes.delete('/users/:id/mfa/totp', {
      config: { scope: MANAGE },
      schema: {
        ...mfa,
        operationId: 'customerAuthDisableTotp',
        summary: 'Turn TOTP MFA off (or cancel a pending enrolment)',
        description: 'Deletes the secret and the recovery codes.',
        params: IdParams,
        response: { 200: DataEnvelope(EndUser), 409: error('mfa_not_enabled: TOTP is neither on nor pending.') },
      },
      handler: async (request) => ({ data: await auth.disableTotp(requestContext(request), request.params.id) }),
    });

    routes.post('/users/:id/mfa/recovery-codes', {
      config: SECRET_BEARING,
      schema: {
        ...mfa,
        operationId: 'customerAuthRegenerateRecoveryCodes',
        summary: 'Replace the recovery codes (the old ones stop working)',
        description: 'The body may be omitted.',
        params: IdParams,
        response: { 200: DataEnvelope(UserWithRecoveryCodes), 409: error('mfa_not_enabled.') },
      },
      handler: async (request, reply) => {
        reply.header('Cache-Control', 'no-store');
        return { data: await auth.regenerateRecoveryCodes(requestContext(request), request.params.id) };
      },
    });
  };
}
