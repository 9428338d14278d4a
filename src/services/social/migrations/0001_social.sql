-- Connected social accounts, one-time upload links and their files, and posts.
-- Account ids are bigint identities shown as decimal strings (the spec: "numeric string");
-- file and post ids are UUIDs.

create table social_accounts (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  platform text not null,
  account_kind text not null,
  external_id text not null,
  display_name text,
  avatar_url text,
  access_token_sealed text,
  refresh_token_sealed text,
  token_expires_at timestamptz,
  scopes text[] not null default '{}',
  status text not null check (status in ('connected', 'expired', 'error')),
  last_validated_at timestamptz,
  last_error text,
  environment text not null,
  connected_by bigint,
  connected_by_name text,
  visibility text not null check (visibility in ('private', 'shared')),
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create unique index social_accounts_external on social_accounts (tenant_id, mode, platform, external_id);
create index social_accounts_list on social_accounts (tenant_id, mode, created_at desc, id desc);
create index social_accounts_validation on social_accounts (last_validated_at);

create table social_files (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  status text not null check (status in ('pending', 'uploading', 'ready', 'rejected', 'expired')),
  file_name text not null,
  kind text,
  mime text,
  size_bytes bigint not null,
  sha256 text not null,
  reject_code text,
  reject_detail text,
  token_hash text not null,
  link_expires_at timestamptz not null,
  expires_at timestamptz not null,
  uploaded_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create unique index social_files_token on social_files (token_hash);
create index social_files_list on social_files (tenant_id, mode, created_at desc, id desc);
create index social_files_sweep on social_files (expires_at) where status <> 'expired';

create table social_posts (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  account_ids text[] not null,
  body text not null,
  media jsonb not null default '[]',
  scheduled_at timestamptz,
  status text not null check (status in ('draft', 'scheduled', 'publishing', 'published', 'partially_failed', 'failed')),
  results jsonb not null default '[]',
  published_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index social_posts_list on social_posts (tenant_id, mode, created_at desc, id desc);
create index social_posts_due on social_posts (status, scheduled_at) where status in ('scheduled', 'publishing');
