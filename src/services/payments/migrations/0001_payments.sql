-- Payments: reusable payment links and hosted checkout sessions (one-off payments).
-- Amounts are integers in minor units of the currency; line items are kept as a JSON
-- snapshot, so a link edited later never changes the sessions it already started.

create table payment_links (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  name text not null,
  line_items jsonb not null,
  -- Set only for links created with amount_cents + description (one line named by it).
  description text,
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  amount_total_cents bigint not null check (amount_total_cents > 0),
  active boolean not null,
  allow_quantity boolean not null,
  max_uses integer check (max_uses is null or max_uses >= 1),
  -- Completed payments, plus payments being processed right now (reserved before charging).
  use_count integer not null default 0 check (use_count >= 0),
  after_completion_url text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index payment_links_list on payment_links (tenant_id, mode, created_at desc, id desc);

create table payment_checkout_sessions (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  status text not null check (status in ('open', 'complete', 'expired')),
  payment_status text not null check (payment_status in ('unpaid', 'paid')),
  line_items jsonb not null,
  description text,
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  amount_total_cents bigint not null check (amount_total_cents > 0),
  success_url text,
  cancel_url text,
  customer_email text,
  metadata jsonb not null default '{}',
  payment_link_id uuid references payment_links (id),
  expires_at timestamptz not null,
  completed_at timestamptz,
  -- A payment attempt holds the session until this time (no second charge in parallel).
  processing_until timestamptz,
  payment_intent_id text,
  card_brand text,
  card_last4 text check (card_last4 is null or card_last4 ~ '^[0-9]{4}$'),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  check ((status = 'complete') = (payment_status = 'paid')),
  check ((status = 'complete') = (completed_at is not null))
);
create index payment_checkout_sessions_list on payment_checkout_sessions (tenant_id, mode, created_at desc, id desc);
create index payment_checkout_sessions_by_link on payment_checkout_sessions (tenant_id, mode, payment_link_id, created_at desc, id desc)
  where payment_link_id is not null;
