-- End users of a tenant, and everything that proves who they are.
-- Secrets are never stored in the clear: passwords as scrypt hashes, tokens and recovery
-- codes as SHA-256 hashes, TOTP secrets encrypted with AES-256-GCM (SECRETS_KEY).
-- Timestamps are written by the application (its injectable clock) at millisecond precision.

create table customer_auth_users (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  email text not null,
  name text,
  profile_picture_url text,
  status text not null check (status in ('active', 'disabled')),
  email_verified_at timestamptz,
  -- scrypt$N$r$p$salt$hash (base64), or null for an account without a password.
  password_hash text,
  mfa_enabled boolean not null default false,
  mfa_enabled_at timestamptz,
  -- Encrypted TOTP secrets: the confirmed one, and one waiting for its first code.
  totp_secret text,
  totp_pending_secret text,
  -- RFC 6238 5.2: the last accepted time step; codes for it or earlier are refused.
  totp_last_step integer,
  last_login_at timestamptz,
  metadata jsonb not null default '{}'::jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint customer_auth_users_mfa check (mfa_enabled = (totp_secret is not null))
);
create unique index customer_auth_users_email on customer_auth_users (tenant_id, mode, lower(email));
create index customer_auth_users_list on customer_auth_users (tenant_id, mode, created_at desc, id desc);

-- Login sessions; the token itself is only ever in the reply that created it.
create table customer_auth_sessions (
  jti uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  user_id uuid not null references customer_auth_users (id) on delete cascade,
  token_hash text not null,
  issued_at timestamptz not null,
  expires_at timestamptz not null,
  last_used_at timestamptz
);
create unique index customer_auth_sessions_token on customer_auth_sessions (token_hash);
create index customer_auth_sessions_user on customer_auth_sessions (tenant_id, mode, user_id, issued_at desc);
create index customer_auth_sessions_expiry on customer_auth_sessions (expires_at);

-- MFA login challenges: issued after a correct password, 5 minutes, single use, 5 wrong codes.
create table customer_auth_challenges (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  user_id uuid not null references customer_auth_users (id) on delete cascade,
  token_hash text not null,
  failed_attempts integer not null default 0,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null
);
create unique index customer_auth_challenges_token on customer_auth_challenges (token_hash);
create index customer_auth_challenges_user on customer_auth_challenges (tenant_id, mode, user_id);
create index customer_auth_challenges_expiry on customer_auth_challenges (expires_at);

-- Email verification tokens, bound to the address they were issued for.
create table customer_auth_email_verifications (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  user_id uuid not null references customer_auth_users (id) on delete cascade,
  email text not null,
  token_hash text not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null
);
create unique index customer_auth_email_verifications_token on customer_auth_email_verifications (token_hash);
create index customer_auth_email_verifications_user on customer_auth_email_verifications (tenant_id, mode, user_id);
create index customer_auth_email_verifications_expiry on customer_auth_email_verifications (expires_at);

-- Recovery codes (SHA-256 of the normalised code), each usable once.
create table customer_auth_recovery_codes (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  user_id uuid not null references customer_auth_users (id) on delete cascade,
  code_hash text not null,
  used_at timestamptz,
  created_at timestamptz not null
);
create unique index customer_auth_recovery_codes_code on customer_auth_recovery_codes (tenant_id, mode, user_id, code_hash);

-- Failed sign-in attempts (wrong password, wrong MFA code) per address, whether or not an
-- account has it, so locking out reveals nothing about which addresses exist.
create table customer_auth_login_failures (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  -- SHA-256 of the lower-cased address: no copy of addresses typed by strangers.
  email_key text not null,
  failed_at timestamptz not null
);
create index customer_auth_login_failures_key on customer_auth_login_failures (tenant_id, mode, email_key, failed_at);
create index customer_auth_login_failures_time on customer_auth_login_failures (failed_at);
