-- Bookable resources, the assets visits are about, and bookings. Resource and asset ids are
-- bigint identities shown as decimal strings (the spec types them as strings but accepts
-- integers for parent_asset_id / customer_id on update).

create table appointments_resources (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  kind text not null,
  name text not null,
  email text,
  phone text,
  timezone text,
  color text not null,
  skills text[] not null default '{}',
  capacity integer not null check (capacity >= 1),
  is_active boolean not null,
  custom_fields jsonb not null default '{}',
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index appointments_resources_list on appointments_resources (tenant_id, mode, created_at desc, id desc);

create table appointments_assets (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  customer_id bigint,
  parent_asset_id bigint references appointments_assets (id),
  kind text not null,
  name text not null,
  identifier text,
  address jsonb,
  custom_fields jsonb not null default '{}',
  is_active boolean not null,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index appointments_assets_list on appointments_assets (tenant_id, mode, created_at desc, id desc);

create table appointments_bookings (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  resource_id bigint not null references appointments_resources (id),
  asset_id bigint references appointments_assets (id),
  customer_id bigint,
  starts_at timestamptz not null,
  ends_at timestamptz not null,
  status text not null check (status in ('pending', 'confirmed', 'cancelled', 'completed', 'no_show')),
  notes text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint appointments_bookings_span check (ends_at > starts_at)
);
create index appointments_bookings_list on appointments_bookings (tenant_id, mode, starts_at desc, id desc);
create index appointments_bookings_by_resource on appointments_bookings (resource_id, starts_at);

-- Working hours of a resource in its time zone: weekly intervals plus per-date overrides.
create table appointments_schedules (
  resource_id bigint primary key references appointments_resources (id) on delete cascade,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  weekly_hours jsonb not null,
  date_overrides jsonb not null,
  updated_at timestamptz not null
);

-- Workspace definitions of the custom_fields resources and assets may carry.
create table appointments_custom_fields (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  applies_to text not null check (applies_to in ('resource', 'asset')),
  key text not null,
  label text not null,
  type text not null check (type in ('text', 'number', 'boolean', 'select')),
  options text[] not null default '{}',
  created_at timestamptz not null,
  constraint appointments_custom_fields_key unique (tenant_id, mode, applies_to, key)
);
create index appointments_custom_fields_list on appointments_custom_fields (tenant_id, mode, created_at desc, id desc);
