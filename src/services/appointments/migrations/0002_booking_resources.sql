-- A booking may hold several resources at once (a technician and a van; a room and its
-- projector). `resource_id` stays the first of them; `resource_ids` lists them all, the
-- first one first. Capacity is counted per resource over every booking that holds it.
alter table appointments_bookings add column resource_ids bigint[];
update appointments_bookings set resource_ids = array[resource_id];
alter table appointments_bookings alter column resource_ids set not null;
alter table appointments_bookings add constraint appointments_bookings_first_resource check (resource_ids[1] = resource_id);
create index appointments_bookings_by_resources on appointments_bookings using gin (resource_ids);
