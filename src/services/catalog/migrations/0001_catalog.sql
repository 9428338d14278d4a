-- Subscription products and their prices, discount codes (coupons) and subscriptions.
-- Timestamps are written by the application (its injectable clock) at millisecond precision.
-- Contacts and companies belong to the crm service: subscriptions keep their ids only.

create table catalog_products (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  name text not null,
  description text,
  free_trial_days integer not null check (free_trial_days between 0 and 730),
  active boolean not null,
  -- Null only until the first price is added; always one of the product's own prices.
  default_price_id uuid,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index catalog_products_list on catalog_products (tenant_id, mode, created_at desc, id desc);

create table catalog_prices (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  product_id uuid not null references catalog_products (id),
  unit_price_cents bigint not null check (unit_price_cents between 0 and 10000000000),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  billing_interval text not null check (billing_interval in ('day', 'week', 'month', 'year')),
  interval_count integer not null check (interval_count >= 1),
  created_at timestamptz not null
);
create index catalog_prices_by_product on catalog_prices (tenant_id, mode, product_id, created_at, id);

alter table catalog_products
  add constraint catalog_products_default_price foreign key (default_price_id) references catalog_prices (id);

create table catalog_coupons (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  -- As the merchant wrote it (trimmed); matched case-insensitively through the unique index.
  code text not null,
  description text,
  discount_type text not null check (discount_type in ('percent', 'amount')),
  percent_off numeric(5, 2) check (percent_off between 1 and 100),
  amount_off_cents bigint check (amount_off_cents between 1 and 10000000000),
  currency text check (currency ~ '^[A-Z]{3}$'),
  max_redemptions integer check (max_redemptions >= 1),
  redeemed_count integer not null default 0 check (redeemed_count >= 0),
  starts_at timestamptz,
  expires_at timestamptz,
  active boolean not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint catalog_coupons_discount check (
    (discount_type = 'percent' and percent_off is not null and amount_off_cents is null and currency is null)
    or (discount_type = 'amount' and percent_off is null and amount_off_cents is not null and currency is not null)
  ),
  -- The last line of defence behind the conditional increment of a redemption.
  constraint catalog_coupons_redemptions check (max_redemptions is null or redeemed_count <= max_redemptions),
  constraint catalog_coupons_window check (starts_at is null or expires_at is null or starts_at < expires_at)
);
create unique index catalog_coupons_code on catalog_coupons (tenant_id, mode, lower(code));
create index catalog_coupons_list on catalog_coupons (tenant_id, mode, created_at desc, id desc);

create table catalog_subscriptions (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  product_id uuid not null references catalog_products (id),
  price_id uuid not null references catalog_prices (id),
  contact_id uuid,
  company_id uuid,
  -- The discount as it was when the code was redeemed: retiring the code never changes it.
  coupon_id uuid references catalog_coupons (id),
  coupon_code text,
  discount_type text check (discount_type in ('percent', 'amount')),
  percent_off numeric(5, 2),
  amount_off_cents bigint,
  discount_currency text,
  status text not null check (status in ('trialing', 'active', 'paused', 'canceled')),
  quantity integer not null check (quantity between 1 and 10000),
  -- Copied from the price when the subscription starts.
  unit_price_cents bigint not null check (unit_price_cents >= 0),
  currency text not null,
  billing_interval text not null check (billing_interval in ('day', 'week', 'month', 'year')),
  interval_count integer not null check (interval_count >= 1),
  -- Period ends are counted from here (calendar months keep its day of the month).
  billing_cycle_anchor timestamptz not null,
  current_period_start timestamptz not null,
  current_period_end timestamptz not null,
  cancel_at_period_end boolean not null,
  canceled_at timestamptz,
  trial_end timestamptz,
  pause_resumes_at timestamptz,
  -- When the billing clock next has something to do (null: nothing until someone acts).
  next_event_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint catalog_subscriptions_customer check ((contact_id is null) <> (company_id is null)),
  constraint catalog_subscriptions_canceled check ((status = 'canceled') = (canceled_at is not null)),
  constraint catalog_subscriptions_pause check (status = 'paused' or pause_resumes_at is null)
);
create index catalog_subscriptions_list on catalog_subscriptions (tenant_id, mode, created_at desc, id desc);
create index catalog_subscriptions_by_contact on catalog_subscriptions (tenant_id, mode, contact_id) where contact_id is not null;
create index catalog_subscriptions_by_company on catalog_subscriptions (tenant_id, mode, company_id) where company_id is not null;
create index catalog_subscriptions_by_product on catalog_subscriptions (tenant_id, mode, product_id);
