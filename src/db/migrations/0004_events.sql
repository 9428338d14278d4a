-- The platform's event log: one row per change a service reports, written in the same
-- transaction as the change (a transactional outbox). Kept 30 days.

create table events (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  type text not null,
  created_at timestamptz not null,
  -- The resource as its GET returns it, serialised once when the event is recorded.
  object_json text not null,
  -- Set once the event's deliveries are created (events that go to one endpoint only are born dispatched).
  dispatched boolean not null default false
);
create index events_list on events (tenant_id, mode, created_at desc, id desc);
create index events_by_type on events (tenant_id, mode, type, created_at desc, id desc);
create index events_to_dispatch on events (created_at, id) where not dispatched;
create index events_by_age on events (created_at);
