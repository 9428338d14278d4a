-- Operators list tenants newest first and find them by their exact name (admin CLI, /admin/v1/tenants).
create index tenants_by_created on tenants (created_at desc, id desc);
create index tenants_by_name on tenants (name);
