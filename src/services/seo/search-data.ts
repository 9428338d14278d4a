import type { PageRequest } from '../../db/paging.js';
import type { RequestContext } from '../../platform/context.js';
import { invalidField, notFound } from '../../platform/errors/app-error.js';
import * as repository from './repository.js';
import type { SeoDb, SiteRow } from './repository.js';
import type { SearchDataInput, TopicView } from './schemas.js';
import { MAX_CLUSTERED_QUERIES, presentSite, reevaluateSite, type SeoDeps } from './shared.js';
import { clusterQueries, normalizeText, stableId } from './text.js';

function isRealDate(text: string): boolean {
  const date = new Date(`${text}T00:00:00.000Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

/**
 * Clusters the site's queries (the most seen, up to MAX_CLUSTERED_QUERIES) into topics and
 * stores them as build `revision`; a topic keeps its id while it forms around the same query.
 */
async function rebuildTopics(tx: SeoDb, ctx: RequestContext, site: SiteRow, revision: number): Promise<number> {
  const queries = await repository.siteQueries(tx, ctx, site.id, MAX_CLUSTERED_QUERIES);
  const clusters = clusterQueries(queries.map((query) => ({ id: query.id, text: query.query, impressions: query.impressions, clicks: query.clicks })));
  const topicByQuery = new Map<string, string | null>();
  const topics = clusters.map((cluster) => {
    const id = stableId(site.id, normalizeText(cluster.leader.text));
    for (const member of cluster.members) topicByQuery.set(member.id, id);
    return {
      id,
      revision,
      label: cluster.leader.text,
      terms: cluster.terms,
      query_count: cluster.members.length,
      impressions: cluster.members.reduce((sum, member) => sum + member.impressions, 0),
      clicks: cluster.members.reduce((sum, member) => sum + member.clicks, 0),
    };
  });
  await repository.replaceTopics(tx, ctx, site.id, topics, ctx.now);
  await repository.setQueryTopics(tx, ctx, site.id, topicByQuery);
  return topics.length;
}

/** Imported search data (Search Console rows) and the topics clustered from it. */
export function createSearchDataRules(
  { db, events }: SeoDeps,
  requireSite: (tx: SeoDb, ctx: RequestContext, siteId: string, options?: { forUpdate?: boolean }) => Promise<SiteRow>,
) {
  const tables = repository.seoDb(db);
  return {
    async importSearchData(ctx: RequestContext, siteId: string, input: SearchDataInput) {
      const rows = input.rows.map((row, index) => {
        const normalized = normalizeText(row.query);
        if (!normalized) throw invalidField(`rows[${index}].query`, 'invalid_value', 'A query needs at least one letter or digit.');
        let page: URL | undefined;
        try {
          page = new URL(row.page);
        } catch {
          page = undefined;
        }
        if (!page || (page.protocol !== 'http:' && page.protocol !== 'https:'))
          throw invalidField(`rows[${index}].page`, 'invalid_format', 'page must be an absolute http or https URL.');
        if (row.clicks > row.impressions) throw invalidField(`rows[${index}].clicks`, 'out_of_range', 'clicks cannot exceed impressions.');
        if (!isRealDate(row.date)) throw invalidField(`rows[${index}].date`, 'invalid_format', 'date must be a real day, YYYY-MM-DD.');
        if (!Number.isFinite(row.position)) throw invalidField(`rows[${index}].position`, 'invalid_value', 'position must be a number.');
        return {
          normalized,
          query: row.query.trim().replace(/\s+/g, ' '),
          page: page.href,
          impressions: row.impressions,
          clicks: row.clicks,
          position: row.position,
          date: row.date,
        };
      });
      return tables.transaction().execute(async (tx) => {
        // The site's row lock serialises imports: each rebuild gets the next revision.
        const site = await requireSite(tx, ctx, siteId, { forUpdate: true });
        await repository.upsertSearchRows(tx, ctx, siteId, rows);
        const touched = [...new Set(rows.map((row) => row.normalized))];
        const totals = await repository.aggregateQueries(tx, ctx, siteId, touched);
        const existing = new Map((await repository.siteQueries(tx, ctx, siteId, Number.MAX_SAFE_INTEGER)).map((query) => [query.normalized, query.id]));
        await repository.upsertQueries(
          tx,
          ctx,
          siteId,
          totals.map((total) => ({
            id: existing.get(total.normalized) ?? stableId(siteId, 'query', total.normalized),
            query: total.query,
            normalized: total.normalized,
            impressions: total.impressions,
            clicks: total.clicks,
            position: total.position,
            first_date: total.first_date,
            last_date: total.last_date,
          })),
          ctx.now,
        );
        const revision = (site.topics_revision ?? 0) + 1;
        const topicCount = await rebuildTopics(tx, ctx, site, revision);
        const updated = await repository.updateSite(tx, ctx, siteId, {
          topics_revision: revision,
          updated_at: ctx.now > site.updated_at ? ctx.now : new Date(site.updated_at.getTime() + 1),
        });
        await reevaluateSite(tx, ctx, updated, ctx.now);
        await events.record(tx, ctx, 'seo.topics.rebuilt', presentSite(updated));
        return { imported: rows.length, queries: await repository.countQueries(tx, ctx, siteId), topics: topicCount, revision };
      });
    },

    async listTopics(ctx: RequestContext, siteId: string, page: PageRequest): Promise<{ rows: TopicView[]; total: number }> {
      const site = await repository.findSite(tables, ctx, siteId);
      if (!site) throw notFound('Site');
      return repository.listTopics(tables, ctx, siteId, page);
    },
  };
}
