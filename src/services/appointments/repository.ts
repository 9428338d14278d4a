import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { ownedTables, type OwnedInsert, type OwnedRow, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { containsPattern } from '../../lib/search.js';
import type { AppointmentsBookingsTable, AppointmentsCustomFieldsTable, AppointmentsResourcesTable, AppointmentsTables, BookingStatus } from './tables.js';

export type AppointmentsDb = Kysely<AppointmentsTables>;

export function appointmentsDb(db: Db): AppointmentsDb {
  return serviceDb(db);
}

const owned = ownedTables<AppointmentsTables>();
const resources = owned('appointments_resources');
const assets = owned('appointments_assets');
const bookings = owned('appointments_bookings');

type Raw = string | number | bigint;
/** Ids as decimal strings: node-postgres reads bigint as text, the embedded database as a number. */
const id = (value: Raw): string => String(value);
const maybeId = (value: Raw | null): string | null => (value === null ? null : String(value));
/** jsonb arrives parsed from both drivers; text only if a driver ever hands it over unparsed. */
const json = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

// Resources

const RESOURCE_COLUMNS = ['id', 'kind', 'name', 'email', 'phone', 'timezone', 'color', 'skills', 'capacity', 'is_active', 'custom_fields', 'created_at', 'updated_at'] as const;

export interface ResourceRow {
  id: string;
  kind: string;
  name: string;
  email: string | null;
  phone: string | null;
  timezone: string | null;
  color: string;
  skills: string[];
  capacity: number;
  is_active: boolean;
  custom_fields: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

type RawResource = Omit<ResourceRow, 'id' | 'custom_fields'> & { id: Raw; custom_fields: unknown };

function toResource(row: RawResource): ResourceRow {
  return { ...row, id: id(row.id), custom_fields: json(row.custom_fields) as Record<string, unknown> };
}

export type NewResource = Omit<OwnedInsert<AppointmentsResourcesTable>, 'custom_fields'> & { custom_fields: Record<string, unknown> };

function resourceValues<T extends { custom_fields?: Record<string, unknown> }>(row: T) {
  const { custom_fields, ...rest } = row;
  return { ...rest, ...(custom_fields !== undefined ? { custom_fields: JSON.stringify(custom_fields) } : {}) };
}

export async function insertResource(db: AppointmentsDb, owner: Owner, row: NewResource): Promise<ResourceRow> {
  return toResource(
    await resources
      .insert(db, owner, resourceValues(row) as never)
      .returning(RESOURCE_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}

const resourceById = resources.statement((from, values: { id: string }) => from.select(RESOURCE_COLUMNS).where('id', '=', values.id));
const resourceByIdForUpdate = resources.statement((from, values: { id: string }) => from.select(RESOURCE_COLUMNS).where('id', '=', values.id).forUpdate());

export async function findResource(db: AppointmentsDb, owner: Owner, resourceId: string, options: { forUpdate?: boolean } = {}): Promise<ResourceRow | undefined> {
  const row = await (options.forUpdate ? resourceByIdForUpdate : resourceById).first(db, owner, { id: resourceId });
  return row && toResource(row);
}

const resourceList = resources.list<{ kind?: string; skill?: string; isActive?: boolean; pattern?: string }, RawResource>({
  filters: {
    kind: (eb, kind) => eb('kind', '=', kind),
    skill: (eb, skill) => eb('skills', '@>', sql<string[]>`array[${skill}]::text[]`),
    isActive: (eb, isActive) => eb('is_active', '=', isActive),
    pattern: (eb, pattern) => eb.or([eb('name', 'ilike', pattern), eb('email', 'ilike', pattern)]),
  },
  select: (from) => from.select(RESOURCE_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listResources(db: AppointmentsDb, owner: Owner, filters: { kind?: string; skill?: string; isActive?: boolean; search?: string }, page: PageRequest) {
  const { rows, total } = await resourceList.page(
    db,
    owner,
    { kind: filters.kind, skill: filters.skill, isActive: filters.isActive, pattern: filters.search ? containsPattern(filters.search) : undefined },
    page,
  );
  return { rows: rows.map(toResource), total };
}

export async function updateResource(db: AppointmentsDb, owner: Owner, resourceId: string, changes: Partial<NewResource>): Promise<ResourceRow> {
  const row = await resources
    .update(db, owner)
    .set(resourceValues(changes) as never)
    .where('id', '=', resourceId)
    .returning(RESOURCE_COLUMNS)
    .executeTakeFirstOrThrow();
  return toResource(row);
}

export async function deleteResource(db: AppointmentsDb, owner: Owner, resourceId: string): Promise<void> {
  await resources.delete(db, owner).where('id', '=', resourceId).execute();
}

// Assets

const ASSET_COLUMNS = ['id', 'customer_id', 'parent_asset_id', 'kind', 'name', 'identifier', 'address', 'custom_fields', 'is_active', 'created_at', 'updated_at'] as const;

export interface AssetRow {
  id: string;
  customer_id: string | null;
  parent_asset_id: string | null;
  kind: string;
  name: string;
  identifier: string | null;
  address: Record<string, unknown> | null;
  custom_fields: Record<string, unknown>;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

type RawAsset = Omit<AssetRow, 'id' | 'customer_id' | 'parent_asset_id' | 'address' | 'custom_fields'> & {
  id: Raw;
  customer_id: Raw | null;
  parent_asset_id: Raw | null;
  address: unknown;
  custom_fields: unknown;
};

function toAsset(row: RawAsset): AssetRow {
  return {
    ...row,
    id: id(row.id),
    customer_id: maybeId(row.customer_id),
    parent_asset_id: maybeId(row.parent_asset_id),
    address: (json(row.address) ?? null) as Record<string, unknown> | null,
    custom_fields: json(row.custom_fields) as Record<string, unknown>,
  };
}

export interface NewAsset {
  customer_id: string | null;
  parent_asset_id: string | null;
  kind: string;
  name: string;
  identifier: string | null;
  address: Record<string, unknown> | null;
  custom_fields: Record<string, unknown>;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

function assetValues(row: Partial<NewAsset>) {
  const { address, custom_fields, ...rest } = row;
  return {
    ...rest,
    ...(address !== undefined ? { address: address === null ? null : JSON.stringify(address) } : {}),
    ...(custom_fields !== undefined ? { custom_fields: JSON.stringify(custom_fields) } : {}),
  };
}

export async function insertAsset(db: AppointmentsDb, owner: Owner, row: NewAsset): Promise<AssetRow> {
  return toAsset(
    await assets
      .insert(db, owner, assetValues(row) as never)
      .returning(ASSET_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}

const assetById = assets.statement((from, values: { id: string }) => from.select(ASSET_COLUMNS).where('id', '=', values.id));
const assetByIdForUpdate = assets.statement((from, values: { id: string }) => from.select(ASSET_COLUMNS).where('id', '=', values.id).forUpdate());

export async function findAsset(db: AppointmentsDb, owner: Owner, assetId: string, options: { forUpdate?: boolean } = {}): Promise<AssetRow | undefined> {
  const row = await (options.forUpdate ? assetByIdForUpdate : assetById).first(db, owner, { id: assetId });
  return row && toAsset(row);
}

/** The chain of ancestors of `assetId` (itself first), to refuse cycles; bounded by `limit`. */
export async function assetAncestors(db: AppointmentsDb, owner: Owner, assetId: string, limit = 1000): Promise<string[]> {
  const chain: string[] = [];
  let current: string | null = assetId;
  while (current !== null && chain.length < limit) {
    chain.push(current);
    const row = await assetById.first(db, owner, { id: current });
    current = row ? maybeId(row.parent_asset_id) : null;
  }
  return chain;
}

const assetList = assets.list<{ kind?: string; customerId?: string; parentAssetId?: string }, RawAsset>({
  filters: {
    kind: (eb, kind) => eb('kind', '=', kind),
    customerId: (eb, customerId) => eb('customer_id', '=', customerId),
    parentAssetId: (eb, parentAssetId) => eb('parent_asset_id', '=', parentAssetId),
  },
  select: (from) => from.select(ASSET_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listAssets(db: AppointmentsDb, owner: Owner, filters: { kind?: string; customerId?: string; parentAssetId?: string }, page: PageRequest) {
  const { rows, total } = await assetList.page(db, owner, filters, page);
  return { rows: rows.map(toAsset), total };
}

export async function updateAsset(db: AppointmentsDb, owner: Owner, assetId: string, changes: Partial<NewAsset>): Promise<AssetRow> {
  const row = await assets
    .update(db, owner)
    .set(assetValues(changes) as never)
    .where('id', '=', assetId)
    .returning(ASSET_COLUMNS)
    .executeTakeFirstOrThrow();
  return toAsset(row);
}

export async function assetHasChildren(db: AppointmentsDb, owner: Owner, assetId: string): Promise<boolean> {
  const row = await assets.select(db, owner).select('id').where('parent_asset_id', '=', assetId).limit(1).executeTakeFirst();
  return row !== undefined;
}

export async function deleteAsset(db: AppointmentsDb, owner: Owner, assetId: string): Promise<void> {
  await assets.delete(db, owner).where('id', '=', assetId).execute();
}

// Bookings

const BOOKING_COLUMNS = ['id', 'resource_id', 'resource_ids', 'asset_id', 'customer_id', 'starts_at', 'ends_at', 'status', 'notes', 'created_at', 'updated_at'] as const;

export interface BookingRow {
  id: string;
  resource_id: string;
  resource_ids: string[];
  asset_id: string | null;
  customer_id: string | null;
  starts_at: Date;
  ends_at: Date;
  status: BookingStatus;
  notes: string | null;
  created_at: Date;
  updated_at: Date;
}

type RawBooking = Omit<BookingRow, 'resource_id' | 'resource_ids' | 'asset_id' | 'customer_id'> & {
  resource_id: Raw;
  resource_ids: Raw[];
  asset_id: Raw | null;
  customer_id: Raw | null;
};

function toBooking(row: RawBooking): BookingRow {
  return { ...row, resource_id: id(row.resource_id), resource_ids: row.resource_ids.map(id), asset_id: maybeId(row.asset_id), customer_id: maybeId(row.customer_id) };
}

export type NewBooking = Omit<OwnedInsert<AppointmentsBookingsTable>, 'resource_id' | 'resource_ids' | 'asset_id' | 'customer_id'> & {
  resource_id: string;
  resource_ids: string[];
  asset_id: string | null;
  customer_id: string | null;
};

export async function insertBooking(db: AppointmentsDb, owner: Owner, row: NewBooking): Promise<BookingRow> {
  return toBooking(await bookings.insert(db, owner, row).returning(BOOKING_COLUMNS).executeTakeFirstOrThrow());
}

const bookingById = bookings.statement((from, values: { id: string }) => from.select(BOOKING_COLUMNS).where('id', '=', values.id));
const bookingByIdForUpdate = bookings.statement((from, values: { id: string }) => from.select(BOOKING_COLUMNS).where('id', '=', values.id).forUpdate());

export async function findBooking(db: AppointmentsDb, owner: Owner, bookingId: string, options: { forUpdate?: boolean } = {}): Promise<BookingRow | undefined> {
  const row = await (options.forUpdate ? bookingByIdForUpdate : bookingById).first(db, owner, { id: bookingId });
  return row && toBooking(row);
}

/** A booking holds `resourceId` (as its first resource or another). */
const holds = (resourceId: string) => sql<boolean>`resource_ids @> array[${resourceId}]::bigint[]`;

/** Bookings that hold a place (not cancelled) on `resourceId` overlapping [startsAt, endsAt), other than `exceptId`. */
export async function countOverlapping(db: AppointmentsDb, owner: Owner, resourceId: string, startsAt: Date, endsAt: Date, exceptId?: string): Promise<number> {
  let query = bookings
    .select(db, owner)
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where(holds(resourceId))
    .where('status', '<>', 'cancelled')
    .where('starts_at', '<', endsAt)
    .where('ends_at', '>', startsAt);
  if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Bookings holding a place on any of `resourceIds` overlapping [from, to). */
export async function activeBookingsBetween(db: AppointmentsDb, owner: Owner, resourceIds: string[], from: Date, to: Date): Promise<BookingRow[]> {
  if (resourceIds.length === 0) return [];
  const rows = await bookings
    .select(db, owner)
    .select(BOOKING_COLUMNS)
    .where(sql<boolean>`resource_ids && ${resourceIds}::bigint[]`)
    .where('status', '<>', 'cancelled')
    .where('starts_at', '<', to)
    .where('ends_at', '>', from)
    .execute();
  return rows.map((row) => toBooking(row as RawBooking));
}

export async function resourceHasBookings(db: AppointmentsDb, owner: Owner, resourceId: string): Promise<boolean> {
  return (await bookings.select(db, owner).select('id').where(holds(resourceId)).limit(1).executeTakeFirst()) !== undefined;
}

export async function assetHasBookings(db: AppointmentsDb, owner: Owner, assetId: string): Promise<boolean> {
  return (await bookings.select(db, owner).select('id').where('asset_id', '=', assetId).limit(1).executeTakeFirst()) !== undefined;
}

const bookingList = bookings.list<{ resourceId?: string; assetId?: string; status?: BookingStatus; from?: Date; to?: Date }, RawBooking>({
  filters: {
    resourceId: (_eb, resourceId) => holds(resourceId),
    assetId: (eb, assetId) => eb('asset_id', '=', assetId),
    status: (eb, status) => eb('status', '=', status),
    from: (eb, from) => eb('ends_at', '>', from),
    to: (eb, to) => eb('starts_at', '<', to),
  },
  select: (from) => from.select(BOOKING_COLUMNS).orderBy('starts_at', 'desc').orderBy('id', 'desc'),
});

export async function listBookings(
  db: AppointmentsDb,
  owner: Owner,
  filters: { resourceId?: string; assetId?: string; status?: BookingStatus; from?: Date; to?: Date },
  page: PageRequest,
) {
  const { rows, total } = await bookingList.page(db, owner, filters, page);
  return { rows: rows.map(toBooking), total };
}

export async function updateBooking(db: AppointmentsDb, owner: Owner, bookingId: string, changes: Partial<NewBooking>): Promise<BookingRow> {
  const row = await bookings.update(db, owner).set(changes).where('id', '=', bookingId).returning(BOOKING_COLUMNS).executeTakeFirstOrThrow();
  return toBooking(row);
}

// Schedules

const schedules = owned('appointments_schedules');

export interface ScheduleRow {
  weekly_hours: WeeklyHours[];
  date_overrides: DateOverride[];
  updated_at: Date;
}
export interface WeeklyHours {
  day: string;
  start: string;
  end: string;
}
export interface DateOverride {
  date: string;
  hours: { start: string; end: string }[];
}

const scheduleByResource = schedules.statement((from, values: { id: string }) =>
  from.select(['weekly_hours', 'date_overrides', 'updated_at']).where('resource_id', '=', values.id),
);

export async function findSchedule(db: AppointmentsDb, owner: Owner, resourceId: string): Promise<ScheduleRow | undefined> {
  const row = await scheduleByResource.first(db, owner, { id: resourceId });
  return row && { weekly_hours: json(row.weekly_hours) as WeeklyHours[], date_overrides: json(row.date_overrides) as DateOverride[], updated_at: row.updated_at };
}

export async function findSchedules(db: AppointmentsDb, owner: Owner, resourceIds: string[]): Promise<Map<string, ScheduleRow>> {
  if (resourceIds.length === 0) return new Map();
  const rows = await schedules.select(db, owner).select(['resource_id', 'weekly_hours', 'date_overrides', 'updated_at']).where('resource_id', 'in', resourceIds).execute();
  return new Map(
    rows.map((row) => [
      id(row.resource_id),
      { weekly_hours: json(row.weekly_hours) as WeeklyHours[], date_overrides: json(row.date_overrides) as DateOverride[], updated_at: row.updated_at },
    ]),
  );
}

export async function saveSchedule(db: AppointmentsDb, owner: Owner, resourceId: string, schedule: ScheduleRow): Promise<void> {
  await schedules.delete(db, owner).where('resource_id', '=', resourceId).execute();
  await schedules
    .insert(db, owner, {
      resource_id: resourceId,
      weekly_hours: JSON.stringify(schedule.weekly_hours),
      date_overrides: JSON.stringify(schedule.date_overrides),
      updated_at: schedule.updated_at,
    })
    .execute();
}

/** Active resources matching the availability filters, oldest first, at most `limit`. */
export async function matchingResources(
  db: AppointmentsDb,
  owner: Owner,
  filters: { resourceId?: string; kind?: string; skills: string[] },
  limit: number,
): Promise<ResourceRow[]> {
  let query = resources.select(db, owner).select(RESOURCE_COLUMNS).where('is_active', '=', true);
  if (filters.resourceId !== undefined) query = query.where('id', '=', filters.resourceId);
  if (filters.kind !== undefined) query = query.where('kind', '=', filters.kind);
  if (filters.skills.length > 0) query = query.where('skills', '@>', sql<string[]>`${sql.val(filters.skills)}::text[]`);
  const rows = await query.orderBy('id', 'asc').limit(limit).execute();
  return rows.map((row) => toResource(row as RawResource));
}

// Custom field definitions

const customFields = owned('appointments_custom_fields');
const FIELD_COLUMNS = ['id', 'applies_to', 'key', 'label', 'type', 'options', 'created_at'] as const;
export type CustomFieldRow = OwnedRow<AppointmentsCustomFieldsTable>;

export async function insertCustomField(db: AppointmentsDb, owner: Owner, row: OwnedInsert<AppointmentsCustomFieldsTable>): Promise<CustomFieldRow | undefined> {
  return customFields
    .insert(db, owner, row)
    .onConflict((conflict) => conflict.constraint('appointments_custom_fields_key').doNothing())
    .returning(FIELD_COLUMNS)
    .executeTakeFirst();
}

const fieldsFor = customFields.statement((from, values: { appliesTo: string }) => from.select(FIELD_COLUMNS).where('applies_to', '=', values.appliesTo as 'resource'));

export function customFieldsFor(db: AppointmentsDb, owner: Owner, appliesTo: 'resource' | 'asset'): Promise<CustomFieldRow[]> {
  return fieldsFor.all(db, owner, { appliesTo });
}

const fieldList = customFields.list<{ appliesTo?: 'resource' | 'asset' }, CustomFieldRow>({
  filters: { appliesTo: (eb, appliesTo) => eb('applies_to', '=', appliesTo) },
  select: (from) => from.select(FIELD_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listCustomFields(db: AppointmentsDb, owner: Owner, filters: { appliesTo?: 'resource' | 'asset' }, page: PageRequest) {
  return fieldList.page(db, owner, filters, page);
}

export async function deleteCustomField(db: AppointmentsDb, owner: Owner, fieldId: string): Promise<boolean> {
  const result = await customFields.delete(db, owner).where('id', '=', fieldId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
