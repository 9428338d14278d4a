import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { ownedTables, type OwnedInsert, type OwnedRow, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import type { PageQuestion } from './html.js';
import type { Coverage, CrawlRunStatus, QuestionStatus, SeoCompetitorsTable, SeoCrawlsTable, SeoQuestionsTable, SeoSitesTable, SeoTables } from './tables.js';

export type SeoDb = Kysely<SeoTables>;

export function seoDb(db: Db): SeoDb {
  return serviceDb(db);
}

const owned = ownedTables<SeoTables>();
const sites = owned('seo_sites');
const competitors = owned('seo_competitors');
const crawls = owned('seo_crawls');
const pages = owned('seo_pages');
const queries = owned('seo_queries');
const searchRows = owned('seo_search_rows');
const topics = owned('seo_topics');
const questions = owned('seo_questions');

/** jsonb arrives parsed from both drivers; text only if a driver ever hands it over unparsed. */
const json = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);
const num = (value: unknown): number => Number(value);

// Sites

const SITE_COLUMNS = ['id', 'domain', 'name', 'start_url', 'crawl_status', 'last_crawled_at', 'page_count', 'topics_revision', 'created_at', 'updated_at'] as const;
export type SiteRow = OwnedRow<SeoSitesTable>;

export async function insertSite(db: SeoDb, owner: Owner, row: OwnedInsert<SeoSitesTable>): Promise<SiteRow | undefined> {
  return sites
    .insert(db, owner, row)
    .onConflict((conflict) => conflict.constraint('seo_sites_domain').doNothing())
    .returning(SITE_COLUMNS)
    .executeTakeFirst();
}

const siteById = sites.statement((from, values: { id: string }) => from.select(SITE_COLUMNS).where('id', '=', values.id));
const siteByIdForUpdate = sites.statement((from, values: { id: string }) => from.select(SITE_COLUMNS).where('id', '=', values.id).forUpdate());

export function findSite(db: SeoDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<SiteRow | undefined> {
  return (options.forUpdate ? siteByIdForUpdate : siteById).first(db, owner, { id });
}

const siteList = sites.list<Record<string, never>, SiteRow>({
  filters: {},
  select: (from) => from.select(SITE_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listSites(db: SeoDb, owner: Owner, page: PageRequest) {
  return siteList.page(db, owner, {}, page);
}

export async function updateSite(db: SeoDb, owner: Owner, id: string, changes: Partial<OwnedInsert<SeoSitesTable>>): Promise<SiteRow> {
  return sites.update(db, owner).set(changes).where('id', '=', id).returning(SITE_COLUMNS).executeTakeFirstOrThrow();
}

export async function deleteSite(db: SeoDb, owner: Owner, id: string): Promise<void> {
  await sites.delete(db, owner).where('id', '=', id).execute();
}

// Competitors

const COMPETITOR_COLUMNS = ['id', 'site_id', 'domain', 'name', 'start_url', 'crawl_status', 'last_crawled_at', 'page_count', 'created_at', 'updated_at'] as const;
export type CompetitorRow = OwnedRow<SeoCompetitorsTable>;

export async function insertCompetitor(db: SeoDb, owner: Owner, row: OwnedInsert<SeoCompetitorsTable>): Promise<CompetitorRow | undefined> {
  return competitors
    .insert(db, owner, row)
    .onConflict((conflict) => conflict.constraint('seo_competitors_domain').doNothing())
    .returning(COMPETITOR_COLUMNS)
    .executeTakeFirst();
}

const competitorById = competitors.statement((from, values: { siteId: string; id: string }) =>
  from.select(COMPETITOR_COLUMNS).where('site_id', '=', values.siteId).where('id', '=', values.id),
);

export function findCompetitor(db: SeoDb, owner: Owner, siteId: string, id: string): Promise<CompetitorRow | undefined> {
  return competitorById.first(db, owner, { siteId, id });
}

const competitorsOfSite = competitors.statement((from, values: { siteId: string }) =>
  from.select(COMPETITOR_COLUMNS).where('site_id', '=', values.siteId).orderBy('created_at').orderBy('id'),
);

export function listCompetitors(db: SeoDb, owner: Owner, siteId: string): Promise<CompetitorRow[]> {
  return competitorsOfSite.all(db, owner, { siteId });
}

export async function updateCompetitor(db: SeoDb, owner: Owner, id: string, changes: Partial<OwnedInsert<SeoCompetitorsTable>>): Promise<CompetitorRow> {
  return competitors.update(db, owner).set(changes).where('id', '=', id).returning(COMPETITOR_COLUMNS).executeTakeFirstOrThrow();
}

export async function deleteCompetitor(db: SeoDb, owner: Owner, id: string): Promise<void> {
  await competitors.delete(db, owner).where('id', '=', id).execute();
}

// Crawls

const CRAWL_COLUMNS = [
  'id',
  'site_id',
  'competitor_id',
  'status',
  'max_pages',
  'max_depth',
  'max_seconds',
  'pages_crawled',
  'pages_failed',
  'urls_blocked',
  'urls_queued',
  'stop_reason',
  'error',
  'started_at',
  'finished_at',
  'created_at',
  'updated_at',
] as const;
export type CrawlRow = OwnedRow<SeoCrawlsTable>;

/** Inserts the crawl unless one of the same target is queued or running (then undefined). */
export async function insertCrawl(db: SeoDb, owner: Owner, row: OwnedInsert<SeoCrawlsTable>): Promise<CrawlRow | undefined> {
  return crawls
    .insert(db, owner, row)
    .onConflict((conflict) =>
      conflict
        .expression(sql`site_id, coalesce(competitor_id, site_id)`)
        .where('status', 'in', ['queued', 'running'])
        .doNothing(),
    )
    .returning(CRAWL_COLUMNS)
    .executeTakeFirst();
}

export async function findActiveCrawl(db: SeoDb, owner: Owner, siteId: string, competitorId: string | null): Promise<CrawlRow | undefined> {
  let query = crawls.select(db, owner).select(CRAWL_COLUMNS).where('site_id', '=', siteId).where('status', 'in', ['queued', 'running']);
  query = competitorId === null ? query.where('competitor_id', 'is', null) : query.where('competitor_id', '=', competitorId);
  return query.executeTakeFirst();
}

const crawlById = crawls.statement((from, values: { siteId: string; id: string }) => from.select(CRAWL_COLUMNS).where('site_id', '=', values.siteId).where('id', '=', values.id));

export function findCrawl(db: SeoDb, owner: Owner, siteId: string, id: string): Promise<CrawlRow | undefined> {
  return crawlById.first(db, owner, { siteId, id });
}

export async function findCrawlForUpdate(db: SeoDb, owner: Owner, id: string): Promise<CrawlRow | undefined> {
  return crawls.select(db, owner).select(CRAWL_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst();
}

const crawlList = crawls.list<{ siteId: string }, CrawlRow>({
  filters: { siteId: (eb, siteId) => eb('site_id', '=', siteId) },
  select: (from) => from.select(CRAWL_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listCrawls(db: SeoDb, owner: Owner, siteId: string, page: PageRequest) {
  return crawlList.page(db, owner, { siteId }, page);
}

export async function updateCrawl(db: SeoDb, owner: Owner, id: string, changes: Partial<OwnedInsert<SeoCrawlsTable>>, onlyIn?: CrawlRunStatus[]): Promise<CrawlRow | undefined> {
  let query = crawls.update(db, owner).set(changes).where('id', '=', id);
  if (onlyIn) query = query.where('status', 'in', onlyIn);
  return query.returning(CRAWL_COLUMNS).executeTakeFirst();
}

// Pages

const PAGE_COLUMNS = ['id', 'competitor_id', 'url', 'depth', 'status_code', 'title', 'meta_description', 'headings', 'word_count', 'questions', 'crawled_at'] as const;

export interface PageRow {
  id: string;
  competitor_id: string | null;
  url: string;
  depth: number;
  status_code: number;
  title: string | null;
  meta_description: string | null;
  headings: { level: number; text: string }[];
  word_count: number;
  questions: PageQuestion[];
  crawled_at: Date;
}

type RawPage = Omit<PageRow, 'headings' | 'questions'> & { headings: unknown; questions: unknown };
const toPage = (row: RawPage): PageRow => ({ ...row, headings: json(row.headings) as PageRow['headings'], questions: json(row.questions) as PageQuestion[] });

export interface NewPage {
  id: string;
  crawl_id: string;
  url: string;
  depth: number;
  status_code: number;
  title: string | null;
  meta_description: string | null;
  headings: { level: number; text: string }[];
  word_count: number;
  questions: PageQuestion[];
  body_text: string;
  crawled_at: Date;
}

/** Replaces the pages of a target (the site, or one competitor) with a crawl's. */
export async function replacePages(db: SeoDb, owner: Owner, siteId: string, competitorId: string | null, rows: NewPage[]): Promise<void> {
  let remove = pages.delete(db, owner).where('site_id', '=', siteId);
  remove = competitorId === null ? remove.where('competitor_id', 'is', null) : remove.where('competitor_id', '=', competitorId);
  await remove.execute();
  for (let start = 0; start < rows.length; start += 100) {
    const batch = rows.slice(start, start + 100).map((row) => ({
      ...row,
      site_id: siteId,
      competitor_id: competitorId,
      headings: JSON.stringify(row.headings),
      questions: JSON.stringify(row.questions),
    }));
    await pages.insert(db, owner, batch).execute();
  }
}

export async function deletePages(db: SeoDb, owner: Owner, siteId: string): Promise<void> {
  await pages.delete(db, owner).where('site_id', '=', siteId).execute();
}

/** `target` is the competitor's id, or the site's own id for the site's pages (coalesce(competitor_id, site_id)). */
const pageList = pages.list<{ siteId: string; target: string }, RawPage>({
  filters: {
    siteId: (eb, siteId) => eb('site_id', '=', siteId),
    target: (eb, target) => eb(sql`coalesce(competitor_id, site_id)`, '=', target),
  },
  select: (from) => from.select(PAGE_COLUMNS).orderBy('url').orderBy('id'),
});

export async function listPages(db: SeoDb, owner: Owner, siteId: string, competitorId: string | undefined, page: PageRequest) {
  const { rows, total } = await pageList.page(db, owner, { siteId, target: competitorId ?? siteId }, page);
  return { rows: rows.map(toPage), total };
}

export interface PageText {
  url: string;
  competitor_id: string | null;
  title: string | null;
  meta_description: string | null;
  headings: { level: number; text: string }[];
  word_count: number;
  questions: PageQuestion[];
  body_text: string;
}

/** The readable pages (2xx) of a site and its competitors, or of the site alone. */
export async function pagesForMatching(db: SeoDb, owner: Owner, siteId: string, options: { ownOnly: boolean }): Promise<PageText[]> {
  let query = pages
    .select(db, owner)
    .select(['url', 'competitor_id', 'title', 'meta_description', 'headings', 'word_count', 'questions', 'body_text'])
    .where('site_id', '=', siteId)
    .where('status_code', '>=', 200)
    .where('status_code', '<', 300);
  if (options.ownOnly) query = query.where('competitor_id', 'is', null);
  const rows = await query.orderBy('url').execute();
  return rows.map((row) => ({ ...row, headings: json(row.headings) as PageText['headings'], questions: json(row.questions) as PageQuestion[] }));
}

// Search data

export interface SearchRowInput {
  normalized: string;
  query: string;
  page: string;
  impressions: number;
  clicks: number;
  position: number;
  date: string;
}

export async function upsertSearchRows(db: SeoDb, owner: Owner, siteId: string, rows: SearchRowInput[]): Promise<void> {
  for (let start = 0; start < rows.length; start += 250) {
    const batch = rows.slice(start, start + 250).map((row) => ({ ...row, site_id: siteId }));
    await searchRows
      .insert(db, owner, batch)
      .onConflict((conflict) =>
        conflict.columns(['site_id', 'normalized', 'page', 'date']).doUpdateSet((eb) => ({
          query: eb.ref('excluded.query'),
          impressions: eb.ref('excluded.impressions'),
          clicks: eb.ref('excluded.clicks'),
          position: eb.ref('excluded.position'),
        })),
      )
      .execute();
  }
}

/** Totals of the given queries over every imported row. */
export async function aggregateQueries(db: SeoDb, owner: Owner, siteId: string, normalized: string[]) {
  const rows = await searchRows
    .select(db, owner)
    .select((eb) => [
      'normalized',
      eb.fn.max('query').as('query'),
      eb.fn.sum<string>('impressions').as('impressions'),
      eb.fn.sum<string>('clicks').as('clicks'),
      sql<number>`coalesce(sum(position * impressions) / nullif(sum(impressions), 0), avg(position))`.as('position'),
      eb.fn.min('date').as('first_date'),
      eb.fn.max('date').as('last_date'),
    ])
    .where('site_id', '=', siteId)
    .where('normalized', '=', sql<string>`any(${normalized}::text[])`)
    .groupBy('normalized')
    .execute();
  return rows.map((row) => ({ ...row, impressions: num(row.impressions), clicks: num(row.clicks), position: num(row.position) }));
}

export interface QueryRow {
  id: string;
  query: string;
  normalized: string;
  impressions: number;
  clicks: number;
  position: number;
  first_date: string;
  last_date: string;
  topic_id: string | null;
}

export async function upsertQueries(db: SeoDb, owner: Owner, siteId: string, rows: Omit<QueryRow, 'topic_id'>[], now: Date): Promise<void> {
  for (let start = 0; start < rows.length; start += 250) {
    const batch = rows.slice(start, start + 250).map((row) => ({ ...row, site_id: siteId, topic_id: null, updated_at: now }));
    await queries
      .insert(db, owner, batch)
      .onConflict((conflict) =>
        conflict.constraint('seo_queries_normalized').doUpdateSet((eb) => ({
          query: eb.ref('excluded.query'),
          impressions: eb.ref('excluded.impressions'),
          clicks: eb.ref('excluded.clicks'),
          position: eb.ref('excluded.position'),
          first_date: eb.ref('excluded.first_date'),
          last_date: eb.ref('excluded.last_date'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }
}

/** The site's queries, most seen first (at most `limit`). */
export async function siteQueries(db: SeoDb, owner: Owner, siteId: string, limit: number): Promise<QueryRow[]> {
  const rows = await queries
    .select(db, owner)
    .select(['id', 'query', 'normalized', 'impressions', 'clicks', 'position', 'first_date', 'last_date', 'topic_id'])
    .where('site_id', '=', siteId)
    .orderBy('impressions', 'desc')
    .orderBy('normalized')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, impressions: num(row.impressions), clicks: num(row.clicks), position: num(row.position) }));
}

export async function countQueries(db: SeoDb, owner: Owner, siteId: string): Promise<number> {
  const row = await queries
    .select(db, owner)
    .select(sql<string>`count(*)`.as('total'))
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

export async function setQueryTopics(db: SeoDb, owner: Owner, siteId: string, topicByQuery: Map<string, string | null>): Promise<void> {
  await queries.update(db, owner).set({ topic_id: null }).where('site_id', '=', siteId).execute();
  const ids: string[] = [];
  const topicIds: string[] = [];
  for (const [queryId, topicId] of topicByQuery) {
    if (!topicId) continue;
    ids.push(queryId);
    topicIds.push(topicId);
  }
  if (ids.length === 0) return;
  // One statement for every query: the pairs as two arrays, unnested side by side.
  await queries
    .update(db, owner)
    .from(sql`unnest(${ids}::uuid[], ${topicIds}::uuid[])`.as(sql`v(query_id, topic_id)` as never) as never)
    .set({ topic_id: sql<string>`v.topic_id` })
    .where('site_id', '=', siteId)
    .where('id', '=', sql<string>`v.query_id`)
    .execute();
}

// Topics

export interface TopicRow {
  id: string;
  revision: number;
  label: string;
  terms: string[];
  query_count: number;
  impressions: number;
  clicks: number;
}

export async function replaceTopics(db: SeoDb, owner: Owner, siteId: string, rows: TopicRow[], now: Date): Promise<void> {
  await topics.delete(db, owner).where('site_id', '=', siteId).execute();
  for (let start = 0; start < rows.length; start += 250) {
    const batch = rows.slice(start, start + 250).map((row) => ({ ...row, terms: sql<string[]>`${row.terms}::text[]`, site_id: siteId, created_at: now }));
    await topics.insert(db, owner, batch as never).execute();
  }
}

// In the reply schema's order: a topic row is written as it is.
const TOPIC_COLUMNS = ['id', 'label', 'terms', 'query_count', 'impressions', 'clicks', 'revision'] as const;
type RawTopic = Omit<TopicRow, 'impressions' | 'clicks'> & { impressions: unknown; clicks: unknown };
const toTopic = (row: RawTopic): TopicRow => ({ ...row, impressions: num(row.impressions), clicks: num(row.clicks) });

const topicList = topics.list<{ siteId: string }, RawTopic>({
  filters: { siteId: (eb, siteId) => eb('site_id', '=', siteId) },
  select: (from) => from.select(TOPIC_COLUMNS).orderBy('impressions', 'desc').orderBy('id'),
});

export async function listTopics(db: SeoDb, owner: Owner, siteId: string, page: PageRequest) {
  const { rows, total } = await topicList.page(db, owner, { siteId }, page);
  return { rows: rows.map(toTopic), total };
}

export async function allTopics(db: SeoDb, owner: Owner, siteId: string): Promise<TopicRow[]> {
  const rows = await topics.select(db, owner).select(TOPIC_COLUMNS).where('site_id', '=', siteId).orderBy('impressions', 'desc').orderBy('id').execute();
  return rows.map(toTopic);
}

// Questions

const QUESTION_COLUMNS = [
  'id',
  'site_id',
  'question',
  'normalized',
  'kind',
  'intent',
  'sources',
  'topic_id',
  'topic_label',
  'query_id',
  'demand',
  'best_page_url',
  'match_basis',
  'coverage',
  'answer_score',
  'checks',
  'status',
  'ai_monitored',
  'ai_priority',
  'ai_models',
  'ai_last_checked_at',
  'ai_next_check_at',
  'ai_latest',
  'author_label',
  'evaluated_at',
  'created_at',
  'updated_at',
] as const;

export type QuestionRow = Omit<OwnedRow<SeoQuestionsTable>, 'demand' | 'checks' | 'ai_models' | 'ai_latest'> & {
  demand: unknown;
  checks: unknown;
  ai_models: unknown;
  ai_latest: unknown;
};

const toQuestion = (row: QuestionRow): QuestionRow => ({
  ...row,
  demand: inDemandOrder(json(row.demand)),
  checks: json(row.checks),
  ai_models: json(row.ai_models),
  ai_latest: json(row.ai_latest),
});

/** jsonb hands keys back sorted by length; the reply lists them as the Demand schema does. */
function inDemandOrder(stored: unknown): unknown {
  if (stored === null || typeof stored !== 'object') return stored;
  const { impressions, clicks, position, measured, period } = stored as Record<string, unknown>;
  return { impressions, clicks, position, measured, period };
}

export type NewQuestion = Omit<OwnedInsert<SeoQuestionsTable>, 'demand' | 'checks' | 'ai_models' | 'ai_latest'> & {
  demand: unknown;
  checks: unknown;
  ai_models: unknown;
  ai_latest: unknown;
};

type QuestionChanges = Partial<NewQuestion>;

function questionValues(row: QuestionChanges) {
  const out: Record<string, unknown> = { ...row };
  for (const key of ['demand', 'checks', 'ai_models', 'ai_latest'] as const) if (key in row) out[key] = row[key] === null ? null : JSON.stringify(row[key]);
  if (row.sources) out.sources = sql`${row.sources}::text[]`;
  return out;
}

/** Inserts a question unless its normal form is already tracked for the site (then undefined). */
export async function insertQuestion(db: SeoDb, owner: Owner, row: NewQuestion): Promise<QuestionRow | undefined> {
  const inserted = await questions
    .insert(db, owner, questionValues(row) as never)
    .onConflict((conflict) => conflict.constraint('seo_questions_normalized').doNothing())
    .returning(QUESTION_COLUMNS)
    .executeTakeFirst();
  return inserted && toQuestion(inserted);
}

export async function questionsByNormalized(db: SeoDb, owner: Owner, siteId: string, normalized: string[]): Promise<QuestionRow[]> {
  if (normalized.length === 0) return [];
  const rows = await questions
    .select(db, owner)
    .select(QUESTION_COLUMNS)
    .where('site_id', '=', siteId)
    .where('normalized', '=', sql<string>`any(${normalized}::text[])`)
    .orderBy('id')
    .forUpdate()
    .execute();
  return rows.map((row) => toQuestion(row as QuestionRow));
}

const questionById = questions.statement((from, values: { siteId: string; id: string }) =>
  from.select(QUESTION_COLUMNS).where('site_id', '=', values.siteId).where('id', '=', values.id),
);

export async function findQuestion(db: SeoDb, owner: Owner, siteId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<QuestionRow | undefined> {
  if (options.forUpdate) {
    const row = await questions.select(db, owner).select(QUESTION_COLUMNS).where('site_id', '=', siteId).where('id', '=', id).forUpdate().executeTakeFirst();
    return row && toQuestion(row);
  }
  const row = await questionById.first(db, owner, { siteId, id });
  return row && toQuestion(row);
}

const questionList = questions.list<{ siteId: string; status?: QuestionStatus; coverage?: Coverage; topicId?: string }, QuestionRow>({
  filters: {
    siteId: (eb, siteId) => eb('site_id', '=', siteId),
    status: (eb, status) => eb('status', '=', status),
    coverage: (eb, coverage) => eb('coverage', '=', coverage),
    topicId: (eb, topicId) => eb('topic_id', '=', topicId),
  },
  select: (from) => from.select(QUESTION_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listQuestions(db: SeoDb, owner: Owner, filters: { siteId: string; status?: QuestionStatus; coverage?: Coverage; topicId?: string }, page: PageRequest) {
  const { rows, total } = await questionList.page(db, owner, filters, page);
  return { rows: rows.map(toQuestion), total };
}

export async function siteQuestions(db: SeoDb, owner: Owner, siteId: string): Promise<QuestionRow[]> {
  const rows = await questions.select(db, owner).select(QUESTION_COLUMNS).where('site_id', '=', siteId).orderBy('created_at').orderBy('id').execute();
  return rows.map((row) => toQuestion(row as QuestionRow));
}

export async function countSiteQuestions(db: SeoDb, owner: Owner, siteId: string): Promise<number> {
  const row = await questions
    .select(db, owner)
    .select(sql<string>`count(*)`.as('total'))
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

export async function countMonitored(db: SeoDb, owner: Owner): Promise<number> {
  const row = await questions
    .select(db, owner)
    .select(sql<string>`count(*)`.as('total'))
    .where('ai_monitored', '=', true)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

export async function updateQuestion(db: SeoDb, owner: Owner, id: string, changes: QuestionChanges): Promise<QuestionRow> {
  const row = await questions
    .update(db, owner)
    .set(questionValues(changes) as never)
    .where('id', '=', id)
    .returning(QUESTION_COLUMNS)
    .executeTakeFirstOrThrow();
  return toQuestion(row);
}

export async function deleteQuestion(db: SeoDb, owner: Owner, id: string): Promise<void> {
  await questions.delete(db, owner).where('id', '=', id).execute();
}

/** Monitored questions whose AI check is due, across owners (the scheduler's sweep). */
export async function dueAiChecks(db: SeoDb, now: Date, limit: number) {
  return questions
    .acrossOwners(db)
    .select(['id', 'site_id'])
    .where('ai_monitored', '=', true)
    .where('ai_next_check_at', '<=', now)
    .orderBy('ai_next_check_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}
