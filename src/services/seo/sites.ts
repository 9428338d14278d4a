import type { PageRequest } from '../../db/paging.js';
import { newId } from '../../lib/ids.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, notFound } from '../../platform/errors/app-error.js';
import * as repository from './repository.js';
import type { SeoDb } from './repository.js';
import { DEFAULT_CRAWL_BUDGET, type CreateSiteInput, type CrawlView, type PageView, type SiteView, type StartCrawlInput, type UpdateSiteInput } from './schemas.js';
import { CRAWL_JOB, parseDomain, presentCrawl, presentSite, type SeoDeps } from './shared.js';

function cleanName(name: string | undefined, fallback: string): string {
  return name === undefined ? fallback : name.trim();
}

/** Sites, their crawls and crawled pages. */
export function createSiteRules({ db, jobs, events }: SeoDeps) {
  const tables = repository.seoDb(db);

  async function requireSite(tx: SeoDb, ctx: RequestContext, siteId: string, options: { forUpdate?: boolean } = {}) {
    const site = await repository.findSite(tx, ctx, siteId, options);
    if (!site) throw notFound('Site');
    return site;
  }

  /** Queues a crawl of the site or one competitor (in the caller's transaction); a crawl already queued or running is answered instead. */
  async function queueCrawl(jobsTx: typeof db, ctx: RequestContext, siteId: string, competitorId: string | null, input: StartCrawlInput) {
    const tx = repository.seoDb(jobsTx);
    const id = newId();
    const inserted = await repository.insertCrawl(tx, ctx, {
      id,
      site_id: siteId,
      competitor_id: competitorId,
      status: 'queued',
      max_pages: input.max_pages ?? DEFAULT_CRAWL_BUDGET.max_pages,
      max_depth: input.max_depth ?? DEFAULT_CRAWL_BUDGET.max_depth,
      max_seconds: input.max_seconds ?? DEFAULT_CRAWL_BUDGET.max_seconds,
      pages_crawled: 0,
      pages_failed: 0,
      urls_blocked: 0,
      urls_queued: 0,
      stop_reason: null,
      error: null,
      started_at: null,
      finished_at: null,
      created_at: ctx.now,
      updated_at: ctx.now,
    });
    if (!inserted) {
      const active = await repository.findActiveCrawl(tx, ctx, siteId, competitorId);
      if (active) return presentCrawl(active);
      throw new AppError('conflict', 'A crawl of this target just ended; try again.');
    }
    await jobs.enqueue(
      { kind: CRAWL_JOB, runAt: ctx.now, tenantId: ctx.tenantId, mode: ctx.mode, payload: { crawl_id: id }, dedupeKey: `${CRAWL_JOB}:${id}`, maxAttempts: 3 },
      jobsTx,
    );
    const view = presentCrawl(inserted);
    await events.record(jobsTx, ctx, 'seo.crawl.queued', view);
    return view;
  }

  return {
    requireSite,
    queueCrawl,

    async createSite(ctx: RequestContext, input: CreateSiteInput): Promise<SiteView> {
      const { domain, startUrl } = parseDomain(input.domain);
      return tables.transaction().execute(async (tx) => {
        const row = await repository.insertSite(tx, ctx, {
          id: newId(),
          domain,
          name: cleanName(input.name, domain),
          start_url: startUrl,
          crawl_status: 'never',
          last_crawled_at: null,
          page_count: 0,
          topics_revision: null,
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        if (!row) throw new AppError('conflict', 'A site with this domain exists.', [{ path: 'domain', code: 'taken', message: `${domain} is already a site.` }]);
        const view = presentSite(row);
        await events.record(tx, ctx, 'seo.site.created', view);
        return view;
      });
    },

    async getSite(ctx: RequestContext, siteId: string): Promise<SiteView> {
      return presentSite(await requireSite(tables, ctx, siteId));
    },

    async listSites(ctx: RequestContext, page: PageRequest) {
      const { rows, total } = await repository.listSites(tables, ctx, page);
      return { rows: rows.map(presentSite), total };
    },

    async updateSite(ctx: RequestContext, siteId: string, input: UpdateSiteInput): Promise<SiteView> {
      const parsed = input.domain === undefined ? undefined : parseDomain(input.domain);
      return tables.transaction().execute(async (tx) => {
        const current = await requireSite(tx, ctx, siteId, { forUpdate: true });
        assertFresh(input.expected_updated_at, current.updated_at);
        const changes: Parameters<typeof repository.updateSite>[3] = { updated_at: nextUpdatedAt(current.updated_at, ctx.now) };
        if (input.name !== undefined) changes.name = input.name.trim();
        if (parsed && (parsed.domain !== current.domain || parsed.startUrl !== current.start_url)) {
          if (parsed.domain !== current.domain) {
            // Another host: what was crawled belongs to the old one.
            await repository.deletePages(tx, ctx, siteId);
            Object.assign(changes, { domain: parsed.domain, crawl_status: 'never', last_crawled_at: null, page_count: 0 });
          }
          changes.start_url = parsed.startUrl;
        }
        let row;
        try {
          row = await repository.updateSite(tx, ctx, siteId, changes);
        } catch (error) {
          if ((error as { code?: string }).code === '23505')
            throw new AppError('conflict', 'A site with this domain exists.', [{ path: 'domain', code: 'taken', message: 'Another site has this domain.' }]);
          throw error;
        }
        const view = presentSite(row);
        await events.record(tx, ctx, 'seo.site.updated', view);
        return view;
      });
    },

    async deleteSite(ctx: RequestContext, siteId: string): Promise<{ id: string; deleted: true }> {
      return tables.transaction().execute(async (tx) => {
        const current = await requireSite(tx, ctx, siteId, { forUpdate: true });
        await repository.deleteSite(tx, ctx, siteId);
        await events.record(tx, ctx, 'seo.site.deleted', presentSite(current));
        return { id: siteId, deleted: true as const };
      });
    },

    async crawlSite(ctx: RequestContext, siteId: string, input: StartCrawlInput): Promise<CrawlView> {
      return db.transaction().execute(async (jobsTx) => {
        const tx = repository.seoDb(jobsTx);
        const site = await requireSite(tx, ctx, siteId, { forUpdate: true });
        const crawl = await queueCrawl(jobsTx, ctx, site.id, null, input);
        if (site.crawl_status !== 'queued' && site.crawl_status !== 'running') {
          await repository.updateSite(tx, ctx, site.id, { crawl_status: 'queued' });
        }
        return crawl;
      });
    },

    async getCrawl(ctx: RequestContext, siteId: string, crawlId: string): Promise<CrawlView> {
      const row = await repository.findCrawl(tables, ctx, siteId, crawlId);
      if (!row) throw notFound('Crawl');
      return presentCrawl(row);
    },

    async listCrawls(ctx: RequestContext, siteId: string, page: PageRequest) {
      await requireSite(tables, ctx, siteId);
      const { rows, total } = await repository.listCrawls(tables, ctx, siteId, page);
      return { rows: rows.map(presentCrawl), total };
    },

    async listPages(ctx: RequestContext, siteId: string, competitorId: string | undefined, page: PageRequest): Promise<{ rows: PageView[]; total: number }> {
      await requireSite(tables, ctx, siteId);
      if (competitorId && !(await repository.findCompetitor(tables, ctx, siteId, competitorId))) throw notFound('Competitor');
      const { rows, total } = await repository.listPages(tables, ctx, siteId, competitorId, page);
      return { rows: rows, total };
    },
  };
}
