import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import { isUuid } from '../../lib/ids.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobHandler, JobRunner } from '../../platform/jobs/runner.js';
import { presentPost } from './present.js';
import * as repository from './repository.js';
import type { PostView } from './schemas.js';

/** The durable job that publishes a scheduled post when its time comes. */
export const PUBLISH_SCHEDULED_JOB = 'blogs.publish-scheduled';

/** One queued publish job per post: rescheduling moves it, unscheduling cancels it. */
export function publishJobKey(postId: string): string {
  return `blogs.publish:${postId}`;
}

export interface PublishOptions {
  /** Called once per post actually published by the job (never for a run that found nothing to do). */
  onPublished?: (post: PostView, owner: Owner) => Promise<void> | void;
}

/** What the publishing job needs: the database, and the event log its publications are recorded in. */
export interface PublishDeps {
  db: Db;
  events: EventLog;
}

/**
 * Publishes the job's post if it is still scheduled and due. The conditional update is the
 * guard: run twice, or on two processes at once, it publishes once. A post rescheduled
 * later than this run is run again at its new time; one unscheduled or deleted is left alone.
 */
export function createPublishScheduledHandler({ db, events }: PublishDeps, options: PublishOptions = {}): JobHandler {
  const blogs = repository.blogDb(db);

  /** The conditional update and its event share one transaction: a run that publishes nothing records nothing. */
  function publishIfDue(owner: Owner, postId: string, now: Date): Promise<PostView | undefined> {
    return blogs.transaction().execute(async (tx) => {
      const row = await repository.publishIfDue(tx, owner, postId, now);
      if (!row) return undefined;
      const post = presentPost(row);
      await events.record(tx, owner, 'blogs.post.published', post);
      return post;
    });
  }

  return async (job, now) => {
    const postId = job.payload.post_id;
    if (typeof postId !== 'string' || !isUuid(postId) || job.tenantId === null || job.mode === null) return;
    const owner: Owner = { tenantId: job.tenantId, mode: job.mode };
    const published = await publishIfDue(owner, postId, now);
    if (published) {
      await options.onPublished?.(published, owner);
      return;
    }
    const post = await repository.findPost(blogs, owner, postId);
    if (post?.status === 'scheduled' && post.scheduled_for !== null && post.scheduled_for.getTime() > now.getTime()) {
      return { rescheduleAt: post.scheduled_for };
    }
  };
}

/** Registers the blog's job handlers on a runner (the app's, or another process's). */
export function registerBlogJobs(jobs: JobRunner, deps: PublishDeps, options: PublishOptions = {}): void {
  jobs.register(PUBLISH_SCHEDULED_JOB, createPublishScheduledHandler(deps, options));
}
