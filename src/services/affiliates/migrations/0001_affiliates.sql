-- Referral programmes with their tiers, partners (affiliates), referrals (clicks and attributed
-- customers) and conversions with their commission. Ids are UUIDs. A partner's running totals
-- are columns of its row, changed only by atomic `x = x + n` updates in the transaction that
-- writes the conversion or moves its commission.

create table affiliates_programmes (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  name text not null,
  commission_type text not null check (commission_type in ('percent', 'amount')),
  commission_percent numeric(5, 2),
  commission_amount_cents bigint,
  currency text not null,
  cookie_days integer not null check (cookie_days >= 0),
  recurring_months integer not null,
  landing_url text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index affiliates_programmes_list on affiliates_programmes (tenant_id, mode, created_at desc, id desc);

create table affiliates_tiers (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  programme_id uuid not null references affiliates_programmes (id),
  name text not null,
  commission_type text not null check (commission_type in ('percent', 'amount')),
  commission_percent numeric(5, 2),
  commission_amount_cents bigint,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index affiliates_tiers_list on affiliates_tiers (programme_id, created_at desc, id desc);

create table affiliates_partners (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  contact_id uuid,
  name text not null,
  email text,
  code text not null,
  -- The partner's own rate; null when it follows its tier or programme.
  commission_type text check (commission_type in ('percent', 'amount')),
  commission_percent numeric(5, 2),
  commission_amount_cents bigint,
  currency text not null,
  status text not null check (status in ('active', 'paused')),
  programme_id uuid references affiliates_programmes (id),
  tier_id uuid references affiliates_tiers (id),
  cookie_days integer check (cookie_days >= 0),
  recurring_months integer,
  portal_enabled boolean not null,
  notes text,
  lifetime_revenue_cents bigint not null default 0,
  lifetime_commission_cents bigint not null default 0,
  click_count bigint not null default 0,
  conversion_count bigint not null default 0,
  earned_pending_cents bigint not null default 0,
  earned_approved_cents bigint not null default 0,
  earned_paid_cents bigint not null default 0,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint affiliates_partners_code unique (tenant_id, mode, code)
);
create index affiliates_partners_list on affiliates_partners (tenant_id, mode, created_at desc, id desc);
create index affiliates_partners_code_lookup on affiliates_partners (code);

create table affiliates_referrals (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  affiliate_id uuid not null references affiliates_partners (id),
  source text not null check (source in ('link', 'api')),
  visitor_id text,
  contact_id uuid,
  email text,
  customer_ref text,
  clicked_at timestamptz,
  expires_at timestamptz,
  attributed_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index affiliates_referrals_list on affiliates_referrals (tenant_id, mode, created_at desc, id desc);
create index affiliates_referrals_contact on affiliates_referrals (tenant_id, mode, contact_id, attributed_at desc) where contact_id is not null;

create table affiliates_conversions (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  affiliate_id uuid not null references affiliates_partners (id),
  referral_id uuid references affiliates_referrals (id),
  source text not null check (source in ('api', 'payments', 'catalog')),
  external_id text,
  subscription_id text,
  period integer,
  amount_cents bigint not null,
  currency text not null,
  commission_cents bigint not null,
  status text not null check (status in ('pending', 'approved', 'paid', 'voided')),
  void_reason text,
  approved_at timestamptz,
  paid_at timestamptz,
  voided_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index affiliates_conversions_list on affiliates_conversions (tenant_id, mode, created_at desc, id desc);
-- Exactly once per outside sale id / platform payment, and per billing period of a subscription.
create unique index affiliates_conversions_external on affiliates_conversions (tenant_id, mode, source, external_id) where external_id is not null;
create unique index affiliates_conversions_period on affiliates_conversions (tenant_id, mode, subscription_id, period) where subscription_id is not null;

-- Platform events (sales of payments and catalog) already handled by the sales reader: each
-- once. The newest event_created_at is where the next read starts (less a look-back).
create table affiliates_seen_events (
  event_id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  event_created_at timestamptz not null,
  seen_at timestamptz not null
);
create index affiliates_seen_events_by_time on affiliates_seen_events (event_created_at);
