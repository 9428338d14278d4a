-- Message sequences, the people enrolled in them (by phone number), the messages sent and
-- received, and the tenant's suppression list. Ids are UUIDs (the spec types them as strings).

create table outreach_sequences (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  name text not null,
  status text not null check (status in ('draft', 'active', 'paused', 'archived')),
  steps jsonb not null,
  send_window jsonb,
  timezone text not null,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index outreach_sequences_list on outreach_sequences (tenant_id, mode, created_at desc, id desc);

create table outreach_enrollments (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  sequence_id uuid not null references outreach_sequences (id),
  address text not null,
  display_name text,
  status text not null check (status in ('active', 'completed', 'exited', 'failed')),
  next_position integer,
  next_run_at timestamptz,
  exit_reason text,
  source text not null,
  send_attempts integer not null default 0,
  enrolled_at timestamptz not null,
  last_sent_at timestamptz,
  updated_at timestamptz not null
);
-- At most one active enrollment per person and sequence: a repeat finds the existing one.
create unique index outreach_enrollments_one_active on outreach_enrollments (tenant_id, mode, sequence_id, address) where status = 'active';
create index outreach_enrollments_list on outreach_enrollments (tenant_id, mode, sequence_id, enrolled_at desc, id desc);
create index outreach_enrollments_by_status on outreach_enrollments (tenant_id, mode, sequence_id, status, enrolled_at desc, id desc);
create index outreach_enrollments_by_address on outreach_enrollments (tenant_id, mode, address) where status = 'active';
-- The sweep's read of overdue steps across tenants.
create index outreach_enrollments_due on outreach_enrollments (next_run_at, id) where status = 'active';

create table outreach_messages (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  direction text not null check (direction in ('outbound', 'inbound')),
  sequence_id uuid references outreach_sequences (id),
  enrollment_id uuid references outreach_enrollments (id),
  position integer,
  from_address text,
  to_address text not null,
  body text not null,
  status text not null check (status in ('queued', 'sent', 'delivered', 'failed', 'received')),
  provider text not null,
  provider_message_id text,
  error text,
  attempts integer not null default 0,
  created_at timestamptz not null,
  sent_at timestamptz,
  updated_at timestamptz not null
);
-- Each step of an enrollment is sent at most once, whatever the number of schedulers.
create unique index outreach_messages_one_per_step on outreach_messages (enrollment_id, position) where direction = 'outbound';
create index outreach_messages_list on outreach_messages (tenant_id, mode, created_at desc, id desc);
create index outreach_messages_by_enrollment on outreach_messages (tenant_id, mode, enrollment_id, created_at desc, id desc);
-- A provider id names one message of a tenant and mode: a webhook delivered twice is recorded once.
create unique index outreach_messages_by_provider_id on outreach_messages (tenant_id, mode, provider, provider_message_id) where provider_message_id is not null;

create table outreach_suppressions (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  address text not null,
  reason text not null check (reason in ('opted_out', 'manual')),
  note text,
  created_at timestamptz not null,
  constraint outreach_suppressions_address unique (tenant_id, mode, address)
);
create index outreach_suppressions_list on outreach_suppressions (tenant_id, mode, created_at desc, id desc);
