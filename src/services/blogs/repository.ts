import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { ownedTables, type ListSpec, type OwnedInsert, type OwnedRow, type Owner } from '../../db/owned.js';
import { pageWithTotal, type PageRequest } from '../../db/paging.js';
import { containsPattern } from '../../lib/search.js';
import type { BlogPostsTable, BlogSubscribersTable, BlogTables, PostStatus, SubscriberStatus } from './tables.js';

export type BlogDb = Kysely<BlogTables>;

export function blogDb(db: Db): BlogDb {
  return serviceDb(db);
}

export type PostRow = Omit<OwnedRow<BlogPostsTable>, 'category_keys' | 'tag_keys'>;
export type PostChanges = Partial<OwnedRow<BlogPostsTable>>;
export type SubscriberRow = OwnedRow<BlogSubscribersTable>;
export type SubscriberChanges = Partial<SubscriberRow>;

const POST_COLUMNS = [
  'id',
  'title',
  'slug',
  'excerpt',
  'content',
  'content_html',
  'status',
  'published_at',
  'scheduled_for',
  'categories',
  'tags',
  'author_name',
  'cover_image_url',
  'seo_title',
  'seo_description',
  'reading_time_minutes',
  'view_count',
  'created_at',
  'updated_at',
] as const;

const SUBSCRIBER_COLUMNS = ['id', 'email', 'name', 'status', 'source', 'subscribed_at', 'unsubscribed_at', 'created_at', 'updated_at'] as const;

/** Unique indexes whose violation is a client conflict rather than a failure. */
export const SLUG_INDEX = 'blog_posts_slug';
export const SUBSCRIBER_EMAIL_INDEX = 'blog_subscribers_email';

export { isUniqueViolation } from '../../db/errors.js';

const owned = ownedTables<BlogTables>();
const posts = owned('blog_posts');
const viewDays = owned('blog_post_view_days');
const subscribers = owned('blog_subscribers');

// Posts

export function insertPost(db: BlogDb, owner: Owner, row: OwnedInsert<BlogPostsTable>): Promise<PostRow> {
  return posts.insert(db, owner, row).returning(POST_COLUMNS).executeTakeFirstOrThrow();
}

const postById = posts.statement((from, values: { id: string }) => from.select(POST_COLUMNS).where('id', '=', values.id));
const postByIdForUpdate = posts.statement((from, values: { id: string }) => from.select(POST_COLUMNS).where('id', '=', values.id).forUpdate());

export function findPost(db: BlogDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<PostRow | undefined> {
  return (options.forUpdate ? postByIdForUpdate : postById).first(db, owner, { id });
}

export async function isSlugTaken(db: BlogDb, owner: Owner, slug: string, exceptId?: string): Promise<boolean> {
  let query = posts.select(db, owner).select('id').where('slug', '=', slug);
  if (exceptId) query = query.where('id', '<>', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

export interface PostFilters {
  status?: PostStatus;
  /** Lower-cased category name. */
  categoryKey?: string;
  /** Lower-cased tag name. */
  tagKey?: string;
  search?: string;
}

type PostListFilters = { status?: PostStatus; categoryKey?: string; tagKey?: string; pattern?: string };

const postFilters = {
  status: (eb, status) => eb('status', '=', status),
  categoryKey: (eb, key) => eb('category_keys', '@>', sql<string[]>`array[${key}]::text[]`),
  tagKey: (eb, key) => eb('tag_keys', '@>', sql<string[]>`array[${key}]::text[]`),
  pattern: (eb, pattern) => eb('title', 'ilike', pattern),
} satisfies ListSpec<BlogTables, 'blog_posts', PostListFilters, PostRow>['filters'];

const postList = posts.list<PostListFilters, PostRow>({
  filters: postFilters,
  select: (from) => from.select(POST_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

const publishedPostList = posts.list<PostListFilters, PostRow>({
  filters: postFilters,
  select: (from) => from.select(POST_COLUMNS).orderBy('published_at', 'desc').orderBy('id', 'desc'),
});

function toListFilters(filters: PostFilters): PostListFilters {
  return {
    status: filters.status,
    categoryKey: filters.categoryKey,
    tagKey: filters.tagKey,
    pattern: filters.search ? containsPattern(filters.search) : undefined,
  };
}

/** Posts of any status, newest first. */
export function listPosts(db: BlogDb, owner: Owner, filters: PostFilters, page: PageRequest) {
  return postList.page(db, owner, toListFilters(filters), page);
}

/** Published posts only, most recently published first. */
export function listPublishedPosts(db: BlogDb, owner: Owner, filters: Omit<PostFilters, 'status' | 'search'>, page: PageRequest) {
  return publishedPostList.page(db, owner, toListFilters({ ...filters, status: 'published' }), page);
}

export function updatePost(db: BlogDb, owner: Owner, id: string, changes: PostChanges): Promise<PostRow> {
  return posts.update(db, owner).set(changes).where('id', '=', id).returning(POST_COLUMNS).executeTakeFirstOrThrow();
}

export async function deletePost(db: BlogDb, owner: Owner, id: string): Promise<{ id: string; status: PostStatus } | undefined> {
  return posts.delete(db, owner).where('id', '=', id).returning(['id', 'status']).executeTakeFirst();
}

/**
 * One read of a published post: counts the view on the post and in its UTC day's bucket,
 * in one statement (atomic increments, no read-modify-write). Undefined when no published
 * post has this slug. Does not touch updated_at: a read is not an edit.
 */
export async function readPublishedPost(db: BlogDb, owner: Owner, slug: string, day: string): Promise<PostRow | undefined> {
  const viewed = posts
    .update(db, owner)
    .set((eb) => ({ view_count: eb('view_count', '+', 1) }))
    .where('slug', '=', slug)
    .where('status', '=', 'published')
    .returning(POST_COLUMNS);
  const counted = viewDays
    .insertFrom(db, owner, ['post_id', 'day', 'views'], sql`select id, ${day}::date, 1 from viewed`)
    .onConflict((conflict) => conflict.columns(['post_id', 'day']).doUpdateSet((eb) => ({ views: eb('blog_post_view_days.views', '+', 1) })));
  // Both tables are reached through their owned builders; the CTEs tie them into one statement.
  const result = await sql<PostRow>`with viewed as (${viewed}), counted as (${counted}) select * from viewed`.execute(db);
  return result.rows[0];
}

/**
 * Publishes a scheduled post whose time has come. The conditions make it safe to run
 * twice or on two processes at once: only one update finds the row still scheduled.
 */
export async function publishIfDue(db: BlogDb, owner: Owner, id: string, now: Date): Promise<PostRow | undefined> {
  return posts
    .update(db, owner)
    .set((eb) => ({
      status: 'published',
      published_at: eb.fn.coalesce('published_at', 'scheduled_for'),
      scheduled_for: null,
      updated_at: sql<Date>`case when updated_at < ${now} then ${now}::timestamptz else updated_at + interval '1 millisecond' end`,
    }))
    .where('id', '=', id)
    .where('status', '=', 'scheduled')
    .where('scheduled_for', '<=', now)
    .returning(POST_COLUMNS)
    .executeTakeFirst();
}

export async function countPostsByStatus(db: BlogDb, owner: Owner, range: TimeRange) {
  const rows = await posts
    .select(db, owner)
    .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
    .groupBy('status')
    .execute();
  let publishedInRange = posts
    .select(db, owner)
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('status', '=', 'published');
  if (range.start) publishedInRange = publishedInRange.where('published_at', '>=', range.start);
  if (range.end) publishedInRange = publishedInRange.where('published_at', '<', range.end);
  const inRange = await publishedInRange.executeTakeFirstOrThrow();
  return { byStatus: new Map(rows.map((row) => [row.status, Number(row.count)])), publishedInRange: Number(inRange.count) };
}

/** Half-open interval [start, end); either end may be open. */
export interface TimeRange {
  start: Date | undefined;
  end: Date | undefined;
}

/** Inclusive UTC days, `YYYY-MM-DD`; either end may be open. */
export interface DayRange {
  from: string | undefined;
  to: string | undefined;
}

export async function sumViews(db: BlogDb, owner: Owner, days: DayRange): Promise<number> {
  let query = viewDays.select(db, owner).select(sql<string>`coalesce(sum(views), 0)`.as('total'));
  if (days.from) query = query.where('day', '>=', sql<string>`${days.from}::date`);
  if (days.to) query = query.where('day', '<=', sql<string>`${days.to}::date`);
  return Number((await query.executeTakeFirstOrThrow()).total);
}

export async function topPosts(db: BlogDb, owner: Owner, days: DayRange, limit: number) {
  // The posts side is owned too: a view day can only ever name a post of its own owner.
  const ownedPosts = posts.select(db, owner).select(['id', 'title', 'slug', 'status']).as('p');
  let query = viewDays
    .select(db, owner)
    .innerJoin(ownedPosts, 'p.id', 'blog_post_view_days.post_id')
    .select(['p.id', 'p.title', 'p.slug', 'p.status', (eb) => eb.fn.sum<string>('blog_post_view_days.views').as('views')]);
  if (days.from) query = query.where('blog_post_view_days.day', '>=', sql<string>`${days.from}::date`);
  if (days.to) query = query.where('blog_post_view_days.day', '<=', sql<string>`${days.to}::date`);
  const rows = await query
    .groupBy(['p.id', 'p.title', 'p.slug', 'p.status'])
    .orderBy((eb) => eb.fn.sum('blog_post_view_days.views'), 'desc')
    .orderBy('p.id')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, views: Number(row.views) }));
}

type Category = { name: string; key: string };

/** The post's categories with their lower-cased keys, one row each. */
function postCategories() {
  return sql<Category>`unnest(${sql.ref('blog_posts.categories')}, ${sql.ref('blog_posts.category_keys')})`.as<'c'>(sql`c(name, key)`);
}

const categoryList = posts.list<Record<string, never>, { name: string; post_count: string; published_count: string }>({
  filters: {},
  select: (from) =>
    from
      .crossJoinLateral(postCategories())
      .select([
        sql<string>`mode() within group (order by c.name collate "C")`.as('name'),
        sql<string>`count(*)`.as('post_count'),
        sql<string>`count(*) filter (where blog_posts.status = 'published')`.as('published_count'),
      ])
      .groupBy('c.key')
      .orderBy(sql`c.key collate "C"`),
});

const categoryCount = posts.statement((from) => from.crossJoinLateral(postCategories()).select(sql<string>`count(distinct c.key)`.as('total')));

/**
 * Categories used by at least one post of the tenant and mode, grouped case-insensitively
 * (named by their most used spelling), ordered by the lower-cased name in code-point order
 * (collation "C", so the order is the same on every database).
 */
export async function listCategories(db: BlogDb, owner: Owner, page: PageRequest) {
  // The total counts categories, not posts: the list's rows and a count of its own.
  const { rows, total } = await pageWithTotal(categoryList.rows(db, owner, {}, page), categoryCount.all(db, owner, {}));
  return {
    rows: rows.map((row) => ({ name: row.name, post_count: Number(row.post_count), published_count: Number(row.published_count) })),
    total,
  };
}

// Subscribers

export function insertSubscriber(db: BlogDb, owner: Owner, row: OwnedInsert<BlogSubscribersTable>): Promise<SubscriberRow> {
  return subscribers.insert(db, owner, row).returning(SUBSCRIBER_COLUMNS).executeTakeFirstOrThrow();
}

const subscriberById = subscribers.statement((from, values: { id: string }) => from.select(SUBSCRIBER_COLUMNS).where('id', '=', values.id));
const subscriberByIdForUpdate = subscribers.statement((from, values: { id: string }) => from.select(SUBSCRIBER_COLUMNS).where('id', '=', values.id).forUpdate());

export function findSubscriber(db: BlogDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<SubscriberRow | undefined> {
  return (options.forUpdate ? subscriberByIdForUpdate : subscriberById).first(db, owner, { id });
}

export async function findSubscriberIdByEmail(db: BlogDb, owner: Owner, email: string): Promise<string | undefined> {
  const row = await subscribers.select(db, owner).select('id').where('email', '=', email).executeTakeFirst();
  return row?.id;
}

const subscriberList = subscribers.list<{ status?: SubscriberStatus; pattern?: string }, SubscriberRow>({
  filters: {
    status: (eb, status) => eb('status', '=', status),
    pattern: (eb, pattern) => eb.or([eb('email', 'ilike', pattern), eb('name', 'ilike', pattern)]),
  },
  select: (from) => from.select(SUBSCRIBER_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listSubscribers(db: BlogDb, owner: Owner, filters: { status?: SubscriberStatus; search?: string }, page: PageRequest) {
  return subscriberList.page(db, owner, { status: filters.status, pattern: filters.search ? containsPattern(filters.search) : undefined }, page);
}

export function updateSubscriber(db: BlogDb, owner: Owner, id: string, changes: SubscriberChanges): Promise<SubscriberRow> {
  return subscribers.update(db, owner).set(changes).where('id', '=', id).returning(SUBSCRIBER_COLUMNS).executeTakeFirstOrThrow();
}

export async function deleteSubscriber(db: BlogDb, owner: Owner, id: string): Promise<boolean> {
  const row = await subscribers.delete(db, owner).where('id', '=', id).returning('id').executeTakeFirst();
  return row !== undefined;
}

export async function countSubscribersByStatus(db: BlogDb, owner: Owner, range: TimeRange) {
  const within = (column: 'subscribed_at' | 'unsubscribed_at') => {
    const bounds = [...(range.start ? [sql`${sql.ref(column)} >= ${range.start}::timestamptz`] : []), ...(range.end ? [sql`${sql.ref(column)} < ${range.end}::timestamptz`] : [])];
    return bounds.length > 0 ? sql.join(bounds, sql` and `) : sql`true`;
  };
  const row = await subscribers
    .select(db, owner)
    .select([
      sql<string>`count(*) filter (where status = 'active')`.as('active'),
      sql<string>`count(*) filter (where status = 'unsubscribed')`.as('unsubscribed'),
      sql<string>`count(*) filter (where status = 'bounced')`.as('bounced'),
      sql<string>`count(*) filter (where ${within('subscribed_at')})`.as('new_in_range'),
      sql<string>`count(*) filter (where status = 'unsubscribed' and ${within('unsubscribed_at')})`.as('unsubscribed_in_range'),
    ])
    .executeTakeFirstOrThrow();
  return {
    active: Number(row.active),
    unsubscribed: Number(row.unsubscribed),
    bounced: Number(row.bounced),
    new_in_range: Number(row.new_in_range),
    unsubscribed_in_range: Number(row.unsubscribed_in_range),
  };
}
