-- CRM records that other services (subscriptions, affiliates) point at.

create table crm_companies (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  name text not null,
  domain text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index crm_companies_list on crm_companies (tenant_id, mode, created_at desc, id desc);

create table crm_contacts (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  name text not null,
  email text,
  phone text,
  company_id uuid references crm_companies (id),
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index crm_contacts_list on crm_contacts (tenant_id, mode, created_at desc, id desc);
create index crm_contacts_by_company on crm_contacts (tenant_id, mode, company_id);
