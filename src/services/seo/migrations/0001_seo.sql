-- SEO: sites, competitors, crawls and the pages they read, imported search data (rows and
-- queries per site), topics clustered from the queries, and tracked questions.
-- Ids are UUIDs (the spec types the question id as a UUID-shaped string).

create table seo_sites (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  domain text not null,
  name text not null,
  start_url text not null,
  crawl_status text not null check (crawl_status in ('never', 'queued', 'running', 'completed', 'failed')),
  last_crawled_at timestamptz,
  page_count integer not null default 0,
  topics_revision integer,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint seo_sites_domain unique (tenant_id, mode, domain)
);
create index seo_sites_list on seo_sites (tenant_id, mode, created_at desc, id desc);

create table seo_competitors (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  site_id uuid not null references seo_sites (id) on delete cascade,
  domain text not null,
  name text not null,
  start_url text not null,
  crawl_status text not null check (crawl_status in ('never', 'queued', 'running', 'completed', 'failed')),
  last_crawled_at timestamptz,
  page_count integer not null default 0,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint seo_competitors_domain unique (site_id, domain)
);
create index seo_competitors_list on seo_competitors (tenant_id, mode, site_id, created_at, id);

create table seo_crawls (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  site_id uuid not null references seo_sites (id) on delete cascade,
  competitor_id uuid references seo_competitors (id) on delete cascade,
  status text not null check (status in ('queued', 'running', 'completed', 'failed')),
  max_pages integer not null,
  max_depth integer not null,
  max_seconds integer not null,
  pages_crawled integer not null default 0,
  pages_failed integer not null default 0,
  urls_blocked integer not null default 0,
  urls_queued integer not null default 0,
  stop_reason text,
  error text,
  started_at timestamptz,
  finished_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
-- One crawl at a time per target (the site itself, or one competitor): a second request finds it.
create unique index seo_crawls_one_active on seo_crawls (site_id, coalesce(competitor_id, site_id)) where status in ('queued', 'running');
create index seo_crawls_list on seo_crawls (tenant_id, mode, site_id, created_at desc, id desc);

create table seo_pages (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  site_id uuid not null references seo_sites (id) on delete cascade,
  competitor_id uuid references seo_competitors (id) on delete cascade,
  crawl_id uuid not null,
  url text not null,
  depth integer not null,
  status_code integer not null,
  title text,
  meta_description text,
  headings jsonb not null,
  word_count integer not null,
  questions jsonb not null,
  body_text text not null,
  crawled_at timestamptz not null
);
create index seo_pages_list on seo_pages (tenant_id, mode, site_id, competitor_id, url, id);

create table seo_queries (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  site_id uuid not null references seo_sites (id) on delete cascade,
  query text not null,
  normalized text not null,
  impressions bigint not null,
  clicks bigint not null,
  position double precision not null,
  first_date text not null,
  last_date text not null,
  topic_id uuid,
  updated_at timestamptz not null,
  constraint seo_queries_normalized unique (site_id, normalized)
);
create index seo_queries_by_site on seo_queries (tenant_id, mode, site_id, impressions desc, normalized);

-- One row per query, page and day, as a Search Console export gives; importing the same day again replaces it.
create table seo_search_rows (
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  site_id uuid not null references seo_sites (id) on delete cascade,
  normalized text not null,
  page text not null,
  date text not null,
  query text not null,
  impressions bigint not null,
  clicks bigint not null,
  position double precision not null,
  primary key (site_id, normalized, page, date)
);

create table seo_topics (
  id uuid not null,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  site_id uuid not null references seo_sites (id) on delete cascade,
  revision integer not null,
  label text not null,
  terms text[] not null,
  query_count integer not null,
  impressions bigint not null,
  clicks bigint not null,
  created_at timestamptz not null,
  primary key (site_id, id)
);
create index seo_topics_list on seo_topics (tenant_id, mode, site_id, impressions desc, id);

create table seo_questions (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  site_id uuid not null references seo_sites (id) on delete cascade,
  question text not null,
  normalized text not null,
  kind text not null,
  intent text not null,
  sources text[] not null,
  topic_id uuid,
  topic_label text,
  query_id uuid,
  demand jsonb not null,
  best_page_url text,
  match_basis text not null,
  coverage text not null check (coverage in ('none', 'partial', 'full')),
  answer_score integer not null,
  checks jsonb not null,
  status text not null check (status in ('open', 'answered', 'ignored')),
  ai_monitored boolean not null,
  ai_priority integer not null,
  ai_models jsonb,
  ai_last_checked_at timestamptz,
  ai_next_check_at timestamptz,
  ai_latest jsonb,
  author_label text,
  evaluated_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  -- Duplicates are never created: one row per normalised question and site.
  constraint seo_questions_normalized unique (site_id, normalized)
);
create index seo_questions_list on seo_questions (tenant_id, mode, site_id, created_at desc, id desc);
create index seo_questions_by_status on seo_questions (tenant_id, mode, site_id, status, created_at desc, id desc);
create index seo_questions_by_topic on seo_questions (tenant_id, mode, site_id, topic_id, created_at desc, id desc);
create index seo_questions_ai_due on seo_questions (ai_next_check_at, id) where ai_monitored;
