import { Type, type Static } from 'typebox';
import { SLUG_PATTERN } from '../../lib/slug.js';
import { ExpectedUpdatedAt } from '../../platform/concurrency.js';
import { Nullable, PathParams, Timestamp, TimestampField, Uuid } from '../../platform/http/schemas.js';
import { ListQuery } from '../../platform/pagination/index.js';

export const POST_STATUSES = ['draft', 'scheduled', 'published', 'archived'] as const;
export const SUBSCRIBER_STATUSES = ['active', 'unsubscribed', 'bounced'] as const;

export const MAX_TITLE_LENGTH = 200;
export const MAX_CONTENT_LENGTH = 200_000;
export const MAX_LABELS = 20;
export const MAX_LABEL_LENGTH = 50;

const PostStatus = Type.Enum([...POST_STATUSES], {
  description: 'draft (not public), scheduled (goes live at scheduled_for), published (public), archived (taken down, kept).',
});
const SubscriberStatus = (description = 'active (receives the newsletter), unsubscribed (asked to stop), bounced (mail to the address fails).') =>
  Type.Enum([...SUBSCRIBER_STATUSES], { description });

/** No control characters, and at least one visible character. */
const PRINTABLE_TEXT = '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$';

const Title = Type.String({
  minLength: 1,
  maxLength: MAX_TITLE_LENGTH,
  pattern: '\\S',
  description: 'Headline, 1-200 characters; trimmed.',
  examples: ['Ten years of the Analytical Engine'],
});
const Slug = Type.String({
  minLength: 1,
  maxLength: 120,
  pattern: SLUG_PATTERN,
  description: 'URL name, unique per tenant and mode: lower-case letters, digits and single hyphens. Derived from the title when not sent.',
  examples: ['ten-years-of-the-analytical-engine'],
});
const Excerpt = Type.String({ maxLength: 300, description: 'Short summary for lists and previews, up to 300 characters; trimmed, blank becomes null.' });
const Content = Type.String({
  maxLength: MAX_CONTENT_LENGTH,
  description: 'Body in Markdown (CommonMark), up to 200,000 characters. Raw HTML is shown as text, not interpreted.',
  examples: ['# Hello\n\nFirst **post**, with a [link](https://example.com).'],
});
const Label = Type.String({ minLength: 1, maxLength: MAX_LABEL_LENGTH, pattern: PRINTABLE_TEXT, description: '1-50 characters; trimmed.' });
const Labels = (what: string) =>
  Type.Array(Label, {
    maxItems: MAX_LABELS,
    description: `${what}: up to 20 strings of 1-50 characters; trimmed, and duplicates differing only in case dropped (the first spelling is kept).`,
  });
const AuthorName = Type.String({ minLength: 1, maxLength: 200, pattern: PRINTABLE_TEXT, description: 'Byline shown with the post; trimmed.' });
const CoverImageUrl = Type.String({
  format: 'uri',
  maxLength: 2048,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]+([/?#]\\S*)?$',
  description: 'Absolute http(s) URL of the cover image.',
  examples: ['https://images.example.com/engine.jpg'],
});
const SeoTitle = Type.String({ maxLength: 300, description: 'Title for search engines and shares, up to 300 characters (engines show about 60); trimmed, blank becomes null.' });
const SeoDescription = Type.String({ maxLength: 500, description: 'Description for search engines, up to 500 characters (engines show about 155); trimmed, blank becomes null.' });

export const Post = Type.Object(
  {
    id: Uuid,
    title: Type.String({ maxLength: 200 }),
    slug: Type.String({ maxLength: 120 }),
    excerpt: Nullable(Type.String({ maxLength: 300 })),
    content: Type.String({ maxLength: 200000, description: 'Markdown as written.' }),
    content_html: Type.String({
      maxLength: 4000000,
      description: 'The Markdown rendered to HTML: raw HTML escaped, unsafe links dropped, links rel="noopener noreferrer nofollow". Empty for empty content.',
    }),
    status: PostStatus,
    published_at: Nullable(Timestamp),
    scheduled_for: Nullable(TimestampField('When a scheduled post goes live; null unless status is scheduled.')),
    categories: Type.Array(Type.String({ maxLength: MAX_LABEL_LENGTH }), { maxItems: MAX_LABELS }),
    tags: Type.Array(Type.String({ maxLength: MAX_LABEL_LENGTH }), { maxItems: MAX_LABELS }),
    author_name: Nullable(Type.String({ maxLength: 200 })),
    cover_image_url: Nullable(Type.String({ maxLength: 2048 })),
    seo_title: Nullable(Type.String({ maxLength: 300 })),
    seo_description: Nullable(Type.String({ maxLength: 500 })),
    reading_time_minutes: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Words / 275, rounded up; at least 1 for any content, 0 for none.' }),
    view_count: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Reads through GET /posts/published/{slug}.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Post', additionalProperties: false },
);

export const CreatePostBody = Type.Object(
  {
    title: Title,
    slug: Type.Optional(Slug),
    excerpt: Type.Optional(Nullable(Excerpt)),
    content: Type.Optional(Content),
    categories: Type.Optional(Labels('Categories')),
    tags: Type.Optional(Labels('Tags')),
    author_name: Type.Optional(Nullable(AuthorName)),
    cover_image_url: Type.Optional(Nullable(CoverImageUrl)),
    seo_title: Type.Optional(Nullable(SeoTitle)),
    seo_description: Type.Optional(Nullable(SeoDescription)),
    status: Type.Optional(
      Type.Enum([...POST_STATUSES], {
        description: 'Ignored: a new post is always a draft. Publish or schedule it with POST /posts/{id}/status (scope service.blogs.publish).',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        title: 'Ten years of the Analytical Engine',
        excerpt: 'What we learned building it.',
        content: '# A decade\n\nIt started with a **punch card**.',
        categories: ['History'],
        tags: ['engines', 'computing'],
        author_name: 'Ada Lovelace',
        cover_image_url: 'https://images.example.com/engine.jpg',
      },
    ],
  },
);

export const UpdatePostBody = Type.Object(
  {
    title: Type.Optional(Title),
    slug: Type.Optional(Slug),
    excerpt: Type.Optional(Nullable(Excerpt)),
    content: Type.Optional(Content),
    categories: Type.Optional(Labels('Categories')),
    tags: Type.Optional(Labels('Tags')),
    author_name: Type.Optional(Nullable(AuthorName)),
    cover_image_url: Type.Optional(Nullable(CoverImageUrl)),
    seo_title: Type.Optional(Nullable(SeoTitle)),
    seo_description: Type.Optional(Nullable(SeoDescription)),
    expected_updated_at: ExpectedUpdatedAt,
  },
  {
    additionalProperties: false,
    description: 'Only the fields sent change; null clears a nullable field. The status changes only through POST /posts/{id}/status.',
    examples: [{ title: 'Eleven years of the Analytical Engine', tags: ['engines'] }],
  },
);

export const ChangePostStatusBody = Type.Object(
  {
    status: Type.Enum([...POST_STATUSES], { description: 'The status to move to.' }),
    scheduled_for: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 64,
        description: 'Required with status scheduled, and only then: when the post goes live, in the future.',
        examples: ['2026-12-01T09:00:00.000Z'],
      }),
    ),
    expected_updated_at: ExpectedUpdatedAt,
  },
  {
    additionalProperties: false,
    examples: [{ status: 'published' }, { status: 'scheduled', scheduled_for: '2026-12-01T09:00:00.000Z' }, { status: 'archived' }],
  },
);

export const SlugParams = PathParams({ slug: Type.String({ pattern: SLUG_PATTERN, maxLength: 120, examples: ['ten-years-of-the-analytical-engine'] }) });

const Filter = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 200, description }));

export const ListPostsQuery = ListQuery({
  status: Type.Optional(PostStatus),
  category: Filter('Posts in this category (case-insensitive, whole name).'),
  tag: Filter('Posts with this tag (case-insensitive, whole name).'),
  search: Filter('Case-insensitive match anywhere in the title.'),
});

export const ListPublishedPostsQuery = ListQuery({
  category: Filter('Posts in this category (case-insensitive, whole name).'),
  tag: Filter('Posts with this tag (case-insensitive, whole name).'),
});

export const Subscriber = Type.Object(
  {
    id: Uuid,
    email: Type.String({ maxLength: 320 }),
    name: Nullable(Type.String({ maxLength: 200 })),
    status: SubscriberStatus(),
    source: Type.String({ maxLength: 50, description: 'How the subscriber was added, e.g. api, import, form.' }),
    subscribed_at: Timestamp,
    unsubscribed_at: Nullable(TimestampField('When they unsubscribed; null unless status is unsubscribed.')),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Subscriber', additionalProperties: false },
);

const Email = Type.String({ format: 'email', maxLength: 320, description: 'Stored lower-cased; unique per tenant and mode.', examples: ['ada@example.com'] });
const SubscriberName = Type.String({ minLength: 1, maxLength: 200, pattern: PRINTABLE_TEXT, description: 'Display name; trimmed.' });

export const CreateSubscriberBody = Type.Object(
  {
    email: Email,
    name: Type.Optional(Nullable(SubscriberName)),
    status: Type.Optional(SubscriberStatus('Default active; importing an unsubscribed or bounced address keeps its state.')),
    source: Type.Optional(
      Type.String({ minLength: 1, maxLength: 50, pattern: PRINTABLE_TEXT, description: 'Free text: how they were added (api, import, form...). Default api.', examples: ['form'] }),
    ),
    subscribed_at: Type.Optional(
      Type.String({ format: 'date-time', maxLength: 64, description: 'For imports: when they originally subscribed (not in the future, not before 1970). Default now.' }),
    ),
  },
  { additionalProperties: false, examples: [{ email: 'ada@example.com', name: 'Ada Lovelace', source: 'form' }] },
);

export const UpdateSubscriberBody = Type.Object(
  {
    email: Type.Optional(Email),
    name: Type.Optional(Nullable(SubscriberName)),
    status: Type.Optional(SubscriberStatus('unsubscribed sets unsubscribed_at; active clears it (and, coming back from unsubscribed, restarts subscribed_at).')),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ status: 'unsubscribed' }] },
);

export const ListSubscribersQuery = ListQuery({
  status: Type.Optional(SubscriberStatus()),
  search: Filter('Case-insensitive match anywhere in email or name.'),
});

export const Category = Type.Object(
  {
    name: Type.String({ maxLength: 50, description: 'The most used spelling of the category.' }),
    post_count: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Posts of any status in the category.' }),
    published_count: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Published posts in the category.' }),
  },
  { title: 'Category', additionalProperties: false },
);

export const ListCategoriesQuery = ListQuery({});

const Day = Type.String({
  format: 'date',
  maxLength: 10,
  pattern: '^[1-9][0-9]{3}-',
  description: 'A UTC calendar day, YYYY-MM-DD (inclusive).',
  examples: ['2026-11-01'],
});

export const AnalyticsQuery = Type.Object(
  {
    from: Type.Optional(Day),
    to: Type.Optional(Day),
    top: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'How many top posts to list, 1-100.' })),
  },
  { additionalProperties: false },
);

const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

export const Analytics = Type.Object(
  {
    range: Type.Object(
      {
        from: Nullable(Type.String({ maxLength: 10, description: 'First UTC day counted; null: since the beginning.' })),
        to: Nullable(Type.String({ maxLength: 10, description: 'Last UTC day counted; null: up to now.' })),
      },
      { additionalProperties: false },
    ),
    posts: Type.Object(
      { total: Count, draft: Count, scheduled: Count, published: Count, archived: Count, published_in_range: Count },
      { additionalProperties: false, description: 'Current counts by status; published_in_range counts published posts whose published_at falls in the range.' },
    ),
    subscribers: Type.Object(
      { total: Count, active: Count, unsubscribed: Count, bounced: Count, new_in_range: Count, unsubscribed_in_range: Count },
      { additionalProperties: false, description: 'Current counts by status; new_in_range by subscribed_at, unsubscribed_in_range by unsubscribed_at.' },
    ),
    views: Type.Object(
      {
        total: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Reads of published posts in the range.' }),
        top_posts: Type.Array(
          Type.Object(
            { id: Uuid, title: Type.String({ maxLength: MAX_TITLE_LENGTH }), slug: Type.String({ maxLength: 120 }), status: PostStatus, views: Count },
            { additionalProperties: false },
          ),
          { maxItems: 100, description: 'Most read posts in the range, most views first.' },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { title: 'BlogAnalytics', additionalProperties: false },
);

export const Deleted = Type.Object({ id: Uuid, deleted: Type.Literal(true) }, { title: 'DeletedObject', additionalProperties: false });

export type PostView = Static<typeof Post>;
export type CreatePostInput = Static<typeof CreatePostBody>;
export type UpdatePostInput = Static<typeof UpdatePostBody>;
export type ChangePostStatusInput = Static<typeof ChangePostStatusBody>;
export type SubscriberView = Static<typeof Subscriber>;
export type CreateSubscriberInput = Static<typeof CreateSubscriberBody>;
export type UpdateSubscriberInput = Static<typeof UpdateSubscriberBody>;
export type CategoryView = Static<typeof Category>;
export type AnalyticsView = Static<typeof Analytics>;
export type AnalyticsInput = Static<typeof AnalyticsQuery>;
