import { Type, type Static } from 'typebox';
import { IntegerIdParam, Nullable, ONE_LINE_NOT_BLANK, PathParams, TimestampField, UuidParam } from '../../platform/http/schemas.js';
import { ListQuery } from '../../platform/pagination/index.js';
import { MAX_UPLOAD_BYTES } from './inspect.js';
import { ACCOUNT_KINDS, ACCOUNT_STATUSES, FILE_STATUSES, POST_STATUSES, REJECT_CODES, RESULT_STATUSES, VISIBILITIES } from './tables.js';

const Literals = <const T extends string>(values: readonly T[], description: string, example: T) => Type.Enum([...values], { description, examples: [example] });
const AccountId = (description: string) => Type.String({ maxLength: 19, pattern: '^[1-9][0-9]{0,18}$', description, examples: ['42'] });
const FileId = (description: string) => Type.String({ format: 'uuid', maxLength: 36, description, examples: ['3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c'] });
const Instant = (description: string) => Type.String({ format: 'date-time', maxLength: 64, description, examples: ['2026-12-01T09:00:00.000Z'] });

// Accounts

const SharedUser = Type.Object(
  {
    user_id: Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'User id.', examples: [7] }),
    name: Type.String({ maxLength: 200, description: 'User name.', examples: ['Ada Lovelace'] }),
    email: Type.String({ maxLength: 320, description: 'User email.', examples: ['ada@example.com'] }),
  },
  { title: 'SocialSharedUser', additionalProperties: false },
);

const SharedRole = Type.Object(
  {
    role_id: Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Role id.', examples: [3] }),
    role_name: Type.String({ maxLength: 200, description: 'Role name.', examples: ['Marketing'] }),
  },
  { title: 'SocialSharedRole', additionalProperties: false },
);

export const SocialAccount = Type.Object(
  {
    id: AccountId('Account id, a numeric string.'),
    tenant_id: Type.String({ format: 'uuid', maxLength: 36, description: 'Tenant the account belongs to.', examples: ['3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c'] }),
    platform: Type.String({ maxLength: 40, description: 'Connected platform: `sandbox` (test mode); OAuth platforms connect through the dashboard.', examples: ['sandbox'] }),
    account_kind: Literals(ACCOUNT_KINDS, 'profile (a personal profile), page or business account.', 'profile'),
    external_id: Type.String({ maxLength: 200, description: 'Id of the account on the platform.', examples: ['sandbox_5f0c2a9e8d1b4c1e'] }),
    display_name: Nullable(Type.String({ maxLength: 200, description: 'Name shown on the platform.', examples: ['Acme Bakery'] })),
    avatar_url: Nullable(Type.String({ maxLength: 2048, description: 'Profile picture URL.', examples: ['https://cdn.example.com/avatar.png'] })),
    token_expires_at: Nullable(TimestampField('When the access token expires; the health check refreshes it before then.')),
    scopes: Type.Array(Type.String({ maxLength: 100, description: 'A granted OAuth scope.', examples: ['posts.write'] }), {
      maxItems: 100,
      description: 'Granted OAuth scopes.',
      examples: [['profile.read', 'posts.write']],
    }),
    status: Literals(
      ACCOUNT_STATUSES,
      'Connection health: connected, expired (the token could not be refreshed: connect again) or error (the platform refused the token).',
      'connected',
    ),
    last_validated_at: Nullable(TimestampField('When the health check last reached the platform.')),
    last_error: Nullable(
      Type.String({ maxLength: 1000, description: 'What the last failed health check or refresh reported; null when healthy.', examples: ['The access token has expired.'] }),
    ),
    environment: Type.String({ maxLength: 20, description: '`live` for live keys; `sandbox` for test keys.', examples: ['live'] }),
    connected_by: Nullable(
      Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'User who connected it; null when connected with an API key.', examples: [7] }),
    ),
    visibility: Literals(VISIBILITIES, 'Who else in the tenant can use the account: private or shared.', 'private'),
    created_at: TimestampField('When the account was connected.'),
    updated_at: TimestampField('Last change.'),
    connected_by_name: Nullable(Type.String({ maxLength: 200, description: 'Name of connected_by.', examples: ['Ada Lovelace'] })),
    shared_users: Type.Array(SharedUser, { maxItems: 1000, description: 'When visibility is shared: the users it is shared with (none through the API).', examples: [[]] }),
    shared_roles: Type.Array(SharedRole, { maxItems: 1000, description: 'When visibility is shared: the roles it is shared with (none through the API).', examples: [[]] }),
    is_owner: Type.Boolean({ description: 'Always false through the server-to-server API.', examples: [false] }),
  },
  { title: 'SocialAccount', additionalProperties: false },
);
export type SocialAccountReply = Static<typeof SocialAccount>;

export const CreateAccountBody = Type.Object(
  {
    platform: Type.Enum(['sandbox'], { description: 'Only `sandbox`, with a test-mode key: real platforms connect through OAuth.', examples: ['sandbox'] }),
    display_name: Type.String({ minLength: 1, maxLength: 200, pattern: ONE_LINE_NOT_BLANK, description: 'Name of the sandbox account; trimmed.', examples: ['Acme Bakery'] }),
    visibility: Type.Optional(Literals(VISIBILITIES, 'private (default) or shared.', 'private')),
    account_kind: Type.Optional(Literals(ACCOUNT_KINDS, 'profile (default), page or business.', 'profile')),
  },
  { additionalProperties: false },
);
export type CreateAccountInput = Static<typeof CreateAccountBody>;

export const ListAccountsQuery = ListQuery({
  platform: Type.Optional(Type.String({ maxLength: 40, description: 'Only accounts of this platform.', examples: ['sandbox'] })),
  status: Type.Optional(Literals(ACCOUNT_STATUSES, 'Only accounts with this status.', 'connected')),
});

export const AccountParams = PathParams({ id: IntegerIdParam });

// Files

export const UploadFile = Type.Object(
  {
    file_id: FileId('Id used in media[].file_id.'),
    status: Literals(
      FILE_STATUSES,
      'pending (link issued, no bytes yet), uploading, ready (passed every check: usable), rejected (refused: see reject_code) or expired (past its 24 hours).',
      'ready',
    ),
    file_name: Type.String({ maxLength: 255, description: 'Cleaned file name (no path, control characters or reserved names).', examples: ['summer-sale.png'] }),
    kind: Nullable(
      Type.String({
        maxLength: 20,
        description: 'What the bytes turned out to be: png, jpeg, gif, mp4, pdf, docx, pptx (or what was refused: svg, ole2, executable...).',
        examples: ['png'],
      }),
    ),
    mime: Nullable(Type.String({ maxLength: 100, description: 'Media type read from the bytes.', examples: ['image/png'] })),
    size_bytes: Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_UPLOAD_BYTES, description: 'Exact size in bytes, as declared.', examples: [48213] }),
    sha256: Nullable(
      Type.String({
        maxLength: 64,
        pattern: '^[0-9a-f]{64}$',
        description: 'SHA-256 of the bytes, lower-case hex.',
        examples: ['9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
      }),
    ),
    reject_code: Nullable(
      Type.Enum([...REJECT_CODES], {
        description:
          'Why the file was refused: size_mismatch, checksum_mismatch, type_not_allowed, too_large, macro_detected, embedded_object, external_link, script_detected, malformed_file (also zip bombs), link_expired, link_used.',
        examples: ['checksum_mismatch'],
      }),
    ),
    reject_detail: Nullable(Type.String({ maxLength: 500, description: 'What exactly was found, in words.', examples: ['The SHA-256 of the bytes is not the declared one.'] })),
    expires_at: Nullable(TimestampField('When the file (before upload: the link) stops working.')),
    created_at: TimestampField('When the link was created.'),
    upload_url: Nullable(
      Type.String({
        maxLength: 2048,
        description: 'One-time address for the PUT of the bytes (secret; 15 minutes). Only in the create reply; null everywhere else, replays included.',
        examples: ['https://api.example.com/api/v1/services/social/uploads/upl_Xq3b...'],
      }),
    ),
    upload_token: Nullable(
      Type.String({ maxLength: 100, description: 'Secret part of upload_url. Only in the create reply.', examples: ['upl_Xq3bV0m9P2aL7cT1dK8sR4yN6wE5uJ0hG3fB2iZ9oQx'] }),
    ),
    upload_method: Type.Enum(['PUT'], { description: 'Always PUT.', examples: ['PUT'] }),
    how_to_send: Nullable(
      Type.String({
        maxLength: 4096,
        description: 'A ready-to-run command that sends the file. Only in the create reply.',
        examples: [
          "curl --fail -X PUT -H 'Content-Type: application/octet-stream' --data-binary @'summer-sale.png' 'https://api.example.com/api/v1/services/social/uploads/upl_Xq3b...'",
        ],
      }),
    ),
  },
  { title: 'SocialUploadFile', additionalProperties: false },
);
export type UploadFileReply = Static<typeof UploadFile>;

export const CreateUploadLinkBody = Type.Object(
  {
    file_name: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Name of the file, with its extension; cleaned (path parts and control characters removed).',
      examples: ['summer-sale.png'],
    }),
    size_bytes: Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_UPLOAD_BYTES, description: 'Exact size in bytes, at most 450 MB (the MP4 limit).', examples: [48213] }),
    sha256: Type.String({
      minLength: 64,
      maxLength: 64,
      pattern: '^[0-9a-fA-F]{64}$',
      description: 'SHA-256 of the bytes, 64 hex characters, either case.',
      examples: ['9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
    }),
  },
  { additionalProperties: false },
);
export type CreateUploadLinkInput = Static<typeof CreateUploadLinkBody>;

export const FileParams = PathParams({ file_id: UuidParam });
export const UploadParams = PathParams({
  upload_token: Type.String({
    maxLength: 100,
    pattern: '^upl_[A-Za-z0-9_-]{43}$',
    description: 'The one-time upload token (the credential).',
    examples: ['upl_Xq3bV0m9P2aL7cT1dK8sR4yN6wE5uJ0hG3fB2iZ9oQx'],
  }),
});

export const UploadBody = Type.Unsafe<unknown>({
  description: 'The file bytes, exactly size_bytes of them, sent as they are (any Content-Type; application/octet-stream is usual).',
  examples: ['<binary>'],
});

// Posts

const Media = Type.Object(
  {
    file_id: FileId('A ready file of the same tenant and mode (POST /social/files/upload-links).'),
    alt_text: Type.Optional(Nullable(Type.String({ maxLength: 1000, description: 'Text alternative for people who cannot see the media.', examples: ['A tray of croissants'] }))),
  },
  { title: 'SocialPostMediaInput', additionalProperties: false },
);

const MediaReply = Type.Object(
  {
    file_id: FileId('The file.'),
    alt_text: Nullable(Type.String({ maxLength: 1000, description: 'Text alternative.', examples: ['A tray of croissants'] })),
  },
  { title: 'SocialPostMedia', additionalProperties: false },
);

const PostResult = Type.Object(
  {
    account_id: AccountId('The account.'),
    platform: Nullable(Type.String({ maxLength: 40, description: 'Its platform (null when the account was disconnected before publishing).', examples: ['sandbox'] })),
    status: Literals(RESULT_STATUSES, 'pending, published or failed.', 'published'),
    platform_post_id: Nullable(Type.String({ maxLength: 200, description: 'Id of the post on the platform.', examples: ['sbx_post_0b7e2c1a'] })),
    url: Nullable(Type.String({ maxLength: 2048, description: 'Address of the post on the platform.', examples: ['https://sandbox.social.invalid/sandbox_5f0c/posts/0b7e2c1a'] })),
    error: Nullable(Type.String({ maxLength: 1000, description: 'Why publishing to this account failed.', examples: ['The access token has expired.'] })),
    published_at: Nullable(TimestampField('When it was published to this account.')),
  },
  { title: 'SocialPostResult', additionalProperties: false },
);

const AccountIds = Type.Array(AccountId('A connected account of the same tenant and mode.'), {
  minItems: 1,
  maxItems: 20,
  description: 'Accounts to publish to (1 to 20, duplicates dropped).',
  examples: [['42']],
});
const Text = Type.String({ minLength: 1, maxLength: 5000, pattern: '\\S', description: 'Text of the post.', examples: ['Fresh croissants every morning!'] });
const MediaList = Type.Array(Media, {
  maxItems: 10,
  description: 'Files to attach (at most 10), each ready and of the same tenant and mode.',
  examples: [[{ file_id: '3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c', alt_text: 'A tray of croissants' }]],
});
const ScheduledAt = Nullable(Instant('When to publish; null or left out: now. A time in the past also means now.'));
const InputStatus = Type.Enum(['draft', 'scheduled'], {
  description: 'draft keeps the post unpublished; scheduled (default) publishes at scheduled_at (or now).',
  examples: ['scheduled'],
});

export const SocialPost = Type.Object(
  {
    id: FileId('Post id.'),
    account_ids: Type.Array(AccountId('An account.'), { maxItems: 20, description: 'Accounts the post goes to.', examples: [['42']] }),
    text: Type.String({ maxLength: 5000, description: 'Text of the post.', examples: ['Fresh croissants every morning!'] }),
    media: Type.Array(MediaReply, { maxItems: 10, description: 'Attached files.', examples: [[]] }),
    scheduled_at: Nullable(TimestampField('When it is (or was) due; null: as soon as possible.')),
    status: Literals(POST_STATUSES, 'draft, scheduled, publishing, published, partially_failed or failed.', 'scheduled'),
    results: Type.Array(PostResult, { maxItems: 20, description: 'One per account once publishing started.', examples: [[]] }),
    published_at: Nullable(TimestampField('When publishing finished.')),
    created_at: TimestampField('Creation time.'),
    updated_at: TimestampField('Last change.'),
  },
  { title: 'SocialPost', additionalProperties: false },
);
export type SocialPostReply = Static<typeof SocialPost>;

export const CreatePostBody = Type.Object(
  {
    account_ids: AccountIds,
    text: Text,
    media: Type.Optional(MediaList),
    scheduled_at: Type.Optional(ScheduledAt),
    status: Type.Optional(InputStatus),
  },
  { additionalProperties: false },
);
export type CreatePostInput = Static<typeof CreatePostBody>;

export const UpdatePostBody = Type.Object(
  {
    account_ids: Type.Optional(AccountIds),
    text: Type.Optional(Text),
    media: Type.Optional(MediaList),
    scheduled_at: Type.Optional(ScheduledAt),
    status: Type.Optional(InputStatus),
  },
  { additionalProperties: false },
);
export type UpdatePostInput = Static<typeof UpdatePostBody>;

export const ListPostsQuery = ListQuery({
  status: Type.Optional(Literals(POST_STATUSES, 'Only posts with this status.', 'scheduled')),
  account_id: Type.Optional(AccountId('Only posts to this account.')),
});

export const PostParams = PathParams({ id: UuidParam });
