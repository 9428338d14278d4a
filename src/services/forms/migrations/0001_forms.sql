-- Forms (definitions looked up by slug) and their submissions.
-- Timestamps are written by the application (its injectable clock) at millisecond precision.

create table forms_forms (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  name text not null,
  slug text not null,
  description text,
  status text not null check (status in ('draft', 'published', 'closed')),
  -- The ordered field definitions, validated by the service before they are written.
  fields jsonb not null default '[]',
  success_message text,
  redirect_url text,
  -- Maintained in the same transaction as every submission insert, read change and delete,
  -- so lists show counts without counting rows.
  submission_count integer not null default 0 check (submission_count >= 0),
  unread_count integer not null default 0 check (unread_count >= 0 and unread_count <= submission_count),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (tenant_id, mode, slug)
);
create index forms_forms_list on forms_forms (tenant_id, mode, created_at desc, id desc);

create table forms_submissions (
  id uuid primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  form_id uuid not null references forms_forms (id) on delete cascade,
  data jsonb not null,
  metadata jsonb not null default '{}',
  read boolean not null default false,
  read_at timestamptz,
  submitted_at timestamptz not null
);
-- Lists (newest first, a backward scan), the CSV export's keyset batches (oldest first) and the cascade.
create index forms_submissions_by_form on forms_submissions (form_id, submitted_at, id);
-- The unread filter of the list without scanning read rows.
create index forms_submissions_unread on forms_submissions (form_id, submitted_at, id) where not read;
