import type { ColumnType } from 'kysely';
import type { Mode } from '../../db/types.js';

export type Json = ColumnType<unknown, string, string>;

export const CRAWL_STATUSES = ['never', 'queued', 'running', 'completed', 'failed'] as const;
export type CrawlStatus = (typeof CRAWL_STATUSES)[number];
export const CRAWL_RUN_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type CrawlRunStatus = (typeof CRAWL_RUN_STATUSES)[number];
export const QUESTION_STATUSES = ['open', 'answered', 'ignored'] as const;
export type QuestionStatus = (typeof QUESTION_STATUSES)[number];
export const COVERAGES = ['none', 'partial', 'full'] as const;
export type Coverage = (typeof COVERAGES)[number];

export interface SeoSitesTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  domain: string;
  name: string;
  start_url: string;
  crawl_status: CrawlStatus;
  last_crawled_at: Date | null;
  page_count: number;
  topics_revision: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface SeoCompetitorsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  site_id: string;
  domain: string;
  name: string;
  start_url: string;
  crawl_status: CrawlStatus;
  last_crawled_at: Date | null;
  page_count: number;
  created_at: Date;
  updated_at: Date;
}

export interface SeoCrawlsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  site_id: string;
  competitor_id: string | null;
  status: CrawlRunStatus;
  max_pages: number;
  max_depth: number;
  max_seconds: number;
  pages_crawled: number;
  pages_failed: number;
  urls_blocked: number;
  urls_queued: number;
  stop_reason: string | null;
  error: string | null;
  started_at: Date | null;
  finished_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface SeoPagesTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  site_id: string;
  competitor_id: string | null;
  crawl_id: string;
  url: string;
  depth: number;
  status_code: number;
  title: string | null;
  meta_description: string | null;
  headings: Json;
  word_count: number;
  questions: Json;
  body_text: string;
  crawled_at: Date;
}

export interface SeoQueriesTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  site_id: string;
  query: string;
  normalized: string;
  impressions: number;
  clicks: number;
  position: number;
  first_date: string;
  last_date: string;
  topic_id: string | null;
  updated_at: Date;
}

export interface SeoSearchRowsTable {
  tenant_id: string;
  mode: Mode;
  site_id: string;
  normalized: string;
  page: string;
  date: string;
  query: string;
  impressions: number;
  clicks: number;
  position: number;
}

export interface SeoTopicsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  site_id: string;
  revision: number;
  label: string;
  terms: string[];
  query_count: number;
  impressions: number;
  clicks: number;
  created_at: Date;
}

export interface SeoQuestionsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  site_id: string;
  question: string;
  normalized: string;
  kind: string;
  intent: string;
  sources: string[];
  topic_id: string | null;
  topic_label: string | null;
  query_id: string | null;
  demand: Json;
  best_page_url: string | null;
  match_basis: string;
  coverage: Coverage;
  answer_score: number;
  checks: Json;
  status: QuestionStatus;
  ai_monitored: boolean;
  ai_priority: number;
  ai_models: Json | null;
  ai_last_checked_at: Date | null;
  ai_next_check_at: Date | null;
  ai_latest: Json | null;
  author_label: string | null;
  evaluated_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface SeoTables {
  seo_sites: SeoSitesTable;
  seo_competitors: SeoCompetitorsTable;
  seo_crawls: SeoCrawlsTable;
  seo_pages: SeoPagesTable;
  seo_queries: SeoQueriesTable;
  seo_search_rows: SeoSearchRowsTable;
  seo_topics: SeoTopicsTable;
  seo_questions: SeoQuestionsTable;
}
