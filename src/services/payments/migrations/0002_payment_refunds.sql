-- Refunds of paid checkout sessions (Stripe's refunds of a payment intent). A session's
-- amount_refunded_cents is the sum of its refunds (succeeded or still pending at the
-- processor), moved in the transaction that inserts each refund under the session's row lock.
alter table payment_checkout_sessions add column amount_refunded_cents bigint not null default 0;
alter table payment_checkout_sessions add constraint payment_checkout_sessions_refunded_range
  check (amount_refunded_cents >= 0 and amount_refunded_cents <= amount_total_cents);

create table payment_refunds (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  checkout_session_id uuid not null references payment_checkout_sessions (id),
  amount_cents bigint not null check (amount_cents > 0),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  status text not null check (status in ('succeeded', 'pending')),
  reason text check (reason is null or reason in ('duplicate', 'fraudulent', 'requested_by_customer')),
  metadata jsonb not null default '{}',
  payment_intent_id text not null,
  -- The processor's refund id (re_... at Stripe; re_sandbox_... in test mode).
  processor_refund_id text not null,
  -- The session's amount_total_cents, and its amount_refunded_cents just after this refund.
  session_amount_total_cents bigint not null,
  session_amount_refunded_cents bigint not null,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index payment_refunds_list on payment_refunds (tenant_id, mode, created_at desc, id desc);
create index payment_refunds_by_session on payment_refunds (tenant_id, mode, checkout_session_id, created_at desc, id desc);
