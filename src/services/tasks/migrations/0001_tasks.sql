-- Tasks: categories with a default grading scheme, tasks (one-time, scheduled, recurring
-- definitions and their occurrences), assignments of tasks to people, submissions, reviews,
-- the event history of each assignment, and links from tasks to records of other services.
-- Ids are bigint identities returned as integers, as the spec types them.

create table tasks_categories (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  name text not null,
  description text,
  grading_scheme text not null check (grading_scheme in ('points', 'percentage', 'letter', 'rubric')),
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index tasks_categories_list on tasks_categories (tenant_id, mode, created_at desc, id desc);

create table tasks_tasks (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  category_id bigint references tasks_categories (id),
  title text not null,
  instructions text,
  priority text not null check (priority in ('low', 'normal', 'high', 'urgent', 'critical')),
  status text not null check (status in ('draft', 'published', 'paused', 'completed', 'cancelled', 'archived')),
  due_at timestamptz,
  schedule_mode text not null check (schedule_mode in ('one_time', 'scheduled', 'recurring')),
  starts_at timestamptz,
  recurrence_rule text,
  recurrence_parent_id bigint references tasks_tasks (id) on delete set null,
  occurrence_at timestamptz,
  submission_mode text not null check (submission_mode in ('none', 'note', 'files', 'note_and_files', 'note_or_files')),
  required_files integer not null check (required_files >= 0),
  allowed_submission_count integer check (allowed_submission_count >= 1),
  allow_late_submission boolean not null,
  grading_scheme text check (grading_scheme in ('points', 'percentage', 'letter', 'rubric')),
  max_score numeric,
  weight numeric not null,
  review_stages integer not null check (review_stages between 0 and 5),
  rubric jsonb not null default '[]',
  checklist jsonb not null default '[]',
  attachments jsonb not null default '[]',
  custom_fields jsonb not null default '{}',
  source text not null,
  template_id bigint,
  assignment_count integer not null default 0,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index tasks_tasks_list on tasks_tasks (tenant_id, mode, created_at desc, id desc);
create index tasks_tasks_by_category on tasks_tasks (category_id);
-- Each occurrence of a recurring task exists once, however often the generating job runs.
create unique index tasks_tasks_occurrence on tasks_tasks (recurrence_parent_id, occurrence_at) where recurrence_parent_id is not null;

create table tasks_assignments (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  task_id bigint not null references tasks_tasks (id) on delete cascade,
  assignee_user_id bigint not null,
  assigned_by bigint not null,
  group_id bigint,
  delegated_by bigint,
  delegation_reason text,
  status text not null check (status in ('assigned', 'in_progress', 'submitted', 'returned', 'completed', 'rejected', 'cancelled')),
  due_at timestamptz not null,
  original_due_at timestamptz not null,
  checklist_state jsonb not null default '[]',
  custom_fields jsonb not null default '{}',
  score numeric,
  attempt_count integer not null default 0,
  started_at timestamptz,
  submitted_at timestamptz,
  completed_at timestamptz,
  reopened_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index tasks_assignments_list on tasks_assignments (tenant_id, mode, created_at desc, id desc);
create index tasks_assignments_by_assignee on tasks_assignments (tenant_id, mode, assignee_user_id, created_at desc, id desc);
create index tasks_assignments_by_task on tasks_assignments (task_id);

create table tasks_submissions (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  assignment_id bigint not null references tasks_assignments (id) on delete cascade,
  attempt_no integer not null,
  note text,
  files jsonb not null default '[]',
  custom_fields jsonb not null default '{}',
  is_late boolean not null,
  submitted_at timestamptz not null,
  constraint tasks_submissions_attempt unique (assignment_id, attempt_no)
);

create table tasks_reviews (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  submission_id bigint not null references tasks_submissions (id) on delete cascade,
  reviewer_id bigint not null,
  stage integer not null,
  decision text not null check (decision in ('approved', 'changes_requested', 'rejected')),
  feedback text,
  score numeric,
  grade text,
  rubric_scores jsonb not null default '[]',
  created_at timestamptz not null,
  constraint tasks_reviews_stage unique (submission_id, stage)
);

create table tasks_events (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  assignment_id bigint not null references tasks_assignments (id) on delete cascade,
  event_type text not null,
  from_user_id bigint,
  to_user_id bigint,
  from_value text,
  to_value text,
  changed_by bigint not null,
  reason text,
  created_at timestamptz not null
);
create index tasks_events_by_assignment on tasks_events (assignment_id, id);

create table tasks_links (
  id bigint generated always as identity primary key,
  tenant_id uuid not null,
  mode text not null check (mode in ('test', 'live')),
  task_id bigint not null references tasks_tasks (id) on delete cascade,
  source text not null check (source in ('invoicing', 'my-leads', 'appointments', 'forms', 'smart-chat')),
  source_id text not null,
  label text,
  url text,
  created_at timestamptz not null,
  constraint tasks_links_once unique (task_id, source, source_id)
);
create index tasks_links_by_task on tasks_links (task_id, id);
