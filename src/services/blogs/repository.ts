import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import type { Owner } from '../../platform/context.js';
import { containsPattern } from '../../lib/search.js';
import { selectPage } from '../../db/paging.js';
import type { PageRequest } from '../../platform/pagination/index.js';
import type { BlogPostsTable, BlogSubscribersTable, BlogTables, PostStatus, SubscriberStatus } from './tables.js';

export type { Owner };

export type BlogDb = Kysely<BlogTables>;

export function blogDb(db: Db): BlogDb {
  return serviceDb(db);
}

export type PostRow = Omit<BlogPostsTable, 'tenant_id' | 'mode' | 'category_keys' | 'tag_keys'>;
export type SubscriberRow = Omit<BlogSubscribersTable, 'tenant_id' | 'mode'>;

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

// Posts

export function insertPost(db: BlogDb, row: BlogPostsTable): Promise<PostRow> {
  return db.insertInto('blog_posts').values(row).returning(POST_COLUMNS).executeTakeFirstOrThrow();
}

export function findPost(db: BlogDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<PostRow | undefined> {
  let query = db
    .selectFrom('blog_posts')
    .select(POST_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function isSlugTaken(db: BlogDb, owner: Owner, slug: string, exceptId?: string): Promise<boolean> {
  let query = db
    .selectFrom('blog_posts')
    .select('id')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('slug', '=', slug);
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

function filteredPosts(db: BlogDb, owner: Owner, filters: PostFilters) {
  let base = db.selectFrom('blog_posts').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.status) base = base.where('status', '=', filters.status);
  if (filters.categoryKey !== undefined) base = base.where('category_keys', '@>', sql<string[]>`array[${filters.categoryKey}]::text[]`);
  if (filters.tagKey !== undefined) base = base.where('tag_keys', '@>', sql<string[]>`array[${filters.tagKey}]::text[]`);
  if (filters.search) base = base.where('title', 'ilike', containsPattern(filters.search));
  return base;
}

/** Posts of any status, newest first. */
export async function listPosts(db: BlogDb, owner: Owner, filters: PostFilters, page: PageRequest) {
  const base = filteredPosts(db, owner, filters);
  return selectPage(db, base, base.select(POST_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

/** Published posts only, most recently published first. */
export async function listPublishedPosts(db: BlogDb, owner: Owner, filters: Omit<PostFilters, 'status' | 'search'>, page: PageRequest) {
  const base = filteredPosts(db, owner, { ...filters, status: 'published' });
  return selectPage(db, base, base.select(POST_COLUMNS).orderBy('published_at', 'desc').orderBy('id', 'desc'), page);
}

export function updatePost(db: BlogDb, owner: Owner, id: string, changes: Partial<BlogPostsTable>): Promise<PostRow> {
  return db
    .updateTable('blog_posts')
    .set(changes)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .returning(POST_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function deletePost(db: BlogDb, owner: Owner, id: string): Promise<{ id: string; status: PostStatus } | undefined> {
  return db
    .deleteFrom('blog_posts')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .returning(['id', 'status'])
    .executeTakeFirst();
}

/**
 * One read of a published post: counts the view on the post and in its UTC day's bucket,
 * in one statement (atomic increments, no read-modify-write). Undefined when no published
 * post has this slug. Does not touch updated_at: a read is not an edit.
 */
export async function readPublishedPost(db: BlogDb, owner: Owner, slug: string, day: string): Promise<PostRow | undefined> {
  const result = await sql<PostRow>`
    with viewed as (
      update blog_posts set view_count = view_count + 1
       where tenant_id = ${owner.tenantId} and mode = ${owner.mode} and slug = ${slug} and status = 'published'
      returning ${sql.join(POST_COLUMNS.map((column) => sql.ref(column)))}
    ), counted as (
      insert into blog_post_view_days (post_id, tenant_id, mode, day, views)
      select id, ${owner.tenantId}, ${owner.mode}, ${day}::date, 1 from viewed
      on conflict (post_id, day) do update set views = blog_post_view_days.views + 1
    )
    select * from viewed`.execute(db);
  return result.rows[0];
}

/**
 * Publishes a scheduled post whose time has come. The conditions make it safe to run
 * twice or on two processes at once: only one update finds the row still scheduled.
 */
export async function publishIfDue(db: BlogDb, owner: Owner, id: string, now: Date): Promise<PostRow | undefined> {
  return db
    .updateTable('blog_posts')
    .set((eb) => ({
      status: 'published',
      published_at: eb.fn.coalesce('published_at', 'scheduled_for'),
      scheduled_for: null,
      updated_at: sql<Date>`case when updated_at < ${now} then ${now}::timestamptz else updated_at + interval '1 millisecond' end`,
    }))
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .where('status', '=', 'scheduled')
    .where('scheduled_for', '<=', now)
    .returning(POST_COLUMNS)
    .executeTakeFirst();
}

export async function countPostsByStatus(db: BlogDb, owner: Owner, range: TimeRange) {
  const rows = await db
    .selectFrom('blog_posts')
    .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .groupBy('status')
    .execute();
  let publishedInRange = db
    .selectFrom('blog_posts')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
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
  let query = db
    .selectFrom('blog_post_view_days')
    .select(sql<string>`coalesce(sum(views), 0)`.as('total'))
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode);
  if (days.from) query = query.where('day', '>=', sql<string>`${days.from}::date`);
  if (days.to) query = query.where('day', '<=', sql<string>`${days.to}::date`);
  return Number((await query.executeTakeFirstOrThrow()).total);
}

export async function topPosts(db: BlogDb, owner: Owner, days: DayRange, limit: number) {
  let query = db
    .selectFrom('blog_post_view_days as v')
    .innerJoin('blog_posts as p', 'p.id', 'v.post_id')
    .select(['p.id', 'p.title', 'p.slug', 'p.status', sql<string>`sum(v.views)`.as('views')])
    .where('v.tenant_id', '=', owner.tenantId)
    .where('v.mode', '=', owner.mode)
    .where('p.tenant_id', '=', owner.tenantId)
    .where('p.mode', '=', owner.mode);
  if (days.from) query = query.where('v.day', '>=', sql<string>`${days.from}::date`);
  if (days.to) query = query.where('v.day', '<=', sql<string>`${days.to}::date`);
  const rows = await query
    .groupBy(['p.id', 'p.title', 'p.slug', 'p.status'])
    .orderBy(sql`sum(v.views)`, 'desc')
    .orderBy('p.id')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, views: Number(row.views) }));
}

/**
 * Categories used by at least one post of the tenant and mode, grouped case-insensitively
 * (named by their most used spelling), ordered by the lower-cased name in code-point order
 * (collation "C", so the order is the same on every database).
 */
export async function listCategories(db: BlogDb, owner: Owner, page: PageRequest) {
  const [rows, count] = await Promise.all([
    sql<{ name: string; post_count: string; published_count: string }>`
      select mode() within group (order by c.name collate "C") as name,
             count(*) as post_count,
             count(*) filter (where p.status = 'published') as published_count
        from blog_posts p, unnest(p.categories, p.category_keys) as c(name, key)
       where p.tenant_id = ${owner.tenantId} and p.mode = ${owner.mode}
       group by c.key
       order by c.key collate "C"
       limit ${page.limit} offset ${page.offset}`.execute(db),
    sql<{ total: string }>`
      select count(distinct c.key) as total
        from blog_posts p, unnest(p.category_keys) as c(key)
       where p.tenant_id = ${owner.tenantId} and p.mode = ${owner.mode}`.execute(db),
  ]);
  return {
    rows: rows.rows.map((row) => ({ name: row.name, post_count: Number(row.post_count), published_count: Number(row.published_count) })),
    total: Number(count.rows[0]?.total ?? 0),
  };
}

// Subscribers

export function insertSubscriber(db: BlogDb, row: BlogSubscribersTable): Promise<SubscriberRow> {
  return db.insertInto('blog_subscribers').values(row).returning(SUBSCRIBER_COLUMNS).executeTakeFirstOrThrow();
}

export function findSubscriber(db: BlogDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<SubscriberRow | undefined> {
  let query = db
    .selectFrom('blog_subscribers')
    .select(SUBSCRIBER_COLUMNS)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function findSubscriberIdByEmail(db: BlogDb, owner: Owner, email: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('blog_subscribers')
    .select('id')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('email', '=', email)
    .executeTakeFirst();
  return row?.id;
}

export async function listSubscribers(db: BlogDb, owner: Owner, filters: { status?: SubscriberStatus; search?: string }, page: PageRequest) {
  let base = db.selectFrom('blog_subscribers').where('tenant_id', '=', owner.tenantId).where('mode', '=', owner.mode);
  if (filters.status) base = base.where('status', '=', filters.status);
  if (filters.search) {
    const pattern = containsPattern(filters.search);
    base = base.where((eb) => eb.or([eb('email', 'ilike', pattern), eb('name', 'ilike', pattern)]));
  }
  return selectPage(db, base, base.select(SUBSCRIBER_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'), page);
}

export function updateSubscriber(db: BlogDb, owner: Owner, id: string, changes: Partial<BlogSubscribersTable>): Promise<SubscriberRow> {
  return db
    .updateTable('blog_subscribers')
    .set(changes)
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .returning(SUBSCRIBER_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function deleteSubscriber(db: BlogDb, owner: Owner, id: string): Promise<boolean> {
  const row = await db
    .deleteFrom('blog_subscribers')
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function countSubscribersByStatus(db: BlogDb, owner: Owner, range: TimeRange) {
  const within = (column: 'subscribed_at' | 'unsubscribed_at') => {
    const bounds = [
      ...(range.start ? [sql`${sql.ref(column)} >= ${range.start}::timestamptz`] : []),
      ...(range.end ? [sql`${sql.ref(column)} < ${range.end}::timestamptz`] : []),
    ];
    return bounds.length > 0 ? sql.join(bounds, sql` and `) : sql`true`;
  };
  const row = await db
    .selectFrom('blog_subscribers')
    .select([
      sql<string>`count(*) filter (where status = 'active')`.as('active'),
      sql<string>`count(*) filter (where status = 'unsubscribed')`.as('unsubscribed'),
      sql<string>`count(*) filter (where status = 'bounced')`.as('bounced'),
      sql<string>`count(*) filter (where ${within('subscribed_at')})`.as('new_in_range'),
      sql<string>`count(*) filter (where status = 'unsubscribed' and ${within('unsubscribed_at')})`.as('unsubscribed_in_range'),
    ])
    .where('tenant_id', '=', owner.tenantId)
    .where('mode', '=', owner.mode)
    .executeTakeFirstOrThrow();
  return {
    active: Number(row.active),
    unsubscribed: Number(row.unsubscribed),
    bounced: Number(row.bounced),
    new_in_range: Number(row.new_in_range),
    unsubscribed_in_range: Number(row.unsubscribed_in_range),
  };
}
