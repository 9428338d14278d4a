-- Blog posts, their daily view counts, and newsletter subscribers.
-- Timestamps are written by the application (its injectable clock) at millisecond precision.

create table blog_posts (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  title text not null,
  slug text not null,
  excerpt text,
  -- Markdown as written, and its rendering (raw HTML escaped, unsafe links dropped).
  content text not null,
  content_html text not null,
  status text not null check (status in ('draft', 'scheduled', 'published', 'archived')),
  -- When the post first went live; kept through unpublish, archive and republish.
  published_at timestamptz,
  -- Set only while status is scheduled.
  scheduled_for timestamptz,
  -- As written (first spelling wins), and lower-cased for case-insensitive filters.
  categories text[] not null,
  category_keys text[] not null,
  tags text[] not null,
  tag_keys text[] not null,
  author_name text,
  cover_image_url text,
  seo_title text,
  seo_description text,
  reading_time_minutes integer not null,
  view_count integer not null default 0,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint blog_posts_scheduled_for check ((status = 'scheduled') = (scheduled_for is not null))
);
create unique index blog_posts_slug on blog_posts (tenant_id, mode, slug);
create index blog_posts_list on blog_posts (tenant_id, mode, created_at desc, id desc);
create index blog_posts_published on blog_posts (tenant_id, mode, published_at desc, id desc) where status = 'published';
create index blog_posts_category_keys on blog_posts using gin (category_keys);
create index blog_posts_tag_keys on blog_posts using gin (tag_keys);

-- One row per post and UTC day with views, so analytics over a date range sums few rows.
create table blog_post_view_days (
  post_id uuid not null references blog_posts (id) on delete cascade,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  day date not null,
  views integer not null,
  primary key (post_id, day)
);
create index blog_post_view_days_by_day on blog_post_view_days (tenant_id, mode, day);

create table blog_subscribers (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  email text not null,
  name text,
  status text not null check (status in ('active', 'unsubscribed', 'bounced')),
  source text not null,
  subscribed_at timestamptz not null,
  -- Set only while status is unsubscribed.
  unsubscribed_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create unique index blog_subscribers_email on blog_subscribers (tenant_id, mode, email);
create index blog_subscribers_list on blog_subscribers (tenant_id, mode, created_at desc, id desc);
