import type { Db } from '../../db/database.js';
import { addMilliseconds, DAY_MS } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { firstFreeSlug, slugify } from '../../lib/slug.js';
import { cleanText } from '../../lib/text.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import type { PageRequest } from '../../db/paging.js';
import { readingTimeMinutes, renderMarkdown } from './markdown.js';
import { presentPost, presentSubscriber } from './present.js';
import * as repository from './repository.js';
import type { BlogDb, PostChanges, PostRow, SubscriberChanges, SubscriberRow } from './repository.js';
import type {
  AnalyticsInput,
  AnalyticsView,
  CategoryView,
  ChangePostStatusInput,
  CreatePostInput,
  CreateSubscriberInput,
  PostView,
  SubscriberView,
  UpdatePostInput,
  UpdateSubscriberInput,
} from './schemas.js';
import { publishJobKey, PUBLISH_SCHEDULED_JOB } from './scheduler.js';
import type { PostStatus, SubscriberStatus } from './tables.js';

/**
 * The moves of a post between statuses (besides staying put, a no-op). Scheduling needs
 * a future `scheduled_for`; scheduled -> scheduled moves the time.
 */
export const STATUS_MOVES: Readonly<Record<PostStatus, readonly PostStatus[]>> = {
  draft: ['published', 'scheduled', 'archived'],
  scheduled: ['published', 'scheduled', 'draft', 'archived'],
  published: ['draft', 'archived'],
  archived: ['published', 'draft'],
};

/** Attempts at a derived slug when concurrent creates race for the same one. */
const SLUG_ATTEMPTS = 5;
const EARLIEST_SUBSCRIBED_AT = Date.UTC(1970, 0, 1);
const PUBLISH_MAX_ATTEMPTS = 30;

/** Posts, the public reading side, subscribers, analytics and categories of a blog. */
export function createBlogsService({ db, jobs, events }: { db: Db; jobs: JobRunner; events: EventLog }) {
  const blogs = repository.blogDb(db);

  /** Runs `work` in one transaction; `tx` is for the blog tables, `jobsDb` for the job runner. */
  function inTransaction<T>(work: (tx: BlogDb, jobsDb: Db) => Promise<T>): Promise<T> {
    return db.transaction().execute((tx) => work(repository.blogDb(tx), tx));
  }

  async function requirePost(tx: BlogDb, ctx: RequestContext, id: string, options: { forUpdate?: boolean } = {}): Promise<PostRow> {
    const row = await repository.findPost(tx, ctx, id, options);
    if (!row) throw notFound('Post');
    return row;
  }

  async function requireSubscriber(tx: BlogDb, ctx: RequestContext, id: string, options: { forUpdate?: boolean } = {}): Promise<SubscriberRow> {
    const row = await repository.findSubscriber(tx, ctx, id, options);
    if (!row) throw notFound('Subscriber');
    return row;
  }

  /** The 409 for an email already on the list, naming the subscriber that has it. */
  async function subscriberAlreadyExists(ctx: RequestContext, email: string): Promise<AppError> {
    const existingId = await repository.findSubscriberIdByEmail(blogs, ctx, email);
    return new AppError('subscriber_already_exists', `A subscriber with the email ${email} already exists.`, [
      { path: 'email', code: 'already_exists', message: 'This email is already subscribed.', ...(existingId ? { subscriber_id: existingId } : {}) },
    ]);
  }

  return {
    // Posts (authoring side)

    async createPost(ctx: RequestContext, input: CreatePostInput): Promise<PostView> {
      const title = input.title.trim();
      const content = input.content ?? '';
      const contentHtml = renderMarkdown(content);
      const categories = cleanLabels(input.categories ?? []);
      const tags = cleanLabels(input.tags ?? []);
      const fields = {
        title,
        excerpt: cleanText(input.excerpt) ?? null,
        content,
        content_html: contentHtml,
        // Always a draft, whatever the body says: going public needs service.blogs.publish.
        status: 'draft' as const,
        published_at: null,
        scheduled_for: null,
        categories,
        category_keys: categories.map(labelKey),
        tags,
        tag_keys: tags.map(labelKey),
        author_name: cleanText(input.author_name) ?? null,
        cover_image_url: input.cover_image_url ?? null,
        seo_title: cleanText(input.seo_title) ?? null,
        seo_description: cleanText(input.seo_description) ?? null,
        reading_time_minutes: readingTimeMinutes(contentHtml),
        view_count: 0,
        created_at: ctx.now,
        updated_at: ctx.now,
      };

      if (input.slug !== undefined) {
        if (await repository.isSlugTaken(blogs, ctx, input.slug)) throw slugTaken(input.slug);
        try {
          return presentPost(await repository.insertPost(blogs, ctx, { id: newId(), slug: input.slug, ...fields }));
        } catch (error) {
          if (repository.isUniqueViolation(error, repository.SLUG_INDEX)) throw slugTaken(input.slug);
          throw error;
        }
      }

      // A derived slug: the first free numbered variant; a create racing for it takes the next.
      for (let attempt = 1; ; attempt += 1) {
        const slug = await firstFreeSlug(slugify(title), (candidate) => repository.isSlugTaken(blogs, ctx, candidate));
        try {
          return presentPost(await repository.insertPost(blogs, ctx, { id: newId(), slug, ...fields }));
        } catch (error) {
          if (attempt < SLUG_ATTEMPTS && repository.isUniqueViolation(error, repository.SLUG_INDEX)) continue;
          throw error;
        }
      }
    },

    async getPost(ctx: RequestContext, id: string): Promise<PostView> {
      return presentPost(await requirePost(blogs, ctx, id));
    },

    async listPosts(ctx: RequestContext, filters: { status?: PostStatus; category?: string; tag?: string; search?: string }, page: PageRequest) {
      const { rows, total } = await repository.listPosts(blogs, ctx, toPostFilters(filters), page);
      return { rows: rows.map(presentPost), total };
    },

    async updatePost(ctx: RequestContext, id: string, input: UpdatePostInput): Promise<PostView> {
      try {
        return await inTransaction(async (tx) => {
          const current = await requirePost(tx, ctx, id, { forUpdate: true });
          assertFresh(input.expected_updated_at, current.updated_at);
          if (input.slug !== undefined && input.slug !== current.slug && (await repository.isSlugTaken(tx, ctx, input.slug, id))) {
            throw slugTaken(input.slug);
          }
          const changes: PostChanges = { updated_at: nextUpdatedAt(current.updated_at, ctx.now) };
          if (input.title !== undefined) changes.title = input.title.trim();
          if (input.slug !== undefined) changes.slug = input.slug;
          if (input.excerpt !== undefined) changes.excerpt = cleanText(input.excerpt);
          if (input.content !== undefined) {
            changes.content = input.content;
            changes.content_html = renderMarkdown(input.content);
            changes.reading_time_minutes = readingTimeMinutes(changes.content_html);
          }
          if (input.categories !== undefined) {
            changes.categories = cleanLabels(input.categories);
            changes.category_keys = changes.categories.map(labelKey);
          }
          if (input.tags !== undefined) {
            changes.tags = cleanLabels(input.tags);
            changes.tag_keys = changes.tags.map(labelKey);
          }
          if (input.author_name !== undefined) changes.author_name = cleanText(input.author_name);
          if (input.cover_image_url !== undefined) changes.cover_image_url = input.cover_image_url;
          if (input.seo_title !== undefined) changes.seo_title = cleanText(input.seo_title);
          if (input.seo_description !== undefined) changes.seo_description = cleanText(input.seo_description);
          return presentPost(await repository.updatePost(tx, ctx, id, changes));
        });
      } catch (error) {
        if (input.slug !== undefined && repository.isUniqueViolation(error, repository.SLUG_INDEX)) throw slugTaken(input.slug);
        throw error;
      }
    },

    /**
     * Moves a post through its states (see STATUS_MOVES). Scheduling queues a durable job
     * in the same transaction; leaving `scheduled` cancels it.
     */
    async changePostStatus(ctx: RequestContext, id: string, input: ChangePostStatusInput): Promise<PostView> {
      const scheduledFor = checkScheduledFor(ctx, input);
      return inTransaction(async (tx, jobsDb) => {
        const current = await requirePost(tx, ctx, id, { forUpdate: true });
        assertFresh(input.expected_updated_at, current.updated_at);
        const to = input.status;
        // Asking for the status the post already has is answered with the post, unchanged.
        if (to === current.status && to !== 'scheduled') return presentPost(current);
        const allowed = STATUS_MOVES[current.status];
        if (!allowed.includes(to)) {
          throw new AppError('invalid_status_transition', `A ${current.status} post cannot be moved to ${to}.`, [
            {
              path: 'status',
              code: 'invalid_transition',
              message: `From ${current.status} a post can move to: ${allowed.join(', ')}.`,
              from: current.status,
              to,
              allowed: [...allowed],
            },
          ]);
        }
        const row = await repository.updatePost(tx, ctx, id, {
          status: to,
          scheduled_for: to === 'scheduled' ? scheduledFor! : null,
          // First publication only: republishing or publishing again keeps the original date (as Ghost does).
          published_at: to === 'published' ? (current.published_at ?? ctx.now) : current.published_at,
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        const dedupeKey = publishJobKey(id);
        if (to === 'scheduled') {
          await jobs.schedule(
            {
              kind: PUBLISH_SCHEDULED_JOB,
              dedupeKey,
              runAt: scheduledFor!,
              tenantId: ctx.tenantId,
              mode: ctx.mode,
              payload: { post_id: id },
              // Back-off doubles up to an hour: a post keeps trying to go live for about a day.
              maxAttempts: PUBLISH_MAX_ATTEMPTS,
            },
            jobsDb,
          );
        } else if (current.status === 'scheduled') {
          await jobs.cancel(dedupeKey, jobsDb);
        }
        const post = presentPost(row);
        if (to === 'published') await events.record(tx, ctx, 'blogs.post.published', post);
        return post;
      });
    },

    async deletePost(ctx: RequestContext, id: string): Promise<{ id: string; deleted: true }> {
      return inTransaction(async (tx, jobsDb) => {
        const deleted = await repository.deletePost(tx, ctx, id);
        if (!deleted) throw notFound('Post');
        if (deleted.status === 'scheduled') await jobs.cancel(publishJobKey(id), jobsDb);
        return { id, deleted: true as const };
      });
    },

    // Posts (public reading side)

    async listPublishedPosts(ctx: RequestContext, filters: { category?: string; tag?: string }, page: PageRequest) {
      const { categoryKey, tagKey } = toPostFilters(filters);
      const { rows, total } = await repository.listPublishedPosts(
        blogs,
        ctx,
        { ...(categoryKey !== undefined ? { categoryKey } : {}), ...(tagKey !== undefined ? { tagKey } : {}) },
        page,
      );
      return { rows: rows.map(presentPost), total };
    },

    /** A published post by slug; each read counts one view. Any other status is not found. */
    async readPublishedPost(ctx: RequestContext, slug: string): Promise<PostView> {
      const row = await repository.readPublishedPost(blogs, ctx, slug, utcDay(ctx.now));
      if (!row) throw notFound('Post');
      return presentPost(row);
    },

    // Subscribers

    async createSubscriber(ctx: RequestContext, input: CreateSubscriberInput): Promise<SubscriberView> {
      const email = input.email.toLowerCase();
      const subscribedAt = input.subscribed_at === undefined ? ctx.now : new Date(input.subscribed_at);
      if (subscribedAt.getTime() > ctx.now.getTime() || subscribedAt.getTime() < EARLIEST_SUBSCRIBED_AT) {
        throw invalidField('subscribed_at', 'out_of_range', 'subscribed_at must be between 1970-01-01 and now.');
      }
      const status = input.status ?? 'active';
      try {
        const row = await repository.insertSubscriber(blogs, ctx, {
          id: newId(),
          email,
          name: cleanText(input.name) ?? null,
          status,
          source: input.source?.trim() ?? 'api',
          subscribed_at: subscribedAt,
          unsubscribed_at: status === 'unsubscribed' ? ctx.now : null,
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        return presentSubscriber(row);
      } catch (error) {
        // The unique index decides, so two concurrent creates of one address cannot both succeed.
        if (repository.isUniqueViolation(error, repository.SUBSCRIBER_EMAIL_INDEX)) throw await subscriberAlreadyExists(ctx, email);
        throw error;
      }
    },

    async getSubscriber(ctx: RequestContext, id: string): Promise<SubscriberView> {
      return presentSubscriber(await requireSubscriber(blogs, ctx, id));
    },

    async listSubscribers(ctx: RequestContext, filters: { status?: SubscriberStatus; search?: string }, page: PageRequest) {
      const { rows, total } = await repository.listSubscribers(blogs, ctx, filters, page);
      return { rows: rows.map(presentSubscriber), total };
    },

    async updateSubscriber(ctx: RequestContext, id: string, input: UpdateSubscriberInput): Promise<SubscriberView> {
      const email = input.email?.toLowerCase();
      try {
        return await inTransaction(async (tx) => {
          const current = await requireSubscriber(tx, ctx, id, { forUpdate: true });
          assertFresh(input.expected_updated_at, current.updated_at);
          const changes: SubscriberChanges = { updated_at: nextUpdatedAt(current.updated_at, ctx.now) };
          if (email !== undefined) changes.email = email;
          if (input.name !== undefined) changes.name = cleanText(input.name);
          if (input.status !== undefined && input.status !== current.status) {
            changes.status = input.status;
            changes.unsubscribed_at = input.status === 'unsubscribed' ? ctx.now : null;
            // Coming back after unsubscribing is a new consent: its date is the one that counts.
            if (input.status === 'active' && current.status === 'unsubscribed') changes.subscribed_at = ctx.now;
          }
          return presentSubscriber(await repository.updateSubscriber(tx, ctx, id, changes));
        });
      } catch (error) {
        if (email !== undefined && repository.isUniqueViolation(error, repository.SUBSCRIBER_EMAIL_INDEX)) throw await subscriberAlreadyExists(ctx, email);
        throw error;
      }
    },

    async deleteSubscriber(ctx: RequestContext, id: string): Promise<{ id: string; deleted: true }> {
      if (!(await repository.deleteSubscriber(blogs, ctx, id))) throw notFound('Subscriber');
      return { id, deleted: true as const };
    },

    // Analytics and categories

    async analytics(ctx: RequestContext, input: AnalyticsInput): Promise<AnalyticsView> {
      const from = input.from;
      const to = input.to;
      if (from !== undefined && to !== undefined && from > to) {
        throw invalidField('to', 'out_of_range', `query to (${to}) must not be before from (${from}).`);
      }
      const days = { from, to };
      const range = {
        start: from === undefined ? undefined : new Date(`${from}T00:00:00.000Z`),
        end: to === undefined ? undefined : addMilliseconds(new Date(`${to}T00:00:00.000Z`), DAY_MS),
      };
      const [posts, subscribers, totalViews, top] = await Promise.all([
        repository.countPostsByStatus(blogs, ctx, range),
        repository.countSubscribersByStatus(blogs, ctx, range),
        repository.sumViews(blogs, ctx, days),
        repository.topPosts(blogs, ctx, days, input.top ?? 10),
      ]);
      const byStatus = (status: PostStatus) => posts.byStatus.get(status) ?? 0;
      return {
        range: { from: from ?? null, to: to ?? null },
        posts: {
          total: [...posts.byStatus.values()].reduce((sum, count) => sum + count, 0),
          draft: byStatus('draft'),
          scheduled: byStatus('scheduled'),
          published: byStatus('published'),
          archived: byStatus('archived'),
          published_in_range: posts.publishedInRange,
        },
        subscribers: { total: subscribers.active + subscribers.unsubscribed + subscribers.bounced, ...subscribers },
        views: { total: totalViews, top_posts: top },
      };
    },

    async listCategories(ctx: RequestContext, page: PageRequest): Promise<{ rows: CategoryView[]; total: number }> {
      return repository.listCategories(blogs, ctx, page);
    },
  };
}

export type BlogsService = ReturnType<typeof createBlogsService>;

function slugTaken(slug: string): AppError {
  return new AppError('slug_taken', `Another post already uses the slug "${slug}".`, [
    { path: 'slug', code: 'taken', message: 'Choose another slug, or leave it out to derive a free one from the title.' },
  ]);
}

/** `scheduled_for` belongs with status scheduled only, and must then be in the future. */
function checkScheduledFor(ctx: RequestContext, input: ChangePostStatusInput): Date | undefined {
  if (input.status !== 'scheduled') {
    if (input.scheduled_for !== undefined) throw invalidField('scheduled_for', 'invalid', 'scheduled_for is only accepted with status scheduled.');
    return undefined;
  }
  if (input.scheduled_for === undefined) throw invalidField('scheduled_for', 'required', 'scheduled_for is required to schedule a post.');
  const when = new Date(input.scheduled_for);
  if (when.getTime() <= ctx.now.getTime()) throw invalidField('scheduled_for', 'out_of_range', `scheduled_for must be in the future (now is ${ctx.now.toISOString()}).`);
  return when;
}

/** Trimmed labels, duplicates differing only in case dropped (the first spelling wins). */
function cleanLabels(labels: readonly string[]): string[] {
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const label of labels) {
    const trimmed = label.trim();
    const key = labelKey(trimmed);
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push(trimmed);
  }
  return kept;
}

function labelKey(label: string): string {
  return label.trim().toLowerCase();
}

function toPostFilters(filters: { status?: PostStatus; category?: string; tag?: string; search?: string }): repository.PostFilters {
  return {
    ...(filters.status !== undefined ? { status: filters.status } : {}),
    ...(filters.category !== undefined ? { categoryKey: labelKey(filters.category) } : {}),
    ...(filters.tag !== undefined ? { tagKey: labelKey(filters.tag) } : {}),
    ...(filters.search !== undefined ? { search: filters.search } : {}),
  };
}

function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}
