-- Tenants, their API keys, idempotency records and durable background jobs.
-- Timestamps are written by the application (its injectable clock) at millisecond precision.

create table tenants (
  id uuid primary key,
  name text not null,
  created_at timestamptz not null
);

create table api_keys (
  id uuid primary key,
  tenant_id uuid not null references tenants (id),
  mode text not null check (mode in ('test', 'live')),
  name text,
  -- First characters of the secret, enough to recognise a key in a list; never enough to use it.
  key_prefix text not null,
  -- SHA-256 of the whole secret; the secret itself is never stored.
  key_hash text not null unique,
  scopes text[] not null,
  rate_limit_per_minute integer not null check (rate_limit_per_minute > 0),
  created_at timestamptz not null,
  revoked_at timestamptz
);
create index api_keys_by_tenant on api_keys (tenant_id, created_at desc, id desc);
create index api_keys_by_revocation on api_keys (revoked_at) where revoked_at is not null;

create table idempotency_keys (
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  idempotency_key text not null,
  method text not null,
  path text not null,
  body_hash text not null,
  state text not null check (state in ('in_progress', 'completed')),
  -- While in progress: after this instant the owner is presumed dead and another request may take over.
  locked_until timestamptz,
  response_status integer,
  response_body text,
  response_content_type text,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  primary key (tenant_id, mode, idempotency_key)
);
create index idempotency_keys_by_expiry on idempotency_keys (expires_at);

create table jobs (
  id bigserial primary key,
  kind text not null,
  tenant_id uuid,
  mode text check (mode in ('test', 'live')),
  payload jsonb not null default '{}',
  run_at timestamptz not null,
  status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
  attempts integer not null default 0,
  max_attempts integer not null default 5,
  locked_by text,
  locked_until timestamptz,
  last_error text,
  -- At most one live job per dedupe key (recurring sweeps, one publish per post).
  dedupe_key text unique,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  finished_at timestamptz
);
create index jobs_due on jobs (run_at, id) where status in ('queued', 'running');
