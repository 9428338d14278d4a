import { assertFresh } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { invalidField, notFound } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import * as repository from './repository.js';
import type { AppointmentsDb, DateOverride, ResourceRow, ScheduleRow, WeeklyHours } from './repository.js';
import { MAX_SLOTS, type AvailabilityInput, type AvailabilityView, type PutScheduleInput, type ScheduleView } from './schemas.js';
import { addDays, localDate, localIso, minutesOf, weekday, zonedInstant } from '../../lib/zones.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_WINDOW_DAYS = 31;
/** How far ahead availability answers: the issue asks for at least 12 months. */
const MAX_AHEAD_DAYS = 2 * 366;
/** Resources considered per availability request. */
const MAX_RESOURCES = 50;

/** Working hours (weekly plus per-date overrides) and the free slots they leave. */
export function createAvailabilityRules(tables: AppointmentsDb, events: EventLog) {
  return {
    async getSchedule(ctx: RequestContext, resourceId: string): Promise<ScheduleView> {
      const resource = await repository.findResource(tables, ctx, resourceId);
      if (!resource) throw notFound('Resource');
      return presentSchedule(resource, await repository.findSchedule(tables, ctx, resourceId));
    },

    /** Replaces the schedule as a whole; `expected_updated_at` is not taken: the body is the whole state. */
    async putSchedule(ctx: RequestContext, resourceId: string, input: PutScheduleInput & { expected_updated_at?: string }): Promise<ScheduleView> {
      const schedule = checkSchedule(input);
      return tables.transaction().execute(async (tx) => {
        const resource = await repository.findResource(tx, ctx, resourceId, { forUpdate: true });
        if (!resource) throw notFound('Resource');
        const current = await repository.findSchedule(tx, ctx, resourceId);
        if (current) assertFresh(input.expected_updated_at, current.updated_at);
        const saved: ScheduleRow = { ...schedule, updated_at: current && current.updated_at.getTime() >= ctx.now.getTime() ? new Date(current.updated_at.getTime() + 1) : ctx.now };
        await repository.saveSchedule(tx, ctx, resourceId, saved);
        const view = presentSchedule(resource, saved);
        await events.record(tx, ctx, 'appointments.schedule.updated', view);
        return view;
      });
    },

    async availability(ctx: RequestContext, input: AvailabilityInput): Promise<AvailabilityView> {
      const from = Date.parse(input.from);
      const to = Date.parse(input.to);
      if (Number.isNaN(from)) throw invalidField('from', 'invalid', 'Not a valid instant.');
      if (Number.isNaN(to) || to <= from) throw invalidField('to', 'invalid', 'to must be after from.');
      if (to - from > MAX_WINDOW_DAYS * DAY_MS) throw invalidField('to', 'too_long', `At most ${MAX_WINDOW_DAYS} days per request.`);
      if (from > ctx.now.getTime() + MAX_AHEAD_DAYS * DAY_MS) throw invalidField('from', 'too_far', 'Availability answers up to two years ahead.');
      const skills = (input.skills ?? '')
        .split(',')
        .map((skill) => skill.trim())
        .filter((skill) => skill !== '');
      const resources = await repository.matchingResources(tables, ctx, { resourceId: input.resource_id, kind: input.kind, skills }, MAX_RESOURCES);
      const ids = resources.map((resource) => resource.id);
      const [schedules, bookings] = await Promise.all([
        repository.findSchedules(tables, ctx, ids),
        repository.activeBookingsBetween(tables, ctx, ids, new Date(from), new Date(to)),
      ]);
      const duration = input.duration_minutes * 60000;
      const earliest = Math.max(from, ctx.now.getTime());
      const slots: AvailabilityView['slots'] = [];
      for (const resource of resources) {
        const schedule = schedules.get(resource.id);
        if (!schedule) continue;
        const zone = resource.timezone ?? 'UTC';
        const taken = bookings.filter((booking) => booking.resource_ids.includes(resource.id)).map((booking) => [booking.starts_at.getTime(), booking.ends_at.getTime()] as const);
        for (const [windowStart, windowEnd] of workingWindows(schedule, zone, from, to)) {
          for (let start = windowStart; start + duration <= windowEnd; start += duration) {
            const end = start + duration;
            if (start < earliest || end > to) continue;
            const overlapping = taken.filter(([bookedStart, bookedEnd]) => bookedStart < end && bookedEnd > start).length;
            if (overlapping >= resource.capacity) continue;
            slots.push({
              resource_id: resource.id,
              starts_at: new Date(start).toISOString(),
              ends_at: new Date(end).toISOString(),
              local_starts_at: localIso(start, zone),
              local_ends_at: localIso(end, zone),
              timezone: zone,
              remaining_capacity: resource.capacity - overlapping,
            });
          }
        }
      }
      slots.sort((a, b) => (a.starts_at < b.starts_at ? -1 : a.starts_at > b.starts_at ? 1 : Number(BigInt(a.resource_id) - BigInt(b.resource_id))));
      return {
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        duration_minutes: input.duration_minutes,
        slots: slots.slice(0, MAX_SLOTS),
        truncated: slots.length > MAX_SLOTS,
      };
    },
  };
}

/** The working intervals (UTC instants) of the local dates that touch [from, to). */
function workingWindows(schedule: ScheduleRow, zone: string, from: number, to: number): [number, number][] {
  const overrides = new Map(schedule.date_overrides.map((override) => [override.date, override.hours]));
  const windows: [number, number][] = [];
  const last = addDays(localDate(to, zone), 1);
  for (let date = addDays(localDate(from, zone), -1); date <= last; date = addDays(date, 1)) {
    const hours = overrides.get(date) ?? schedule.weekly_hours.filter((interval) => interval.day === weekday(date));
    for (const interval of hours) {
      const start = zonedInstant(date, minutesOf(interval.start), zone);
      const end = zonedInstant(date, minutesOf(interval.end), zone);
      if (end > start && end > from && start < to) windows.push([start, end]);
    }
  }
  return windows;
}

function checkSchedule(input: PutScheduleInput): { weekly_hours: WeeklyHours[]; date_overrides: DateOverride[] } {
  input.weekly_hours.forEach((interval, index) => {
    if (minutesOf(interval.end) <= minutesOf(interval.start)) throw invalidField(`weekly_hours/${index}/end`, 'invalid', 'end must be after start.');
  });
  const dates = new Set<string>();
  const overrides = input.date_overrides ?? [];
  overrides.forEach((override, index) => {
    if (Number.isNaN(Date.parse(`${override.date}T00:00:00Z`))) throw invalidField(`date_overrides/${index}/date`, 'invalid', 'Not a calendar date.');
    if (dates.has(override.date)) throw invalidField(`date_overrides/${index}/date`, 'duplicate', 'One override per date.');
    dates.add(override.date);
    override.hours.forEach((interval, inner) => {
      if (minutesOf(interval.end) <= minutesOf(interval.start)) throw invalidField(`date_overrides/${index}/hours/${inner}/end`, 'invalid', 'end must be after start.');
    });
  });
  return { weekly_hours: input.weekly_hours, date_overrides: overrides };
}

function presentSchedule(resource: ResourceRow, schedule: ScheduleRow | undefined): ScheduleView {
  return {
    resource_id: resource.id,
    timezone: resource.timezone ?? 'UTC',
    weekly_hours: (schedule?.weekly_hours ?? []) as ScheduleView['weekly_hours'],
    date_overrides: schedule?.date_overrides ?? [],
    updated_at: schedule ? schedule.updated_at.toISOString() : null,
  };
}
