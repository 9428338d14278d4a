import type { Owner } from '../../db/owned.js';
import { isUuid } from '../../lib/ids.js';
import type { JobHandler } from '../../platform/jobs/runner.js';
import { HEALTH_JOB, VALIDATE_EVERY_MS, type AccountRules } from './accounts.js';
import { SWEEP_EVERY_MS, SWEEP_JOB } from './files.js';
import { PUBLISH_JOB, schedulePublish } from './posts.js';
import { presentFile, presentPost } from './present.js';
import * as repository from './repository.js';
import { blobKey, inTransaction, openTokens, type SocialDeps } from './shared.js';
import type { PostResult, PostStatus } from './tables.js';

const BATCH = 500;
const HEALTH_EVERY_MS = 60 * 60_000;

/**
 * Publishes a due post through each account's connector. The post row is locked for the whole
 * run and its status re-checked, so with any number of processes (and a job run twice) it is
 * published once; each account's result is kept, and a retry skips accounts already published.
 * Connectors get `<post id>:<account id>` as an idempotency key for a crash between their
 * reply and the commit.
 */
export function createPublishHandler(deps: SocialDeps): JobHandler {
  const { db, events, connectors, secretsKey } = deps;
  return async (job, now) => {
    const postId = job.payload.post_id;
    if (typeof postId !== 'string' || !isUuid(postId) || job.tenantId === null || job.mode === null) return;
    const owner: Owner = { tenantId: job.tenantId, mode: job.mode };
    await inTransaction(db, async (tx) => {
      const post = await repository.findPost(tx, owner, postId, { forUpdate: true });
      if (!post || (post.status !== 'scheduled' && post.status !== 'publishing')) return;
      if (post.scheduled_at && post.scheduled_at.getTime() > now.getTime()) return; // moved later: its own job comes then
      const accounts = new Map((await repository.findAccounts(tx, owner, post.account_ids)).map((row) => [row.id, row]));
      const files = new Map(
        (
          await repository.findFiles(
            tx,
            owner,
            post.media.map((item) => item.file_id),
          )
        ).map((row) => [row.id, row]),
      );
      const earlier = new Map(post.results.map((result) => [result.account_id, result]));
      const results: PostResult[] = [];
      for (const accountId of post.account_ids) {
        const previous = earlier.get(accountId);
        if (previous?.status === 'published') {
          results.push(previous);
          continue;
        }
        const account = accounts.get(accountId);
        const failed = (error: string): PostResult => ({
          account_id: accountId,
          platform: account?.platform ?? null,
          status: 'failed',
          platform_post_id: null,
          url: null,
          error,
          published_at: null,
        });
        const connector = account && connectors.get(account.platform);
        const tokens = account && openTokens(secretsKey, owner, account);
        if (!account) results.push(failed('The account was disconnected.'));
        else if (!connector || !tokens) results.push(failed(`No connector is configured for ${account.platform}.`));
        else {
          const media = post.media.map((item) => ({
            fileId: item.file_id,
            kind: files.get(item.file_id)?.kind ?? null,
            mime: files.get(item.file_id)?.mime ?? null,
            altText: item.alt_text,
          }));
          let outcome;
          try {
            outcome = await connector.publish(tokens, { idempotencyKey: `${post.id}:${accountId}`, text: post.body, media }, now);
          } catch (error) {
            outcome = { ok: false as const, error: `The platform could not be reached: ${(error as Error).message}` };
          }
          results.push(
            outcome.ok
              ? {
                  account_id: accountId,
                  platform: account.platform,
                  status: 'published',
                  platform_post_id: outcome.platformPostId,
                  url: outcome.url,
                  error: null,
                  published_at: now.toISOString(),
                }
              : failed(outcome.error.slice(0, 1000)),
          );
        }
      }
      const published = results.filter((result) => result.status === 'published').length;
      const status: PostStatus = published === results.length ? 'published' : published === 0 ? 'failed' : 'partially_failed';
      const updated = await repository.updatePost(tx, owner, post.id, { status, results, published_at: now, updated_at: now });
      await events.record(tx, owner, status === 'published' ? 'social.post.published' : 'social.post.failed', presentPost(updated));
    });
  };
}

/**
 * Every 15 minutes: unused links past their 15 minutes become rejected (link_expired); files past
 * their 24 hours that no scheduled or publishing post uses become expired and their bytes are
 * deleted; due posts whose job went missing get one again.
 */
export function createSweepHandler(deps: SocialDeps, expireLink: (owner: Owner, id: string, now: Date) => Promise<void>): JobHandler {
  const { db, events, store } = deps;
  const tables = repository.socialDb(db);
  return async (_job, now) => {
    for (const link of await repository.lapsedLinks(tables, now, BATCH)) await expireLink({ tenantId: link.tenant_id, mode: link.mode }, link.id, now);
    for (const file of await repository.filesToExpire(tables, now, BATCH)) {
      const owner: Owner = { tenantId: file.tenant_id, mode: file.mode };
      const expired = await inTransaction(db, async (tx) => {
        const row = await repository.updateFile(tx, owner, file.id, { status: 'expired', updated_at: now }, ['pending', 'uploading', 'ready', 'rejected']);
        if (row) await events.record(tx, owner, 'social.file.expired', presentFile(row));
        return row;
      });
      if (expired) await store.delete(blobKey(owner, file.id));
    }
    for (const post of await repository.overduePosts(tables, new Date(now.getTime() - SWEEP_EVERY_MS), BATCH)) {
      const owner: Owner = { tenantId: post.tenant_id, mode: post.mode };
      const row = await repository.findPost(tables, owner, post.id);
      if (row) await schedulePublish(deps, db, owner, row, now);
    }
    return { rescheduleAt: new Date(now.getTime() + SWEEP_EVERY_MS) };
  };
}

/** Every hour: accounts not checked for 6 hours get the health check (refresh, validate). */
export function createHealthHandler(deps: SocialDeps, accounts: AccountRules): JobHandler {
  const tables = repository.socialDb(deps.db);
  return async (_job, now) => {
    for (const account of await repository.accountsToValidate(tables, new Date(now.getTime() - VALIDATE_EVERY_MS), BATCH)) {
      try {
        await accounts.validate({ tenantId: account.tenant_id, mode: account.mode }, account.id, now);
      } catch (error) {
        deps.jobs.reportError(error, `social account ${account.id} health check`);
      }
    }
    return { rescheduleAt: new Date(now.getTime() + HEALTH_EVERY_MS) };
  };
}

export function registerSocialJobs(deps: SocialDeps, accounts: AccountRules, expireLink: (owner: Owner, id: string, now: Date) => Promise<void>): void {
  deps.jobs.register(PUBLISH_JOB, createPublishHandler(deps));
  deps.jobs.register(SWEEP_JOB, createSweepHandler(deps, expireLink));
  deps.jobs.register(HEALTH_JOB, createHealthHandler(deps, accounts));
}
