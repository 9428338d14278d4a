import { performance } from 'node:perf_hooks';
import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/clock.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobHandler } from '../../platform/jobs/runner.js';
import type { OutboundHttp } from '../../platform/outbound/http.js';
import { crawl, CrawlError, type CrawlOutcome } from './crawler.js';
import * as repository from './repository.js';
import { presentCompetitor, presentCrawl, presentSite, reevaluateSite } from './shared.js';

export interface CrawlJobDeps {
  db: Db;
  clock: Clock;
  events: EventLog;
  outbound: OutboundHttp;
}

/**
 * Runs one crawl: marks it running, reads the target within its budget (progress written as
 * it goes), then, in one transaction that re-checks the crawl is still running, replaces the
 * target's pages, records the outcome on the crawl and the target, evaluates the site's
 * questions again (a crawl of the site itself) and records the event. A crawl whose worker
 * died is picked up again when its job's claim lapses and starts over; a second finish is a
 * no-op because the first moved the crawl out of `running`.
 */
export function createCrawlHandler({ db, clock, events, outbound }: CrawlJobDeps): JobHandler {
  const tables = repository.seoDb(db);
  return async (job) => {
    const crawlId = job.payload.crawl_id;
    if (typeof crawlId !== 'string' || !isUuid(crawlId) || job.tenantId === null || job.mode === null) return;
    const owner: Owner = { tenantId: job.tenantId, mode: job.mode };
    const started = await tables.transaction().execute(async (tx) => {
      const row = await repository.findCrawlForUpdate(tx, owner, crawlId);
      if (!row || (row.status !== 'queued' && row.status !== 'running')) return undefined;
      const site = await repository.findSite(tx, owner, row.site_id, { forUpdate: true });
      if (!site) return undefined;
      const competitor = row.competitor_id ? await repository.findCompetitor(tx, owner, row.site_id, row.competitor_id) : undefined;
      if (row.competitor_id && !competitor) return undefined;
      const now = clock.now();
      const running = await repository.updateCrawl(tx, owner, row.id, {
        status: 'running',
        started_at: now,
        updated_at: now,
        pages_crawled: 0,
        pages_failed: 0,
        urls_blocked: 0,
        urls_queued: 0,
      });
      if (competitor) await repository.updateCompetitor(tx, owner, competitor.id, { crawl_status: 'running' });
      else await repository.updateSite(tx, owner, site.id, { crawl_status: 'running' });
      return { crawl: running!, startUrl: competitor ? competitor.start_url : site.start_url };
    });
    if (!started) return;
    const { crawl: row, startUrl } = started;
    const began = performance.now();
    let outcome: CrawlOutcome | undefined;
    let failure: string | undefined;
    try {
      outcome = await crawl({
        startUrl,
        budget: { maxPages: row.max_pages, maxDepth: row.max_depth, maxSeconds: row.max_seconds },
        http: outbound,
        elapsedMs: () => performance.now() - began,
        onProgress: async (progress) => {
          await repository.updateCrawl(
            tables,
            owner,
            row.id,
            {
              pages_crawled: progress.pagesCrawled,
              pages_failed: progress.pagesFailed,
              urls_blocked: progress.urlsBlocked,
              urls_queued: progress.urlsQueued,
              updated_at: clock.now(),
            },
            ['running'],
          );
        },
      });
    } catch (error) {
      // Anything unexpected is retried by the job runner; the last attempt marks the crawl failed so the target can be crawled again.
      if (!(error instanceof CrawlError) && job.attempts < job.maxAttempts) throw error;
      failure = error instanceof CrawlError ? error.message.slice(0, 500) : 'The crawl failed unexpectedly; try again.';
    }
    await db.transaction().execute(async (jobsTx) => {
      const tx = repository.seoDb(jobsTx);
      const current = await repository.findCrawlForUpdate(tx, owner, row.id);
      if (!current || current.status !== 'running') return;
      const site = await repository.findSite(tx, owner, current.site_id, { forUpdate: true });
      if (!site) return;
      const competitor = current.competitor_id ? await repository.findCompetitor(tx, owner, current.site_id, current.competitor_id) : undefined;
      const now = clock.now();
      if (!outcome) {
        const failed = await repository.updateCrawl(tx, owner, current.id, { status: 'failed', error: failure ?? 'The crawl failed.', finished_at: now, updated_at: now });
        if (competitor) await repository.updateCompetitor(tx, owner, competitor.id, { crawl_status: 'failed' });
        else if (!current.competitor_id) await repository.updateSite(tx, owner, site.id, { crawl_status: 'failed' });
        await events.record(jobsTx, owner, 'seo.crawl.failed', presentCrawl(failed!));
        return;
      }
      const readable = outcome.pages.filter((page) => page.statusCode >= 200 && page.statusCode < 300).length;
      await repository.replacePages(
        tx,
        owner,
        site.id,
        current.competitor_id,
        outcome.pages.map((page) => ({
          id: newId(),
          crawl_id: current.id,
          url: page.url,
          depth: page.depth,
          status_code: page.statusCode,
          title: page.title,
          meta_description: page.metaDescription,
          headings: page.headings,
          word_count: page.wordCount,
          questions: page.questions,
          body_text: page.text,
          crawled_at: now,
        })),
      );
      const { progress } = outcome;
      const completed = await repository.updateCrawl(tx, owner, current.id, {
        status: 'completed',
        stop_reason: outcome.stopReason,
        pages_crawled: progress.pagesCrawled,
        pages_failed: progress.pagesFailed,
        urls_blocked: progress.urlsBlocked,
        urls_queued: progress.urlsQueued,
        finished_at: now,
        updated_at: now,
      });
      if (current.competitor_id) {
        if (competitor) {
          const updated = await repository.updateCompetitor(tx, owner, competitor.id, { crawl_status: 'completed', last_crawled_at: now, page_count: readable, updated_at: now });
          await events.record(jobsTx, owner, 'seo.competitor.updated', presentCompetitor(updated));
        }
      } else {
        const updated = await repository.updateSite(tx, owner, site.id, { crawl_status: 'completed', last_crawled_at: now, page_count: readable, updated_at: now });
        await reevaluateSite(tx, owner, updated, now);
        await events.record(jobsTx, owner, 'seo.site.updated', presentSite(updated));
      }
      await events.record(jobsTx, owner, 'seo.crawl.completed', presentCrawl(completed!));
    });
  };
}
