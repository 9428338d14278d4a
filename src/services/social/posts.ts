import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { newId } from '../../lib/ids.js';
import { nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, notFound, validationFailed, type ErrorDetail } from '../../platform/errors/app-error.js';
import { presentPost } from './present.js';
import * as repository from './repository.js';
import type { PostRow, SocialDb } from './repository.js';
import type { CreatePostInput, SocialPostReply, UpdatePostInput } from './schemas.js';
import { inTransaction, type SocialDeps } from './shared.js';
import type { PostMedia, PostStatus } from './tables.js';

export const PUBLISH_JOB = 'social.post.publish';
export const publishJobKey = (postId: string) => `social.post:${postId}`;
const EDITABLE: PostStatus[] = ['draft', 'scheduled'];

/** Queues (or moves) the post's publish job in the caller's transaction; drafts have none. */
export async function schedulePublish(deps: Pick<SocialDeps, 'jobs'>, jobsDb: Db, owner: Owner, post: PostRow, now: Date): Promise<void> {
  if (post.status !== 'scheduled' && post.status !== 'publishing') {
    await deps.jobs.cancel(publishJobKey(post.id), jobsDb);
    return;
  }
  const runAt = post.scheduled_at && post.scheduled_at.getTime() > now.getTime() ? post.scheduled_at : now;
  await deps.jobs.schedule({ kind: PUBLISH_JOB, runAt, tenantId: owner.tenantId, mode: owner.mode, payload: { post_id: post.id }, dedupeKey: publishJobKey(post.id) }, jobsDb);
}

export function createPostRules(deps: SocialDeps) {
  const { db, events } = deps;
  const tables = repository.socialDb(db);

  async function requirePost(tx: SocialDb, owner: Owner, id: string, forUpdate = false): Promise<PostRow> {
    const row = await repository.findPost(tx, owner, id, { forUpdate });
    if (!row) throw notFound('Post');
    return row;
  }

  /** Accounts of this tenant and mode; media only ready, unexpired files of this tenant and mode (rule 6): else 400 naming each. */
  async function checkReferences(tx: SocialDb, ctx: RequestContext, accountIds: string[] | undefined, media: PostMedia[] | undefined): Promise<void> {
    const details: ErrorDetail[] = [];
    if (accountIds) {
      const found = new Set((await repository.findAccounts(tx, ctx, accountIds)).map((row) => row.id));
      accountIds.forEach((id, index) => {
        if (!found.has(id)) details.push({ path: `account_ids[${index}]`, code: 'not_found', message: `Social account ${id} does not exist.`, account_id: id });
      });
    }
    if (media) {
      const files = new Map((await repository.findFiles(tx, ctx, [...new Set(media.map((item) => item.file_id))])).map((row) => [row.id, row]));
      media.forEach((item, index) => {
        const file = files.get(item.file_id);
        const path = `media[${index}].file_id`;
        if (!file) details.push({ path, code: 'not_found', message: `File ${item.file_id} does not exist.`, file_id: item.file_id });
        else if (file.status !== 'ready' || file.expires_at.getTime() <= ctx.now.getTime()) {
          const state = file.status === 'ready' ? 'expired' : file.status === 'rejected' ? `rejected (${file.reject_code})` : file.status;
          details.push({ path, code: 'file_not_ready', message: `File ${item.file_id} is ${state}; only ready files can be attached.`, file_id: item.file_id });
        }
      });
    }
    if (details.length > 0) throw validationFailed(details, details.length === 1 ? details[0]!.message : undefined);
  }

  const normalizeMedia = (media: CreatePostInput['media']): PostMedia[] | undefined =>
    media?.map((item) => ({ file_id: item.file_id.toLowerCase(), alt_text: item.alt_text?.trim() || null }));
  const uniqueIds = (ids: string[] | undefined) => (ids ? [...new Set(ids)] : undefined);

  function statusFor(requested: 'draft' | 'scheduled' | undefined, scheduledAt: Date | null, now: Date): PostStatus {
    if (requested === 'draft') return 'draft';
    return scheduledAt && scheduledAt.getTime() > now.getTime() ? 'scheduled' : 'publishing';
  }

  return {
    async createPost(ctx: RequestContext, input: CreatePostInput): Promise<SocialPostReply> {
      const accountIds = uniqueIds(input.account_ids)!;
      const media = normalizeMedia(input.media) ?? [];
      const scheduledAt = input.scheduled_at ? new Date(input.scheduled_at) : null;
      return inTransaction(db, async (tx, jobsDb) => {
        await checkReferences(tx, ctx, accountIds, media);
        const row = await repository.insertPost(tx, ctx, {
          id: newId(),
          account_ids: accountIds,
          body: input.text,
          media,
          scheduled_at: scheduledAt,
          status: statusFor(input.status, scheduledAt, ctx.now),
          results: [],
          published_at: null,
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        await schedulePublish(deps, jobsDb, ctx, row, ctx.now);
        const view = presentPost(row);
        await events.record(tx, ctx, 'social.post.created', view);
        return view;
      });
    },

    async getPost(ctx: RequestContext, id: string): Promise<SocialPostReply> {
      return presentPost(await requirePost(tables, ctx, id));
    },

    async listPosts(ctx: RequestContext, filters: { status?: PostStatus; account_id?: string }, page: PageRequest) {
      const { rows, total } = await repository.listPosts(tables, ctx, filters, page);
      return { rows: rows.map(presentPost), total };
    },

    /** Changes a draft or scheduled post; publishing or finished posts are 409 post_not_editable. */
    async updatePost(ctx: RequestContext, id: string, input: UpdatePostInput): Promise<SocialPostReply> {
      const accountIds = uniqueIds(input.account_ids);
      const media = normalizeMedia(input.media);
      return inTransaction(db, async (tx, jobsDb) => {
        const current = await requirePost(tx, ctx, id, true);
        if (!EDITABLE.includes(current.status)) throw notEditable(current.status);
        await checkReferences(tx, ctx, accountIds, media);
        const scheduledAt = input.scheduled_at === undefined ? current.scheduled_at : input.scheduled_at === null ? null : new Date(input.scheduled_at);
        const requested = input.status ?? (current.status === 'draft' ? 'draft' : 'scheduled');
        const updated = await repository.updatePost(tx, ctx, id, {
          ...(accountIds ? { account_ids: accountIds } : {}),
          ...(input.text !== undefined ? { body: input.text } : {}),
          ...(media ? { media } : {}),
          scheduled_at: scheduledAt,
          status: statusFor(requested, scheduledAt, ctx.now),
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
        });
        await schedulePublish(deps, jobsDb, ctx, updated, ctx.now);
        const view = presentPost(updated);
        await events.record(tx, ctx, 'social.post.updated', view);
        return view;
      });
    },

    /** Deletes a post that is not being published (published ones stay on the platforms); the reply is the post as it was. */
    async deletePost(ctx: RequestContext, id: string): Promise<SocialPostReply> {
      return inTransaction(db, async (tx, jobsDb) => {
        const current = await requirePost(tx, ctx, id, true);
        if (current.status === 'publishing') throw notEditable(current.status);
        await repository.deletePost(tx, ctx, id);
        await deps.jobs.cancel(publishJobKey(id), jobsDb);
        const view = presentPost(current);
        await events.record(tx, ctx, 'social.post.deleted', view);
        return view;
      });
    },
  };
}

function notEditable(status: PostStatus): AppError {
  return new AppError('post_not_editable', `The post is ${status}; only draft and scheduled posts can change${status === 'publishing' ? ' or be deleted' : ''}.`, [
    { path: 'status', code: 'invalid_value', message: `The post is ${status}.`, status },
  ]);
}
