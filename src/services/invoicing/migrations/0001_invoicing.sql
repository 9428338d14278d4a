-- Invoicing: customers, invoices with line items, payments, refunds and refund approvals.
-- Money is integer minor units (bigint `*_minor`, two decimals); quantities, unit prices
-- and tax rates are exact numerics. Ids are bigint identities, as the spec types them.

create table invoicing_customers (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  display_name text not null,
  email text,
  phone text,
  billing_address_line1 text,
  billing_city text,
  billing_postal_code text,
  billing_country text check (billing_country ~ '^[A-Z]{2}$'),
  tax_id text,
  default_payment_terms_days integer not null check (default_payment_terms_days between 0 and 365),
  default_currency text not null check (default_currency ~ '^[A-Z]{3}$'),
  notes text,
  is_active boolean not null default true,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index invoicing_customers_list on invoicing_customers (tenant_id, mode, created_at desc, id desc);

-- One row per tenant and mode: the last invoice number handed out. Incremented in the
-- transaction that inserts the invoice, so numbers are sequential and never reused.
create table invoicing_invoice_counters (
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  last_number bigint not null check (last_number > 0),
  primary key (tenant_id, mode)
);

create table invoicing_invoices (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  number text not null,
  customer_id bigint not null references invoicing_customers (id),
  status text not null check (status in ('draft', 'open', 'partially_paid', 'paid', 'void')),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  issue_date date not null,
  due_date date not null,
  notes text,
  subtotal_minor bigint not null check (subtotal_minor >= 0),
  tax_total_minor bigint not null check (tax_total_minor >= 0),
  total_minor bigint not null,
  amount_paid_minor bigint not null default 0,
  amount_refunded_minor bigint not null default 0,
  finalized_at timestamptz,
  paid_at timestamptz,
  voided_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint invoicing_invoices_number unique (tenant_id, mode, number),
  constraint invoicing_invoices_dates check (due_date >= issue_date),
  constraint invoicing_invoices_total check (total_minor = subtotal_minor + tax_total_minor),
  constraint invoicing_invoices_paid check (amount_paid_minor >= 0 and amount_paid_minor <= total_minor),
  constraint invoicing_invoices_refunded check (amount_refunded_minor >= 0 and amount_refunded_minor <= amount_paid_minor)
);
create index invoicing_invoices_list on invoicing_invoices (tenant_id, mode, created_at desc, id desc);
create index invoicing_invoices_by_customer on invoicing_invoices (tenant_id, mode, customer_id);
create index invoicing_invoices_by_status on invoicing_invoices (tenant_id, mode, status);

create table invoicing_line_items (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  invoice_id bigint not null references invoicing_invoices (id) on delete cascade,
  position integer not null,
  description text not null,
  quantity numeric(20, 4) not null check (quantity > 0),
  unit_price numeric(20, 4) not null check (unit_price >= 0),
  tax_rate numeric(7, 4) check (tax_rate >= 0 and tax_rate <= 100),
  subtotal_minor bigint not null check (subtotal_minor >= 0),
  tax_minor bigint not null check (tax_minor >= 0),
  constraint invoicing_line_items_position unique (invoice_id, position)
);

create table invoicing_payments (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  invoice_id bigint not null references invoicing_invoices (id),
  amount_minor bigint not null check (amount_minor > 0),
  -- Succeeded refunds, and refunds waiting for approval (reserved so two cannot overdraw).
  refunded_minor bigint not null default 0,
  reserved_minor bigint not null default 0,
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  method text not null,
  reference text,
  paid_at timestamptz not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint invoicing_payments_refundable check (refunded_minor >= 0 and reserved_minor >= 0 and refunded_minor + reserved_minor <= amount_minor)
);
create index invoicing_payments_by_invoice on invoicing_payments (tenant_id, mode, invoice_id, id);

create table invoicing_approval_policies (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  action text not null check (action in ('refund')),
  min_amount_minor bigint not null check (min_amount_minor >= 0),
  currency text check (currency ~ '^[A-Z]{3}$'),
  created_at timestamptz not null
);
create index invoicing_approval_policies_list on invoicing_approval_policies (tenant_id, mode, created_at desc, id desc);

create table invoicing_approvals (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  action text not null check (action in ('refund')),
  status text not null check (status in ('pending', 'approved', 'rejected')),
  -- The policy that matched; kept as a plain value so deleting the policy keeps the history.
  policy_id bigint,
  invoice_id bigint not null references invoicing_invoices (id),
  customer_payment_id bigint not null references invoicing_payments (id),
  amount_minor bigint not null check (amount_minor > 0),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  method text not null,
  reason text,
  requested_by_key_id uuid not null,
  decided_by_key_id uuid,
  decided_at timestamptz,
  decision_note text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint invoicing_approvals_decided check ((status = 'pending') = (decided_at is null))
);
create index invoicing_approvals_list on invoicing_approvals (tenant_id, mode, created_at desc, id desc);

create table invoicing_refunds (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  invoice_id bigint not null references invoicing_invoices (id),
  customer_payment_id bigint not null references invoicing_payments (id),
  amount_minor bigint not null check (amount_minor > 0),
  status text not null check (status in ('succeeded')),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  method text not null,
  reason text,
  -- An approval creates at most one refund, whatever races or retries happen.
  approval_id bigint references invoicing_approvals (id),
  created_at timestamptz not null,
  constraint invoicing_refunds_approval unique (approval_id)
);
create index invoicing_refunds_list on invoicing_refunds (tenant_id, mode, created_at desc, id desc);
create index invoicing_refunds_by_payment on invoicing_refunds (tenant_id, mode, customer_payment_id);
