import { Type, type Static } from 'typebox';
import { ExpectedUpdatedAt } from '../../platform/concurrency.js';
import { Nullable, PathParams, Timestamp, TimestampField, Uuid, UuidParam } from '../../platform/http/schemas.js';
import { ListQuery } from '../../platform/pagination/index.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.js';
import { USER_STATUSES } from './tables.js';

export const MAX_METADATA_BYTES = 16 * 1024;

/** No control characters, and at least one visible character. */
const PRINTABLE_TEXT = '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$';

const UserStatus = (description = 'active (may sign in) or disabled (cannot sign in; its sessions are ended).') => Type.Enum([...USER_STATUSES], { description });
const Email = Type.String({
  format: 'email',
  maxLength: 320,
  description: 'Sign-in address; stored lower-cased, unique per tenant and mode (case-insensitively).',
  examples: ['ada@example.com'],
});
const Name = Type.String({ minLength: 1, maxLength: 200, pattern: PRINTABLE_TEXT, description: 'Display name, 1-200 characters; trimmed.' });
const PictureUrl = Type.String({
  format: 'uri',
  maxLength: 2048,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]+([/?#]\\S*)?$',
  description: 'Absolute http(s) URL of the avatar.',
  examples: ['https://images.example.com/ada.png'],
});
const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Tenant-defined JSON object, up to 16 KB serialised; replaced whole on update.',
  examples: [{ plan: 'pro', locale: 'en-GB' }],
});
const NewPassword = Type.String({
  minLength: MIN_PASSWORD_LENGTH,
  maxLength: MAX_PASSWORD_LENGTH,
  description:
    'The password, 8 to 256 characters (any Unicode, spaces included, never trimmed or truncated). Refused when it is a commonly used password or the email address (or its local part). Stored only as a scrypt hash.',
  examples: ['correct horse battery staple'],
});
/** Tokens this service issues are 36-49 characters; the bound only keeps junk out. */
const Secret = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

export const EndUser = Type.Object(
  {
    id: Uuid,
    email: Type.String({ maxLength: 320 }),
    name: Nullable(Type.String({ maxLength: 200, description: 'Display name.' })),
    profile_picture_url: Nullable(Type.String({ maxLength: 2048, description: 'Avatar URL.' })),
    status: UserStatus(),
    email_verified_at: Nullable(TimestampField('When the address was last verified; cleared when the email changes.')),
    mfa_enabled: Type.Boolean({ description: 'Whether TOTP MFA is enabled.' }),
    mfa_enabled_at: Nullable(Timestamp),
    last_login_at: Nullable(TimestampField('Last successful sign-in (password, or password and MFA).')),
    created_at: Timestamp,
    updated_at: Timestamp,
    metadata: Type.Record(Type.String(), Type.Unknown(), { description: 'Tenant-defined metadata bag.' }),
  },
  { title: 'EndUser', additionalProperties: false },
);

export const CreateUserBody = Type.Object(
  {
    email: Email,
    password: Type.Optional(NewPassword),
    name: Type.Optional(Nullable(Name)),
    profile_picture_url: Type.Optional(Nullable(PictureUrl)),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false, examples: [{ email: 'ada@example.com', password: 'correct horse battery staple', name: 'Ada Lovelace', metadata: { plan: 'pro' } }] },
);

export const UpdateUserBody = Type.Object(
  {
    email: Type.Optional(Email),
    name: Type.Optional(Nullable(Name)),
    profile_picture_url: Type.Optional(Nullable(PictureUrl)),
    status: Type.Optional(UserStatus('disabled ends every session of the user and refuses sign-in (401, like a wrong password); active allows it again.')),
    metadata: Type.Optional(Metadata),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ name: 'Ada King', status: 'disabled' }] },
);

export const ListUsersQuery = ListQuery({
  status: Type.Optional(UserStatus('Only users with this status.')),
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'Case-insensitive match anywhere in email or name.' })),
  email: Type.Optional(Type.String({ minLength: 1, maxLength: 320, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'Exact address, any case.' })),
});

export const SetPasswordBody = Type.Object(
  {
    password: NewPassword,
    revoke_sessions: Type.Optional(Type.Boolean({ default: true, description: 'End every session of the user (default true, as a password change after a compromise needs).' })),
  },
  { additionalProperties: false, examples: [{ password: 'correct horse battery staple', revoke_sessions: true }] },
);

export const Deleted = Type.Object({ id: Uuid, deleted: Type.Literal(true) }, { title: 'DeletedObject', additionalProperties: false });

/** Actions without input: an empty object, or no body at all; any field is 400 unknown_field. */

// Email verification

export const EmailVerification = Type.Object(
  {
    token: Type.String({ maxLength: 64, description: 'Single-use secret (cav_...) to put in the link you email; valid 24 hours. Issuing a new one cancels older unused ones.' }),
    expires_at: Timestamp,
  },
  { title: 'EmailVerification', additionalProperties: false },
);

export const CompleteEmailVerificationBody = Type.Object(
  { token: Secret('The token from POST /users/{id}/email-verifications.') },
  { additionalProperties: false, examples: [{ token: 'cav_3q2-7wGq0m0Jb5mUuK3nTqkWZ4r1u1yVQyq8m1c4n0Y' }] },
);

// Sessions

const SessionToken = Type.String({ maxLength: 64, description: 'Bearer secret of the session (cas_...); shown only in this reply, stored only as a hash.' });

export const IssuedSession = Type.Object(
  {
    token: SessionToken,
    jti: Uuid,
    issued_at: Timestamp,
    expires_at: Timestamp,
  },
  { title: 'IssuedSession', additionalProperties: false, description: 'The session; the token is only ever in the reply that issues it.' },
);

export const SessionInfo = Type.Object(
  {
    jti: Uuid,
    issued_at: Timestamp,
    expires_at: Timestamp,
  },
  { title: 'SessionInfo', additionalProperties: false },
);

export const ActiveSession = Type.Object(
  {
    jti: Uuid,
    issued_at: Timestamp,
    expires_at: Timestamp,
    last_used_at: Nullable(TimestampField('Last successful verify (kept to the minute), or null.')),
  },
  { title: 'ActiveSession', additionalProperties: false },
);

export const UserWithSession = Type.Object({ user: EndUser, session: IssuedSession }, { title: 'EndUserWithSession', additionalProperties: false });
export const UserWithSessionInfo = Type.Object({ user: EndUser, session: SessionInfo }, { title: 'VerifiedSession', additionalProperties: false });

export const MfaRequired = Type.Object(
  {
    mfa_required: Type.Literal(true),
    challenge_token: Type.String({ maxLength: 64, description: 'Single-use secret (cach_...) for POST /sessions/mfa; valid 5 minutes and for at most 5 wrong codes.' }),
    expires_at: Timestamp,
  },
  { title: 'MfaRequired', additionalProperties: false },
);

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320, pattern: '^[^\\u0000-\\u001f\\u007f]+$', description: 'The address, any case.' }),
    password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH, description: 'The password as typed.' }),
  },
  { additionalProperties: false, examples: [{ email: 'ada@example.com', password: 'correct horse battery staple' }] },
);

export const MfaLoginBody = Type.Object(
  {
    challenge_token: Secret('From the MFA branch of POST /sessions.'),
    code: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'A 6-digit TOTP code (spaces ignored, as apps show "123 456"), or a 19-character recovery code (xxxx-xxxx-xxxx-xxxx, any case; surrounding spaces ignored).',
      examples: ['123456'],
    }),
  },
  { additionalProperties: false, examples: [{ challenge_token: 'cach_Zk1Yb0x9Qh6m3TnB8rW2uE5sD7fG4jK1lP0oI9uY8tR', code: '123456' }] },
);

export const VerifySessionBody = Type.Object(
  { token: Secret('A session token from POST /sessions or POST /sessions/mfa.') },
  { additionalProperties: false, examples: [{ token: 'cas_Qm9yZSB0aGFuIDMyIGJ5dGVzIG9mIHJhbmRvbW5lc3M' }] },
);

export const JtiParams = PathParams({ jti: UuidParam });
export const RevokedSession = Type.Object({ jti: Uuid, revoked: Type.Literal(true) }, { title: 'RevokedSession', additionalProperties: false });
export const ListSessionsQuery = ListQuery({});

// TOTP

export const TotpEnrollment = Type.Object(
  {
    secret: Type.String({ maxLength: 32, description: 'Base32 (RFC 4648, no padding) TOTP secret, 160 bits: show it once, as text or as a QR code of otpauth_url.' }),
    otpauth_url: Type.String({ maxLength: 4096, description: 'otpauth://totp/... URI for authenticator apps (SHA1, 6 digits, 30 seconds).' }),
  },
  { title: 'TotpEnrollment', additionalProperties: false },
);

export const ConfirmTotpBody = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 64, description: 'The current 6-digit code from the authenticator app.', examples: ['123456'] }) },
  { additionalProperties: false, examples: [{ code: '123456' }] },
);

export const UserWithRecoveryCodes = Type.Object(
  {
    user: EndUser,
    recovery_codes: Type.Array(Type.String({ maxLength: 19 }), {
      minItems: 10,
      maxItems: 10,
      description: '10 single-use codes, xxxx-xxxx-xxxx-xxxx (lower-case letters and digits); shown only in this reply. Any earlier codes stop working.',
    }),
  },
  { title: 'EndUserWithRecoveryCodes', additionalProperties: false },
);

export type EndUserView = Static<typeof EndUser>;
export type CreateUserInput = Static<typeof CreateUserBody>;
export type UpdateUserInput = Static<typeof UpdateUserBody>;
export type ListUsersInput = Static<typeof ListUsersQuery>;
export type SetPasswordInput = Static<typeof SetPasswordBody>;
export type LoginInput = Static<typeof LoginBody>;
export type MfaLoginInput = Static<typeof MfaLoginBody>;
export type IssuedSessionView = Static<typeof IssuedSession>;
export type SessionInfoView = Static<typeof SessionInfo>;
export type ActiveSessionView = Static<typeof ActiveSession>;
