import type { Db } from '../../db/database.js';
import type { PageRequest } from '../../db/paging.js';
import { newId } from '../../lib/ids.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import { isInt64Id } from '../../platform/http/schemas.js';
import { isTimeZone } from '../../lib/zones.js';
import type { ServiceRegistry } from '../registry.js';
import { createAvailabilityRules } from './availability.js';
import { checkCustomFields, createCustomFieldRules } from './custom-fields.js';
import * as repository from './repository.js';
import type { AppointmentsDb, AssetRow, BookingRow, NewAsset, NewResource, ResourceRow } from './repository.js';
import type {
  AssetView,
  BookingView,
  CreateAssetInput,
  CreateBookingInput,
  CreateResourceInput,
  ResourceView,
  UpdateAssetInput,
  UpdateBookingInput,
  UpdateResourceInput,
} from './schemas.js';
import type { BookingStatus } from './tables.js';

export const DEFAULT_COLOR = '#3b82f6';
export const DEFAULT_KIND = 'staff';
/** The longest booking: a week. */
const MAX_BOOKING_MS = 7 * 24 * 60 * 60 * 1000;

/** Status changes a booking may make; cancelled, completed and no_show are final. */
const NEXT_STATUSES: Record<BookingStatus, readonly BookingStatus[]> = {
  pending: ['confirmed', 'cancelled', 'completed', 'no_show'],
  confirmed: ['cancelled', 'completed', 'no_show'],
  cancelled: [],
  completed: [],
  no_show: [],
};

interface AppointmentsDeps {
  db: Db;
  events: EventLog;
  services: ServiceRegistry;
}

/**
 * Bookable resources (staff, rooms, equipment...), the assets visits are about and bookings.
 * A resource holds at most `capacity` overlapping bookings that are not cancelled: every
 * booking write locks the resource row first, then counts, in one transaction.
 */
export function createAppointmentsService({ db, events, services }: AppointmentsDeps) {
  const tables = repository.appointmentsDb(db);

  /** The 400 when `customerId` names no invoicing customer of the caller's tenant and mode. Runs outside any transaction of ours. */
  async function requireCustomer(ctx: RequestContext, path: string, customerId: string | null): Promise<void> {
    if (customerId === null) return;
    const found = await services.get('invoicing').customersById(ctx, [customerId]);
    if (!found.has(customerId)) throw invalidField(path, 'not_found', 'No invoicing customer with this id.');
  }

  async function requireAsset(tx: AppointmentsDb, ctx: RequestContext, path: string, assetId: string | null): Promise<AssetRow | undefined> {
    if (assetId === null) return undefined;
    const asset = isInt64Id(assetId) ? await repository.findAsset(tx, ctx, assetId) : undefined;
    if (!asset) throw invalidField(path, 'not_found', 'No asset with this id.');
    return asset;
  }

  return {
    ...createAvailabilityRules(tables, events),
    ...createCustomFieldRules(tables),

    // Resources

    async createResource(ctx: RequestContext, input: CreateResourceInput): Promise<ResourceView> {
      const fields = resourceFields(input);
      await checkCustomFields(tables, ctx, 'resource', input.custom_fields);
      return tables.transaction().execute(async (tx) => {
        const row = await repository.insertResource(tx, ctx, {
          kind: fields.kind ?? DEFAULT_KIND,
          name: fields.name,
          email: fields.email ?? null,
          phone: fields.phone ?? null,
          timezone: fields.timezone ?? null,
          color: fields.color ?? DEFAULT_COLOR,
          skills: fields.skills ?? [],
          capacity: fields.capacity ?? 1,
          is_active: fields.is_active ?? true,
          custom_fields: fields.custom_fields ?? {},
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        const view = presentResource(row);
        await events.record(tx, ctx, 'appointments.resource.created', view);
        return view;
      });
    },

    async getResource(ctx: RequestContext, id: string): Promise<ResourceView> {
      const row = await repository.findResource(tables, ctx, id);
      if (!row) throw notFound('Resource');
      return presentResource(row);
    },

    async listResources(ctx: RequestContext, filters: { kind?: string; skill?: string; is_active?: 'true' | 'false'; search?: string }, page: PageRequest) {
      const { rows, total } = await repository.listResources(
        tables,
        ctx,
        {
          kind: filters.kind,
          skill: filters.skill?.trim(),
          isActive: filters.is_active === undefined ? undefined : filters.is_active === 'true',
          search: filters.search,
        },
        page,
      );
      return { rows: rows.map(presentResource), total };
    },

    async updateResource(ctx: RequestContext, id: string, input: UpdateResourceInput): Promise<ResourceView> {
      const fields = resourceFields(input);
      await checkCustomFields(tables, ctx, 'resource', input.custom_fields);
      return tables.transaction().execute(async (tx) => {
        const current = await repository.findResource(tx, ctx, id, { forUpdate: true });
        if (!current) throw notFound('Resource');
        assertFresh(input.expected_updated_at, current.updated_at);
        const changes: Partial<NewResource> = { updated_at: nextUpdatedAt(current.updated_at, ctx.now) };
        for (const [key, value] of Object.entries(fields)) if (value !== undefined) (changes as Record<string, unknown>)[key] = value;
        const view = presentResource(await repository.updateResource(tx, ctx, id, changes));
        await events.record(tx, ctx, 'appointments.resource.updated', view);
        return view;
      });
    },

    async deleteResource(ctx: RequestContext, id: string): Promise<{ id: string; deleted: true }> {
      return tables.transaction().execute(async (tx) => {
        const current = await repository.findResource(tx, ctx, id, { forUpdate: true });
        if (!current) throw notFound('Resource');
        if (await repository.resourceHasBookings(tx, ctx, id)) {
          throw new AppError('resource_in_use', 'The resource has bookings; set is_active to false instead.');
        }
        await repository.deleteResource(tx, ctx, id);
        await events.record(tx, ctx, 'appointments.resource.deleted', presentResource(current));
        return { id, deleted: true as const };
      });
    },

    // Assets

    async createAsset(ctx: RequestContext, input: CreateAssetInput): Promise<AssetView> {
      const customerId = idOf(input.customer_id);
      const parentId = idOf(input.parent_asset_id);
      await requireCustomer(ctx, 'customer_id', customerId ?? null);
      await checkCustomFields(tables, ctx, 'asset', input.custom_fields);
      return tables.transaction().execute(async (tx) => {
        await requireAsset(tx, ctx, 'parent_asset_id', parentId ?? null);
        const row = await repository.insertAsset(tx, ctx, {
          customer_id: customerId ?? null,
          parent_asset_id: parentId ?? null,
          kind: input.kind,
          name: input.name.trim(),
          identifier: cleanText(input.identifier) ?? null,
          address: input.address === undefined || input.address === null ? null : cleanAddress(input.address),
          custom_fields: input.custom_fields ?? {},
          is_active: input.is_active ?? true,
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        const view = presentAsset(row);
        await events.record(tx, ctx, 'appointments.asset.created', view);
        return view;
      });
    },

    async getAsset(ctx: RequestContext, id: string): Promise<AssetView> {
      const row = await repository.findAsset(tables, ctx, id);
      if (!row) throw notFound('Asset');
      return presentAsset(row);
    },

    async listAssets(ctx: RequestContext, filters: { kind?: string; customer_id?: string; parent_asset_id?: string }, page: PageRequest) {
      const { rows, total } = await repository.listAssets(tables, ctx, { kind: filters.kind, customerId: filters.customer_id, parentAssetId: filters.parent_asset_id }, page);
      return { rows: rows.map(presentAsset), total };
    },

    async updateAsset(ctx: RequestContext, id: string, input: UpdateAssetInput): Promise<AssetView> {
      const customerId = idOf(input.customer_id);
      const parentId = idOf(input.parent_asset_id);
      if (customerId !== undefined) await requireCustomer(ctx, 'customer_id', customerId);
      await checkCustomFields(tables, ctx, 'asset', input.custom_fields);
      return tables.transaction().execute(async (tx) => {
        const current = await repository.findAsset(tx, ctx, id, { forUpdate: true });
        if (!current) throw notFound('Asset');
        assertFresh(input.expected_updated_at, current.updated_at);
        if (parentId !== undefined && parentId !== null) {
          await requireAsset(tx, ctx, 'parent_asset_id', parentId);
          const ancestors = await repository.assetAncestors(tx, ctx, parentId);
          if (ancestors.includes(id)) throw invalidField('parent_asset_id', 'cycle', 'An asset cannot be inside itself or one of the assets it contains.');
        }
        const changes: Partial<NewAsset> = {
          name: input.name.trim(),
          kind: input.kind,
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
          ...(customerId !== undefined ? { customer_id: customerId } : {}),
          ...(parentId !== undefined ? { parent_asset_id: parentId } : {}),
          ...(input.identifier !== undefined ? { identifier: cleanText(input.identifier) ?? null } : {}),
          ...(input.address !== undefined ? { address: input.address === null ? null : cleanAddress(input.address) } : {}),
          ...(input.custom_fields !== undefined ? { custom_fields: input.custom_fields } : {}),
          ...(input.is_active !== undefined ? { is_active: input.is_active } : {}),
        };
        const view = presentAsset(await repository.updateAsset(tx, ctx, id, changes));
        await events.record(tx, ctx, 'appointments.asset.updated', view);
        return view;
      });
    },

    async deleteAsset(ctx: RequestContext, id: string): Promise<{ id: string; deleted: true }> {
      return tables.transaction().execute(async (tx) => {
        const current = await repository.findAsset(tx, ctx, id, { forUpdate: true });
        if (!current) throw notFound('Asset');
        if (await repository.assetHasChildren(tx, ctx, id)) throw new AppError('asset_in_use', 'The asset contains other assets; move or delete them first.');
        if (await repository.assetHasBookings(tx, ctx, id)) throw new AppError('asset_in_use', 'The asset has bookings; set is_active to false instead.');
        await repository.deleteAsset(tx, ctx, id);
        await events.record(tx, ctx, 'appointments.asset.deleted', presentAsset(current));
        return { id, deleted: true as const };
      });
    },

    // Bookings

    async createBooking(ctx: RequestContext, input: CreateBookingInput): Promise<BookingView> {
      const resourceIds = bookedResourceIds(input);
      const assetId = idOf(input.asset_id) ?? null;
      const customerId = idOf(input.customer_id) ?? null;
      const { startsAt, endsAt } = readSpan(input.starts_at, input.ends_at);
      await requireCustomer(ctx, 'customer_id', customerId);
      return tables.transaction().execute(async (tx) => {
        // The resource row locks serialise every booking write of these resources.
        const resources = await lockResources(tx, ctx, resourceIds);
        for (const [index, resource] of resourceIds.map((resourceId) => resources.get(resourceId)).entries()) {
          const path = input.resource_ids !== undefined ? `resource_ids[${input.resource_ids.findIndex((sent) => String(sent) === resourceIds[index])}]` : 'resource_id';
          if (!resource) throw invalidField(path, 'not_found', 'No resource with this id.');
          if (!resource.is_active) throw invalidField(path, 'inactive', 'The resource is inactive and takes no new bookings.');
        }
        const asset = await requireAsset(tx, ctx, 'asset_id', assetId);
        if (asset && !asset.is_active) throw invalidField('asset_id', 'inactive', 'The asset is inactive and takes no new bookings.');
        for (const resource of resources.values()) await requirePlace(tx, ctx, resource, startsAt, endsAt);
        const row = await repository.insertBooking(tx, ctx, {
          id: newId(),
          resource_id: resourceIds[0]!,
          resource_ids: resourceIds,
          asset_id: assetId,
          customer_id: customerId,
          starts_at: startsAt,
          ends_at: endsAt,
          status: input.status ?? 'confirmed',
          notes: cleanText(input.notes) ?? null,
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        const view = presentBooking(row);
        await events.record(tx, ctx, 'appointments.booking.created', view);
        return view;
      });
    },

    async getBooking(ctx: RequestContext, id: string): Promise<BookingView> {
      const row = await repository.findBooking(tables, ctx, id);
      if (!row) throw notFound('Booking');
      return presentBooking(row);
    },

    async listBookings(ctx: RequestContext, filters: { resource_id?: string; asset_id?: string; status?: BookingStatus; from?: string; to?: string }, page: PageRequest) {
      const { rows, total } = await repository.listBookings(
        tables,
        ctx,
        {
          resourceId: filters.resource_id,
          assetId: filters.asset_id,
          status: filters.status,
          from: filters.from !== undefined ? new Date(filters.from) : undefined,
          to: filters.to !== undefined ? new Date(filters.to) : undefined,
        },
        page,
      );
      return { rows: rows.map(presentBooking), total };
    },

    /** Reschedule (new starts_at and ends_at), change status (cancel, confirm, complete, no_show) or notes. */
    async updateBooking(ctx: RequestContext, id: string, input: UpdateBookingInput): Promise<BookingView> {
      const found = await repository.findBooking(tables, ctx, id);
      if (!found) throw notFound('Booking');
      if ((input.starts_at === undefined) !== (input.ends_at === undefined)) {
        throw invalidField(input.starts_at === undefined ? 'starts_at' : 'ends_at', 'required', 'Send starts_at and ends_at together to reschedule.');
      }
      const span = input.starts_at !== undefined && input.ends_at !== undefined ? readSpan(input.starts_at, input.ends_at) : undefined;
      return tables.transaction().execute(async (tx) => {
        // Lock order: the resources by id, then the booking (as createBooking).
        const resources = await lockResources(tx, ctx, found.resource_ids);
        const current = await repository.findBooking(tx, ctx, id, { forUpdate: true });
        if (!current || resources.size !== found.resource_ids.length) throw notFound('Booking');
        assertFresh(input.expected_updated_at, current.updated_at);
        const status = input.status ?? current.status;
        if (status !== current.status && !NEXT_STATUSES[current.status].includes(status)) {
          throw new AppError('invalid_status_transition', `A ${current.status} booking cannot become ${status}.`);
        }
        const moved = span !== undefined && (span.startsAt.getTime() !== current.starts_at.getTime() || span.endsAt.getTime() !== current.ends_at.getTime());
        if (moved && !['pending', 'confirmed'].includes(current.status)) {
          throw new AppError('invalid_status_transition', `A ${current.status} booking cannot be rescheduled.`);
        }
        if (moved && status !== 'cancelled') for (const resource of resources.values()) await requirePlace(tx, ctx, resource, span.startsAt, span.endsAt, id);
        const row = await repository.updateBooking(tx, ctx, id, {
          updated_at: nextUpdatedAt(current.updated_at, ctx.now),
          ...(moved ? { starts_at: span.startsAt, ends_at: span.endsAt } : {}),
          ...(status !== current.status ? { status } : {}),
          ...(input.notes !== undefined ? { notes: cleanText(input.notes) ?? null } : {}),
        });
        const view = presentBooking(row);
        if (moved) await events.record(tx, ctx, 'appointments.booking.rescheduled', view);
        if (status !== current.status) await events.record(tx, ctx, status === 'cancelled' ? 'appointments.booking.cancelled' : 'appointments.booking.status_changed', view);
        return view;
      });
    },
  };
}

export type AppointmentsService = ReturnType<typeof createAppointmentsService>;

/**
 * The resources a booking asks for, main one first, without repeats: `resource_id`, or the
 * first of `resource_ids`, then the rest of `resource_ids` in the order sent.
 */
function bookedResourceIds(input: CreateBookingInput): string[] {
  const main = idOf(input.resource_id);
  const listed = (input.resource_ids ?? []).map(String);
  if (main === undefined && listed.length === 0) throw invalidField('resource_id', 'required', 'Send resource_id or resource_ids.');
  const repeated = listed.findIndex((resourceId, index) => listed.indexOf(resourceId) !== index);
  if (repeated >= 0) throw invalidField(`resource_ids[${repeated}]`, 'duplicate', 'Each resource is listed once.');
  if (main === undefined || main === null) return listed;
  if (listed.length > 0 && !listed.includes(main)) throw invalidField('resource_ids', 'invalid', 'resource_ids must contain resource_id when both are sent.');
  return [main, ...listed.filter((resourceId) => resourceId !== main)];
}

/** Row locks on the resources in ascending id order (one lock order for every booking write, so two never wait on each other). */
async function lockResources(tx: AppointmentsDb, ctx: RequestContext, resourceIds: readonly string[]): Promise<Map<string, ResourceRow>> {
  const locked = new Map<string, ResourceRow>();
  const byId = [...resourceIds].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  for (const resourceId of byId) {
    const resource = await repository.findResource(tx, ctx, resourceId, { forUpdate: true });
    if (resource) locked.set(resourceId, resource);
  }
  return locked;
}

/** The 409 when the resource already holds `capacity` bookings overlapping the span; the caller holds the resource row lock. */
async function requirePlace(tx: AppointmentsDb, ctx: RequestContext, resource: ResourceRow, startsAt: Date, endsAt: Date, exceptId?: string): Promise<void> {
  const overlapping = await repository.countOverlapping(tx, ctx, resource.id, startsAt, endsAt, exceptId);
  if (overlapping >= resource.capacity) {
    throw new AppError('slot_unavailable', `The resource is fully booked for this time (capacity ${resource.capacity}).`, [
      { path: 'starts_at', code: 'unavailable', message: 'Overlaps existing bookings up to the resource capacity.' },
    ]);
  }
}

function readSpan(startsAtText: string, endsAtText: string): { startsAt: Date; endsAt: Date } {
  const startsAt = new Date(startsAtText);
  const endsAt = new Date(endsAtText);
  if (Number.isNaN(startsAt.getTime())) throw invalidField('starts_at', 'invalid', 'Not a valid instant.');
  if (Number.isNaN(endsAt.getTime())) throw invalidField('ends_at', 'invalid', 'Not a valid instant.');
  if (endsAt.getTime() <= startsAt.getTime()) throw invalidField('ends_at', 'invalid', 'ends_at must be after starts_at.');
  if (endsAt.getTime() - startsAt.getTime() > MAX_BOOKING_MS) throw invalidField('ends_at', 'too_long', 'A booking lasts at most 7 days.');
  return { startsAt, endsAt };
}

/** An id sent as a decimal string or an integer, as the decimal string. */
function idOf(value: string | number | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  return String(value);
}

function cleanText(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

function cleanAddress(address: NonNullable<CreateAssetInput['address']>): Record<string, unknown> {
  return {
    line1: cleanText(address.line1) ?? null,
    line2: cleanText(address.line2) ?? null,
    city: cleanText(address.city) ?? null,
    region: cleanText(address.region) ?? null,
    postal_code: cleanText(address.postal_code) ?? null,
    country: address.country ? address.country.toUpperCase() : null,
    latitude: address.latitude ?? null,
    longitude: address.longitude ?? null,
  };
}

/** The checked, normalised fields of a resource create or update (undefined: not sent). */
function resourceFields(input: CreateResourceInput | UpdateResourceInput) {
  if (input.timezone !== undefined && input.timezone !== null && !isTimeZone(input.timezone)) {
    throw invalidField('timezone', 'invalid', 'Not a zone of the IANA time zone database.');
  }
  if (input.phone !== undefined && input.phone !== null) {
    const digits = input.phone.replace(/[^0-9]/g, '').length;
    if (digits < 7 || digits > 15) throw invalidField('phone', 'invalid', 'An international number has 7 to 15 digits after the +.');
  }
  return {
    name: input.name.trim(),
    kind: input.kind,
    email: input.email === undefined ? undefined : (input.email?.toLowerCase() ?? null),
    phone: input.phone === undefined ? undefined : (input.phone?.trim() ?? null),
    timezone: input.timezone,
    color: input.color?.toLowerCase(),
    skills: input.skills === undefined ? undefined : [...new Set(input.skills.map((skill) => skill.trim()))],
    capacity: input.capacity,
    is_active: input.is_active,
    custom_fields: input.custom_fields,
  };
}

function presentResource(row: ResourceRow): ResourceView {
  return row as ResourceView;
}

function presentAsset(row: AssetRow): AssetView {
  return row as AssetView;
}

function presentBooking(row: BookingRow): BookingView {
  return row;
}
