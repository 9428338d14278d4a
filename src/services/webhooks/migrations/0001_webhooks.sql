-- Webhook endpoints, one delivery per (endpoint, event), and every attempt of each delivery.

create table webhook_endpoints (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  url text not null,
  description text,
  enabled_events text[] not null,
  status text not null check (status in ('enabled', 'disabled')),
  disabled_reason text check (disabled_reason in ('manual', 'failing')),
  -- Signing secrets, sealed with SECRETS_KEY; the previous one signs too until it expires.
  secret_sealed text not null,
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  -- The first failed attempt since the last success: three days of failures disable the endpoint.
  failing_since timestamptz,
  last_success_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index webhook_endpoints_list on webhook_endpoints (tenant_id, mode, created_at desc, id desc);

create table webhook_deliveries (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
  event_id uuid not null,
  event_type text not null,
  status text not null check (status in ('pending', 'succeeded', 'failed')),
  attempt_count integer not null default 0,
  -- Attempts made by the retry schedule (manual retries left out): the position in the schedule.
  scheduled_attempts integer not null default 0,
  next_attempt_at timestamptz,
  -- A manual retry is due; resume_at is the scheduled retry it jumped ahead of, if any.
  manual_retry boolean not null default false,
  resume_at timestamptz,
  -- Set while one process sends the attempt; another takes it over only after it lapses.
  locked_until timestamptz,
  last_attempt_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (endpoint_id, event_id)
);
create index webhook_deliveries_list on webhook_deliveries (tenant_id, mode, endpoint_id, created_at desc, id desc);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at, id) where status = 'pending';
create index webhook_deliveries_by_age on webhook_deliveries (created_at);

create table webhook_attempts (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
  attempted_at timestamptz not null,
  status_code integer,
  duration_ms integer not null,
  error text,
  response_body text,
  manual boolean not null
);
create index webhook_attempts_by_delivery on webhook_attempts (delivery_id, attempted_at, id);
