import { Type, type Static } from 'typebox';
import { ExpectedUpdatedAt } from '../../platform/concurrency.js';
import { Nullable, Timestamp, TimestampField, Uuid } from '../../platform/http/schemas.js';
import { ListQuery } from '../../platform/pagination/index.js';
import { BOOKING_STATUSES } from './tables.js';

const NumericId = (description: string) => Type.String({ pattern: '^[1-9][0-9]{0,18}$', maxLength: 19, description, examples: ['42'] });
/** An id sent by a client: the decimal string the API returns, or the same number as an integer. */
const IdInput = (description: string) =>
  Type.Union([Type.String({ pattern: '^[1-9][0-9]{0,18}$', maxLength: 19 }), Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER })], {
    description: `${description} A decimal string or an integer.`,
    examples: ['42', 42],
  });

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name; trimmed.', examples: ['Dr Ada Lovelace'] });
const Kind = Type.String({
  minLength: 1,
  maxLength: 50,
  pattern: '^[a-z0-9_]+$',
  description: 'staff, contractor, room, equipment, vehicle, team, or any own word: lower-case letters, digits, underscores.',
  examples: ['staff'],
});
const Email = Type.String({ format: 'email', maxLength: 320, description: 'Stored lower-cased.', examples: ['ada@example.com'] });
const Phone = Type.String({
  minLength: 8,
  maxLength: 40,
  pattern: '^\\+[1-9][0-9 ().-]*[0-9]$',
  description: 'International format: + and the country code, then digits with optional spaces, dots, dashes and brackets; 8 to 15 digits in all.',
  examples: ['+44 20 7946 0958'],
});
const TimeZone = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'A zone of the IANA time zone database, canonical or link (UTC, Europe/London, Asia/Calcutta).',
  examples: ['Europe/London'],
});
const Color = Type.String({ pattern: '^#[0-9a-fA-F]{6}$', maxLength: 7, description: 'Calendar colour #rrggbb, either case; returned lower-case.', examples: ['#3b82f6'] });
const Skill = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'A skill used for matching; trimmed.', examples: ['plumbing'] });
const Skills = Type.Array(Skill, { maxItems: 50, description: 'Skills used for matching; duplicates are dropped.', examples: [['plumbing', 'gas']] });
const Capacity = Type.Integer({ format: 'int32', minimum: 1, maximum: 10000, description: '1 is one-to-one; above 1 enables group booking.', examples: [1] });
const CustomFieldValue = Type.Union([Type.String({ maxLength: 2000 }), Type.Number(), Type.Boolean(), Type.Null()]);
const CustomFields = Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]{0,62}$', maxLength: 63 }), CustomFieldValue, {
  maxProperties: 50,
  description: 'Own fields keyed by a lower-case name: string, number, boolean or null values.',
  examples: [{ licence_no: 'GAS-1234' }],
});

export const Resource = Type.Object(
  {
    id: NumericId('Resource id.'),
    kind: Type.String({ maxLength: 50, description: 'Kind of resource.', examples: ['staff'] }),
    name: Type.String({ maxLength: 200, description: 'Display name.', examples: ['Dr Ada Lovelace'] }),
    email: Nullable(Type.String({ maxLength: 320, description: 'Email.', examples: ['ada@example.com'] })),
    phone: Nullable(Type.String({ maxLength: 40, description: 'International format.', examples: ['+44 20 7946 0958'] })),
    timezone: Nullable(Type.String({ maxLength: 64, description: 'IANA time zone; null reads as UTC.', examples: ['Europe/London'] })),
    color: Type.String({ maxLength: 7, description: 'Calendar colour, lower-case #rrggbb.', examples: ['#3b82f6'] }),
    skills: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50, description: 'Skills used for matching.', examples: [['plumbing']] }),
    capacity: Type.Integer({ format: 'int32', minimum: 1, maximum: 10000, description: 'Overlapping bookings allowed.', examples: [1] }),
    is_active: Type.Boolean({ description: 'Inactive resources take no new bookings.', examples: [true] }),
    custom_fields: Type.Record(Type.String({ maxLength: 63 }), CustomFieldValue, { description: 'Own fields.', examples: [{ licence_no: 'GAS-1234' }] }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'AppointmentsResource', additionalProperties: false },
);

export const CreateResourceBody = Type.Object(
  {
    name: Name,
    kind: Type.Optional(
      Type.String({ ...Kind, description: 'staff, contractor, room, equipment, vehicle, team, or any own word: lower-case letters, digits, underscores. Default staff.' }),
    ),
    email: Type.Optional(Nullable(Email)),
    phone: Type.Optional(Nullable(Phone)),
    timezone: Type.Optional(Nullable(TimeZone)),
    color: Type.Optional(Color),
    skills: Type.Optional(Skills),
    capacity: Type.Optional(Type.Integer({ ...Capacity, description: '1 is one-to-one; above 1 enables group booking. Default 1.' })),
    is_active: Type.Optional(Type.Boolean({ description: 'Default true.', examples: [true] })),
    custom_fields: Type.Optional(CustomFields),
  },
  { additionalProperties: false, examples: [{ name: 'Dr Ada Lovelace', kind: 'staff', timezone: 'Europe/London', skills: ['checkup'] }] },
);

export const UpdateResourceBody = Type.Object(
  {
    name: Name,
    kind: Type.Optional(Kind),
    email: Type.Optional(Nullable(Email)),
    phone: Type.Optional(Nullable(Phone)),
    timezone: Type.Optional(Nullable(TimeZone)),
    color: Type.Optional(Color),
    skills: Type.Optional(Skills),
    capacity: Type.Optional(Capacity),
    is_active: Type.Optional(Type.Boolean({ description: 'Inactive resources take no new bookings.', examples: [false] })),
    custom_fields: Type.Optional(CustomFields),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ name: 'Dr Ada Lovelace', capacity: 2 }] },
);

const BoolText = Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true or false.', examples: ['true'] });

export const ListResourcesQuery = ListQuery({
  kind: Type.Optional(Type.String({ maxLength: 50, description: 'Only this kind.', examples: ['staff'] })),
  skill: Type.Optional(Type.String({ maxLength: 100, description: 'Only resources with this skill.', examples: ['plumbing'] })),
  is_active: Type.Optional(BoolText),
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive match anywhere in name or email.', examples: ['ada'] })),
});

const AddressText = (maxLength: number, example: string) => Type.String({ maxLength, description: 'Trimmed; empty reads as absent.', examples: [example] });

export const Address = Type.Object(
  {
    line1: Type.Optional(Nullable(AddressText(200, '1 Main Street'))),
    line2: Type.Optional(Nullable(AddressText(200, 'Flat 2'))),
    city: Type.Optional(Nullable(AddressText(100, 'London'))),
    region: Type.Optional(Nullable(AddressText(100, 'Greater London'))),
    postal_code: Type.Optional(Nullable(AddressText(20, 'SW1A 1AA'))),
    country: Type.Optional(Nullable(Type.String({ pattern: '^[A-Za-z]{2}$', maxLength: 2, description: 'ISO 3166-1 alpha-2; stored upper-case.', examples: ['GB'] }))),
    latitude: Type.Optional(Nullable(Type.Number({ minimum: -90, maximum: 90, description: 'Degrees.', examples: [51.5] }))),
    longitude: Type.Optional(Nullable(Type.Number({ minimum: -180, maximum: 180, description: 'Degrees.', examples: [-0.12] }))),
  },
  { title: 'AppointmentsAddress', additionalProperties: false, description: 'Street address and optional coordinates.' },
);

export const Asset = Type.Object(
  {
    id: NumericId('Asset id.'),
    customer_id: Nullable(NumericId('Invoicing customer the asset belongs to.')),
    parent_asset_id: Nullable(NumericId('The asset containing this one.')),
    kind: Type.String({ maxLength: 50, description: 'Own category word.', examples: ['property'] }),
    name: Type.String({ maxLength: 200, description: 'Display name.', examples: ['Main building'] }),
    identifier: Nullable(Type.String({ maxLength: 200, description: 'Registration, serial or reference.', examples: ['AB12 CDE'] })),
    address: Nullable(Address),
    custom_fields: Type.Record(Type.String({ maxLength: 63 }), CustomFieldValue, { description: 'Own fields.', examples: [{ floors: 3 }] }),
    is_active: Type.Boolean({ description: 'Inactive assets take no new bookings.', examples: [true] }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'AppointmentsAsset', additionalProperties: false },
);

const AssetKind = Type.String({ ...Kind, description: 'Own category word (vehicle, property, machine, animal): lower-case letters, digits, underscores.', examples: ['property'] });
const Identifier = Type.String({ minLength: 1, maxLength: 200, description: 'Registration, serial or reference; trimmed.', examples: ['AB12 CDE'] });

const assetFields = {
  customer_id: Type.Optional(Nullable(IdInput('An invoicing customer of the same tenant and mode.'))),
  parent_asset_id: Type.Optional(Nullable(IdInput('An asset of the same tenant and mode containing this one; no cycles.'))),
  identifier: Type.Optional(Nullable(Identifier)),
  address: Type.Optional(Nullable(Address)),
  custom_fields: Type.Optional(CustomFields),
  is_active: Type.Optional(Type.Boolean({ description: 'Default true on create.', examples: [true] })),
};

export const CreateAssetBody = Type.Object(
  { name: Name, kind: AssetKind, ...assetFields },
  { additionalProperties: false, examples: [{ name: 'Main building', kind: 'property', address: { line1: '1 Main Street', city: 'London', country: 'GB' } }] },
);

export const UpdateAssetBody = Type.Object(
  { name: Name, kind: AssetKind, ...assetFields, expected_updated_at: ExpectedUpdatedAt },
  { additionalProperties: false, examples: [{ name: 'Room 1', kind: 'room', parent_asset_id: 42 }] },
);

const IdFilter = (description: string) => Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,18}$', maxLength: 19, description, examples: ['42'] }));

export const ListAssetsQuery = ListQuery({
  kind: Type.Optional(Type.String({ maxLength: 50, description: 'Only this kind.', examples: ['property'] })),
  customer_id: IdFilter('Only assets of this invoicing customer.'),
  parent_asset_id: IdFilter('Only assets directly inside this asset.'),
});

const BookingStatus = Type.Union([Type.Literal('pending'), Type.Literal('confirmed'), Type.Literal('cancelled'), Type.Literal('completed'), Type.Literal('no_show')], {
  description: `${BOOKING_STATUSES.join(', ')}.`,
  examples: ['confirmed'],
});

/** The most resources one booking holds at once. */
export const MAX_BOOKING_RESOURCES = 10;

export const Booking = Type.Object(
  {
    id: Uuid,
    resource_id: NumericId('The resource booked (the first of resource_ids).'),
    resource_ids: Type.Array(NumericId('A resource the booking holds.'), {
      minItems: 1,
      maxItems: MAX_BOOKING_RESOURCES,
      description: 'Every resource the booking holds at once (a technician and a van), resource_id first; each one keeps its own capacity.',
      examples: [['42', '57']],
    }),
    asset_id: Nullable(NumericId('The asset the visit is about.')),
    customer_id: Nullable(NumericId('The invoicing customer.')),
    starts_at: TimestampField('Start, ISO 8601 UTC.'),
    ends_at: TimestampField('End (exclusive), ISO 8601 UTC.'),
    status: BookingStatus,
    notes: Nullable(Type.String({ maxLength: 2000, description: 'Free text.', examples: ['Ring the bell twice.'] })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'AppointmentsBooking', additionalProperties: false },
);

const Instant = (description: string) => Type.String({ format: 'date-time', maxLength: 64, description, examples: ['2026-03-29T09:00:00.000Z'] });
const Notes = Type.String({ maxLength: 2000, description: 'Free text.', examples: ['Ring the bell twice.'] });

export const CreateBookingBody = Type.Object(
  {
    resource_id: Type.Optional(IdInput('The resource to book. Send it, resource_ids, or both (then resource_ids must contain it).')),
    resource_ids: Type.Optional(
      Type.Array(IdInput('A resource to hold.'), {
        minItems: 1,
        maxItems: MAX_BOOKING_RESOURCES,
        description: `Several resources held at once, at most ${MAX_BOOKING_RESOURCES}, no repeats; the booking is made only if every one of them has a free place. resource_id (or else the first of these) is the booking's main resource.`,
        examples: [['42', '57']],
      }),
    ),
    asset_id: Type.Optional(Nullable(IdInput('An asset of the same tenant and mode.'))),
    customer_id: Type.Optional(Nullable(IdInput('An invoicing customer of the same tenant and mode.'))),
    starts_at: Instant('Start; with an offset or Z.'),
    ends_at: Instant('End (exclusive), after starts_at, at most 7 days later.'),
    status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('confirmed')], { description: 'Default confirmed.', examples: ['confirmed'] })),
    notes: Type.Optional(Nullable(Notes)),
  },
  {
    additionalProperties: false,
    examples: [
      { resource_id: '42', starts_at: '2026-03-30T09:00:00Z', ends_at: '2026-03-30T09:30:00Z' },
      { resource_ids: ['42', '57'], starts_at: '2026-03-30T09:00:00Z', ends_at: '2026-03-30T11:00:00Z' },
    ],
  },
);

export const UpdateBookingBody = Type.Object(
  {
    starts_at: Type.Optional(Instant('New start (reschedule); send with ends_at.')),
    ends_at: Type.Optional(Instant('New end (reschedule); send with starts_at.')),
    status: Type.Optional(BookingStatus),
    notes: Type.Optional(Nullable(Notes)),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ starts_at: '2026-03-30T10:00:00Z', ends_at: '2026-03-30T10:30:00Z' }, { status: 'cancelled' }] },
);

export const ListBookingsQuery = ListQuery({
  resource_id: IdFilter('Only bookings of this resource.'),
  asset_id: IdFilter('Only bookings about this asset.'),
  status: Type.Optional(BookingStatus),
  from: Type.Optional(Instant('Only bookings ending after this instant.')),
  to: Type.Optional(Instant('Only bookings starting before this instant.')),
});

export const Deleted = Type.Object(
  { id: NumericId('The id of what was deleted.'), deleted: Type.Literal(true, { description: 'Always true.' }) },
  { title: 'DeletedAppointmentsObject', additionalProperties: false },
);

const Time = Type.String({
  pattern: '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$',
  maxLength: 5,
  description: 'Local wall-clock time HH:MM (24:00 ends the day).',
  examples: ['09:00'],
});
const Day = Type.Union(
  ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((day) => Type.Literal(day)),
  { description: 'Day of the week.', examples: ['monday'] },
);
const WeeklyInterval = Type.Object(
  { day: Day, start: Time, end: Type.String({ ...Time, description: 'Local end time, after start.', examples: ['17:00'] }) },
  { title: 'AppointmentsWeeklyHours', additionalProperties: false, description: 'Working hours on one day of the week, in the resource time zone.' },
);
const Interval = Type.Object(
  { start: Time, end: Type.String({ ...Time, description: 'Local end time, after start.', examples: ['13:00'] }) },
  { title: 'AppointmentsInterval', additionalProperties: false, description: 'Local working hours.' },
);
const DateOverride = Type.Object(
  {
    date: Type.String({ format: 'date', maxLength: 10, description: 'Local calendar date.', examples: ['2026-12-24'] }),
    hours: Type.Array(Interval, { maxItems: 10, description: 'The hours of that date instead of the weekly ones; empty: closed.', examples: [[{ start: '09:00', end: '13:00' }]] }),
  },
  { title: 'AppointmentsDateOverride', additionalProperties: false },
);
const WeeklyHoursList = Type.Array(WeeklyInterval, {
  maxItems: 70,
  description: 'Weekly working hours; none: never available.',
  examples: [[{ day: 'monday', start: '09:00', end: '17:00' }]],
});
const OverrideList = Type.Array(DateOverride, { maxItems: 400, description: 'Per-date exceptions; one per date.', examples: [[{ date: '2026-12-25', hours: [] }]] });

export const Schedule = Type.Object(
  {
    resource_id: NumericId('The resource.'),
    timezone: Type.String({ maxLength: 64, description: 'The zone the hours are in: the resource timezone, or UTC when it has none.', examples: ['Europe/London'] }),
    weekly_hours: WeeklyHoursList,
    date_overrides: OverrideList,
    updated_at: Nullable(
      Type.String({ format: 'date-time', maxLength: 24, description: 'When the schedule was last set; null if never.', examples: ['2026-11-21T09:30:00.000Z'] }),
    ),
  },
  { title: 'AppointmentsSchedule', additionalProperties: false },
);

export const PutScheduleBody = Type.Object(
  { weekly_hours: WeeklyHoursList, date_overrides: Type.Optional(OverrideList), expected_updated_at: ExpectedUpdatedAt },
  { additionalProperties: false, examples: [{ weekly_hours: [{ day: 'monday', start: '09:00', end: '17:00' }], date_overrides: [{ date: '2026-12-25', hours: [] }] }] },
);

export const AvailabilityQuery = Type.Object(
  {
    from: Type.String({ format: 'date-time', maxLength: 64, description: 'Start of the window (instant with offset or Z).', examples: ['2026-03-28T00:00:00Z'] }),
    to: Type.String({ format: 'date-time', maxLength: 64, description: 'End of the window; at most 31 days after from.', examples: ['2026-03-31T00:00:00Z'] }),
    duration_minutes: Type.Integer({ format: 'int32', minimum: 5, maximum: 1440, description: 'Length of the slots; also their step.', examples: [30] }),
    kind: Type.Optional(Type.String({ maxLength: 50, description: 'Only resources of this kind.', examples: ['staff'] })),
    skills: Type.Optional(Type.String({ maxLength: 1000, description: 'Comma-separated skills every resource must have.', examples: ['plumbing,gas'] })),
    resource_id: IdFilter('Only this resource.'),
  },
  { additionalProperties: false },
);

export const Slot = Type.Object(
  {
    resource_id: NumericId('The free resource.'),
    starts_at: Type.String({ format: 'date-time', maxLength: 24, description: 'UTC instant.', examples: ['2026-03-30T08:00:00.000Z'] }),
    ends_at: Type.String({ format: 'date-time', maxLength: 24, description: 'UTC instant.', examples: ['2026-03-30T08:30:00.000Z'] }),
    local_starts_at: Type.String({ maxLength: 25, description: 'Start in the resource zone, with its offset.', examples: ['2026-03-30T09:00:00+01:00'] }),
    local_ends_at: Type.String({ maxLength: 25, description: 'End in the resource zone, with its offset.', examples: ['2026-03-30T09:30:00+01:00'] }),
    timezone: Type.String({ maxLength: 64, description: 'The resource zone.', examples: ['Europe/London'] }),
    remaining_capacity: Type.Integer({ format: 'int32', minimum: 1, maximum: 10000, description: 'Bookings the slot can still take.', examples: [1] }),
  },
  { title: 'AppointmentsSlot', additionalProperties: false },
);

export const MAX_SLOTS = 5000;

export const Availability = Type.Object(
  {
    from: Type.String({ format: 'date-time', maxLength: 24, description: 'Window start, UTC.', examples: ['2026-03-28T00:00:00.000Z'] }),
    to: Type.String({ format: 'date-time', maxLength: 24, description: 'Window end, UTC.', examples: ['2026-03-31T00:00:00.000Z'] }),
    duration_minutes: Type.Integer({ format: 'int32', minimum: 5, maximum: 1440, description: 'Slot length.', examples: [30] }),
    slots: Type.Array(Slot, { maxItems: MAX_SLOTS, description: 'Free slots by start, then resource id.' }),
    truncated: Type.Boolean({ description: `True when more than ${MAX_SLOTS} slots matched: narrow the window.`, examples: [false] }),
  },
  { title: 'AppointmentsAvailability', additionalProperties: false },
);

const AppliesTo = Type.Union([Type.Literal('resource'), Type.Literal('asset')], { description: 'Which objects the field is for.', examples: ['resource'] });
const FieldType = Type.Union([Type.Literal('text'), Type.Literal('number'), Type.Literal('boolean'), Type.Literal('select')], {
  description: 'text (string), number, boolean, or select (one of options).',
  examples: ['text'],
});

export const CustomField = Type.Object(
  {
    id: Uuid,
    applies_to: AppliesTo,
    key: Type.String({ maxLength: 63, description: 'The key in custom_fields.', examples: ['licence_no'] }),
    label: Type.String({ maxLength: 200, description: 'Display label.', examples: ['Licence number'] }),
    type: FieldType,
    options: Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100, description: 'Allowed values of a select field; empty otherwise.', examples: [['gold', 'silver']] }),
    created_at: Timestamp,
  },
  { title: 'AppointmentsCustomField', additionalProperties: false },
);

export const CreateCustomFieldBody = Type.Object(
  {
    applies_to: AppliesTo,
    key: Type.String({
      pattern: '^[a-z][a-z0-9_]{0,62}$',
      maxLength: 63,
      description: 'Lower-case letters, digits, underscores; unique per applies_to.',
      examples: ['licence_no'],
    }),
    label: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display label; trimmed.', examples: ['Licence number'] }),
    type: FieldType,
    options: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        minItems: 1,
        maxItems: 100,
        description: 'Required for select, refused otherwise.',
        examples: [['gold', 'silver']],
      }),
    ),
  },
  { additionalProperties: false, examples: [{ applies_to: 'resource', key: 'licence_no', label: 'Licence number', type: 'text' }] },
);

export const ListCustomFieldsQuery = ListQuery({ applies_to: Type.Optional(AppliesTo) });

export type CustomFieldView = Static<typeof CustomField>;
export type CreateCustomFieldInput = Static<typeof CreateCustomFieldBody>;
export type ScheduleView = Static<typeof Schedule>;
export type PutScheduleInput = Static<typeof PutScheduleBody>;
export type AvailabilityInput = Static<typeof AvailabilityQuery>;
export type AvailabilityView = Static<typeof Availability>;
export const DeletedCustomField = Type.Object(
  { id: Uuid, deleted: Type.Literal(true, { description: 'Always true.' }) },
  { title: 'DeletedAppointmentsCustomField', additionalProperties: false },
);

export type ResourceView = Static<typeof Resource>;
export type AssetView = Static<typeof Asset>;
export type BookingView = Static<typeof Booking>;
export type CreateResourceInput = Static<typeof CreateResourceBody>;
export type UpdateResourceInput = Static<typeof UpdateResourceBody>;
export type CreateAssetInput = Static<typeof CreateAssetBody>;
export type UpdateAssetInput = Static<typeof UpdateAssetBody>;
export type CreateBookingInput = Static<typeof CreateBookingBody>;
export type UpdateBookingInput = Static<typeof UpdateBookingBody>;
