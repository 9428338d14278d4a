import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import { invalidField } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import { demandOf, evaluateQuestion, indexPage, type IndexedPage, type QueryForDemand, type TopicForMatching } from './evaluate.js';
import * as repository from './repository.js';
import type { CompetitorRow, CrawlRow, QuestionRow, SeoDb, SiteRow } from './repository.js';
import type { CompetitorView, CrawlView, QuestionView, SiteView } from './schemas.js';
import { contentTokens } from './text.js';

export interface SeoDeps {
  db: Db;
  jobs: JobRunner;
  events: EventLog;
  /** AI-monitored questions allowed per tenant and mode. */
  aiMonitorLimit: number;
}

export const CRAWL_JOB = 'seo.crawl';
export const AI_CHECK_JOB = 'seo.ai-check';
/** Queries clustered per site (the most seen). */
export const MAX_CLUSTERED_QUERIES = 2000;
export const MAX_QUESTIONS_PER_SITE = 1000;
export const MAX_COMPETITORS_PER_SITE = 20;
export const DEFAULT_AI_MONITOR_LIMIT = 25;

/**
 * A domain as sent (a host, host:port, or a URL) to its stored form: the lower-case host
 * (IDN as punycode, as the URL parser gives it) with a non-default port, and where crawls start.
 */
export function parseDomain(input: string, path = 'domain'): { domain: string; startUrl: string } {
  const text = input.trim();
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
  let url: URL;
  try {
    url = new URL(hasScheme ? text : `https://${text}`);
  } catch {
    throw invalidField(path, 'invalid_format', 'domain must be a host name such as example.com, or an http(s) URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidField(path, 'invalid_format', 'Only http and https sites can be crawled.');
  if (url.username || url.password) throw invalidField(path, 'invalid_format', 'domain must not carry credentials.');
  const host = url.hostname.replace(/\.$/, '');
  const ipv4 = /^\d{1,3}(\.\d{1,3}){3}$/.test(host);
  const ipv6 = host.startsWith('[') && host.endsWith(']');
  const labels = host.split('.');
  const validName =
    labels.length >= 2 && host.length <= 253 && labels.every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label)) && !/^\d+$/.test(labels[labels.length - 1]!);
  if ((ipv4 && !text.includes(host)) || (!ipv4 && !ipv6 && !validName)) throw invalidField(path, 'invalid_format', 'domain must be a host name with a dot, such as example.com.');
  const domain = url.port ? `${host}:${url.port}` : host;
  const pathname = hasScheme ? url.pathname : '/';
  return { domain, startUrl: `${url.protocol}//${domain}${pathname}` };
}

export function presentSite(row: SiteRow): SiteView {
  return {
    id: row.id,
    domain: row.domain,
    name: row.name,
    start_url: row.start_url,
    crawl_status: row.crawl_status,
    last_crawled_at: row.last_crawled_at,
    page_count: row.page_count,
    topics_revision: row.topics_revision,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentCompetitor(row: CompetitorRow): CompetitorView {
  return {
    id: row.id,
    site_id: row.site_id,
    domain: row.domain,
    name: row.name,
    start_url: row.start_url,
    crawl_status: row.crawl_status,
    last_crawled_at: row.last_crawled_at,
    page_count: row.page_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentCrawl(row: CrawlRow): CrawlView {
  return {
    id: row.id,
    site_id: row.site_id,
    competitor_id: row.competitor_id,
    status: row.status,
    budget: { max_pages: row.max_pages, max_depth: row.max_depth, max_seconds: row.max_seconds },
    progress: { pages_crawled: row.pages_crawled, pages_failed: row.pages_failed, urls_blocked: row.urls_blocked, urls_queued: row.urls_queued },
    stop_reason: row.stop_reason,
    error: row.error,
    started_at: row.started_at,
    finished_at: row.finished_at,
    created_at: row.created_at,
  };
}

export function presentQuestion(row: QuestionRow): QuestionView {
  return {
    id: row.id,
    question: row.question,
    kind: row.kind,
    intent: row.intent,
    sources: row.sources,
    topic_id: row.topic_id,
    topic_label: row.topic_label,
    query_id: row.query_id,
    demand: row.demand,
    best_page_url: row.best_page_url,
    match_basis: row.match_basis,
    coverage: row.coverage,
    answer_score: row.answer_score,
    checks: row.checks,
    status: row.status,
    ai_monitored: row.ai_monitored,
    ai_priority: row.ai_priority,
    ai_models: row.ai_models,
    ai_last_checked_at: row.ai_last_checked_at,
    ai_next_check_at: row.ai_next_check_at,
    ai_latest: row.ai_latest,
    author_label: row.author_label,
    evaluated_at: row.evaluated_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  } as QuestionView;
}

/** What evaluating a site's questions needs, loaded once. */
export interface EvaluationContext {
  crawled: boolean;
  pages: IndexedPage[];
  queries: QueryForDemand[];
  topics: TopicForMatching[];
}

export async function loadEvaluationContext(tx: SeoDb, owner: Owner, site: SiteRow): Promise<EvaluationContext> {
  const [pages, queries, topics] = await Promise.all([
    site.last_crawled_at ? repository.pagesForMatching(tx, owner, site.id, { ownOnly: true }) : Promise.resolve([]),
    repository.siteQueries(tx, owner, site.id, MAX_CLUSTERED_QUERIES * 5),
    repository.allTopics(tx, owner, site.id),
  ]);
  return {
    crawled: site.last_crawled_at !== null,
    pages: pages.map((page) =>
      indexPage({
        url: page.url,
        title: page.title,
        metaDescription: page.meta_description,
        headings: page.headings,
        wordCount: page.word_count,
        questions: page.questions,
        text: page.body_text,
      }),
    ),
    queries: queries.map((query) => ({ ...query, tokens: contentTokens(query.query) })),
    topics: topics.map((topic) => ({ id: topic.id, label: topic.label, terms: topic.terms })),
  };
}

/** Order of AI checks from demand: 0 without impressions, 100 at a million. */
export function aiPriority(impressions: number): number {
  return Math.min(100, Math.round(Math.log10(impressions + 1) * (100 / 6)));
}

/** The evaluated fields of a question: demand, topic and query always; page fields once the site has been crawled. */
export function evaluationOf(question: string, context: EvaluationContext, now: Date) {
  const demand = demandOf(question, context.queries, context.topics);
  const base = { ...demand, ai_priority: aiPriority(demand.demand.impressions) };
  if (!context.crawled) return { ...base, best_page_url: null, match_basis: 'none', coverage: 'none' as const, answer_score: 0, checks: [], evaluated_at: null };
  return { ...base, ...evaluateQuestion(question, context.pages), evaluated_at: now };
}

/** Evaluates every question of the site again (after a crawl of the site or a search-data import). */
export async function reevaluateSite(tx: SeoDb, owner: Owner, site: SiteRow, now: Date): Promise<void> {
  const questions = await repository.siteQuestions(tx, owner, site.id);
  if (questions.length === 0) return;
  const context = await loadEvaluationContext(tx, owner, site);
  for (const question of questions) {
    const fields = evaluationOf(question.question, context, now);
    const changed =
      JSON.stringify([
        question.best_page_url,
        question.match_basis,
        question.coverage,
        question.answer_score,
        question.checks,
        question.topic_id,
        question.query_id,
        question.demand,
      ]) !== JSON.stringify([fields.best_page_url, fields.match_basis, fields.coverage, fields.answer_score, fields.checks, fields.topic_id, fields.query_id, fields.demand]) ||
      (question.evaluated_at === null) !== (fields.evaluated_at === null);
    if (!changed && fields.evaluated_at === null) continue;
    await repository.updateQuestion(tx, owner, question.id, { ...fields, ...(changed ? { updated_at: now } : {}) });
  }
}
