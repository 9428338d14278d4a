import { newId } from '../../lib/ids.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, notFound } from '../../platform/errors/app-error.js';
import { coversTopic, indexPage } from './evaluate.js';
import * as repository from './repository.js';
import type { SeoDb, SiteRow } from './repository.js';
import type { CompetitorsViewData, CompetitorView, CreateCompetitorInput, CrawlView, StartCrawlInput } from './schemas.js';
import { MAX_COMPETITORS_PER_SITE, parseDomain, presentCompetitor, type SeoDeps } from './shared.js';
import { contentTokens } from './text.js';

const NOTE =
  "Gaps are topics clustered from this site's imported search queries that a crawled competitor page covers (two thirds of the topic label's key terms in its title, headings, description or questions) and no crawled page of the site does, largest first by the topic's impressions. They reflect the pages of the latest crawls only, not rankings or traffic of competitors.";

/** Competitors of a site, their crawls and the topic gaps between them and the site. */
export function createCompetitorRules(
  { db, events }: SeoDeps,
  requireSite: (tx: SeoDb, ctx: RequestContext, siteId: string, options?: { forUpdate?: boolean }) => Promise<SiteRow>,
  queueCrawl: (jobsTx: typeof db, ctx: RequestContext, siteId: string, competitorId: string | null, input: StartCrawlInput) => Promise<CrawlView>,
) {
  const tables = repository.seoDb(db);

  return {
    async createCompetitor(ctx: RequestContext, siteId: string, input: CreateCompetitorInput): Promise<CompetitorView> {
      const { domain, startUrl } = parseDomain(input.domain);
      return tables.transaction().execute(async (tx) => {
        const site = await requireSite(tx, ctx, siteId, { forUpdate: true });
        if (domain === site.domain)
          throw new AppError('conflict', 'A site cannot be its own competitor.', [{ path: 'domain', code: 'same_as_site', message: 'This is the site itself.' }]);
        if ((await repository.listCompetitors(tx, ctx, siteId)).length >= MAX_COMPETITORS_PER_SITE) {
          throw new AppError('conflict', `A site has at most ${MAX_COMPETITORS_PER_SITE} competitors.`, [
            { path: 'domain', code: 'limit_reached', message: `A site has at most ${MAX_COMPETITORS_PER_SITE} competitors.`, limit: MAX_COMPETITORS_PER_SITE },
          ]);
        }
        const row = await repository.insertCompetitor(tx, ctx, {
          id: newId(),
          site_id: siteId,
          domain,
          name: input.name === undefined ? domain : input.name.trim(),
          start_url: startUrl,
          crawl_status: 'never',
          last_crawled_at: null,
          page_count: 0,
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        if (!row)
          throw new AppError('conflict', 'This competitor is already set up for the site.', [{ path: 'domain', code: 'taken', message: `${domain} is already a competitor.` }]);
        const view = presentCompetitor(row);
        await events.record(tx, ctx, 'seo.competitor.created', view);
        return view;
      });
    },

    async deleteCompetitor(ctx: RequestContext, siteId: string, competitorId: string): Promise<{ id: string; deleted: true }> {
      return tables.transaction().execute(async (tx) => {
        await requireSite(tx, ctx, siteId, { forUpdate: true });
        const current = await repository.findCompetitor(tx, ctx, siteId, competitorId);
        if (!current) throw notFound('Competitor');
        await repository.deleteCompetitor(tx, ctx, competitorId);
        await events.record(tx, ctx, 'seo.competitor.deleted', presentCompetitor(current));
        return { id: competitorId, deleted: true as const };
      });
    },

    async crawlCompetitor(ctx: RequestContext, siteId: string, competitorId: string, input: StartCrawlInput): Promise<CrawlView> {
      return db.transaction().execute(async (jobsTx) => {
        const tx = repository.seoDb(jobsTx);
        await requireSite(tx, ctx, siteId, { forUpdate: true });
        const competitor = await repository.findCompetitor(tx, ctx, siteId, competitorId);
        if (!competitor) throw notFound('Competitor');
        const crawl = await queueCrawl(jobsTx, ctx, siteId, competitorId, input);
        if (competitor.crawl_status !== 'queued' && competitor.crawl_status !== 'running') {
          await repository.updateCompetitor(tx, ctx, competitorId, { crawl_status: 'queued' });
        }
        return crawl;
      });
    },

    /** The competitors view: needs_crawl before the site is crawled, no_topics before search data is clustered, else the gaps. */
    async competitorsView(ctx: RequestContext, siteId: string): Promise<CompetitorsViewData> {
      const site = await requireSite(tables, ctx, siteId);
      const competitors = await repository.listCompetitors(tables, ctx, siteId);
      const crawled = competitors.some((competitor) => competitor.last_crawled_at !== null);
      // In the schema's property order, so the reply is written without a copy.
      const view = (gaps: CompetitorsViewData['gaps'], reason: CompetitorsViewData['reason'], revision: number | null): CompetitorsViewData => ({
        competitors: competitors.map(presentCompetitor),
        gaps,
        crawled,
        measurable: reason === null,
        reason,
        revision,
        note: NOTE,
      });
      if (site.last_crawled_at === null) return view([], 'needs_crawl', null);
      const topics = site.topics_revision === null ? [] : await repository.allTopics(tables, ctx, siteId);
      if (topics.length === 0) return view([], 'no_topics', null);
      const pages = (await repository.pagesForMatching(tables, ctx, siteId, { ownOnly: false })).map((page) => ({
        competitorId: page.competitor_id,
        indexed: indexPage({
          url: page.url,
          title: page.title,
          metaDescription: page.meta_description,
          headings: page.headings,
          wordCount: page.word_count,
          questions: page.questions,
          text: '',
        }),
      }));
      const own = pages.filter((page) => page.competitorId === null);
      const crawledCompetitors = competitors.filter((competitor) => competitor.last_crawled_at !== null);
      const gaps: CompetitorsViewData['gaps'] = [];
      for (const topic of topics) {
        const terms = contentTokens(topic.label);
        if (own.some((page) => coversTopic(page.indexed, terms))) continue;
        const covering = [];
        for (const competitor of crawledCompetitors) {
          const page = pages.find((candidate) => candidate.competitorId === competitor.id && coversTopic(candidate.indexed, terms));
          if (page) covering.push({ competitor_id: competitor.id, domain: competitor.domain, url: page.indexed.url });
        }
        if (covering.length === 0) continue;
        gaps.push({ topic_id: topic.id, topic_label: topic.label, impressions: topic.impressions, clicks: topic.clicks, query_count: topic.query_count, competitors: covering });
      }
      gaps.sort(
        (a, b) =>
          b.impressions - a.impressions ||
          b.clicks - a.clicks ||
          (a.topic_label < b.topic_label ? -1 : a.topic_label > b.topic_label ? 1 : 0) ||
          (a.topic_id < b.topic_id ? -1 : 1),
      );
      return view(gaps.slice(0, 1000), null, site.topics_revision);
    },
  };
}
