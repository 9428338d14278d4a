import { Type, type Static } from 'typebox';
import { ExpectedUpdatedAt } from '../../platform/concurrency.js';
import { Nullable, ONE_LINE_NOT_BLANK, PathParams, Timestamp, TimestampField, UuidParam } from '../../platform/http/schemas.js';
import { ListQuery } from '../../platform/pagination/index.js';
import { DELAY_UNITS, ENROLLMENT_SOURCES, ENROLLMENT_STATUSES, EXIT_REASONS, MESSAGE_STATUSES, SEQUENCE_STATUSES, WEEKDAYS } from './tables.js';

const Id = (description: string) => Type.String({ format: 'uuid', maxLength: 36, description, examples: ['3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c'] });
const Literals = <const T extends string>(values: readonly T[], description: string, example: T) => Type.Enum([...values], { description, examples: [example] });

const SequenceStatus = Literals(SEQUENCE_STATUSES, 'draft, active, paused or archived. Only active sequences send.', 'active');
const EnrollmentStatus = Literals(ENROLLMENT_STATUSES, 'active, completed, exited or failed.', 'active');
const MessageStatus = Literals(MESSAGE_STATUSES, 'Outbound: queued, sent, delivered or failed; inbound: received.', 'sent');

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: ONE_LINE_NOT_BLANK, description: 'Name of the sequence; trimmed.', examples: ['New lead follow-up'] });
const TimeZone = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'IANA time zone the send window is read in (canonical or link: UTC, Europe/London, Asia/Calcutta).',
  examples: ['America/New_York'],
});
const PhoneInput = Type.String({
  minLength: 1,
  maxLength: 40,
  description:
    'Phone number; normalised to E.164. International format (+ and the country code, or 00) with optional spaces, dots, dashes and brackets; a number without a country code is read as North American.',
  examples: ['+1 (415) 555-0123'],
});
const E164 = (description: string) => Type.String({ maxLength: 16, pattern: '^\\+[1-9][0-9]{6,14}$', description, examples: ['+14155550123'] });
const DisplayName = Type.String({ maxLength: 200, description: 'Name of the person, used by {{display_name}}; trimmed, empty reads as null.', examples: ['Ada Lovelace'] });

const Delay = Type.Object(
  {
    amount: Type.Integer({ format: 'int32', minimum: 0, maximum: 100000, description: 'How many units to wait; 0 sends at once.', examples: [2] }),
    unit: Literals(DELAY_UNITS, 'minutes, hours or days (a day is 24 hours).', 'days'),
  },
  { title: 'OutreachStepDelay', additionalProperties: false, description: 'Wait before the step, after enrolment (first step) or after the previous step was sent.' },
);

const StepBody = Type.String({
  minLength: 1,
  maxLength: 1600,
  pattern: '\\S',
  description: 'Message text; placeholders {{display_name}}, {{first_name}} and {{address}} are filled in per person (empty when unknown).',
  examples: ['Hi {{display_name}}, thanks for your interest!'],
});

/** A step as written: `delay` may be left out for 0 minutes (at once). */
const StepInput = Type.Object(
  { body: StepBody, delay: Type.Optional(Delay) },
  { title: 'OutreachStepInput', additionalProperties: false, description: 'One message of the sequence; without delay it is due at once.' },
);

const Step = Type.Object(
  {
    position: Type.Integer({ format: 'int32', minimum: 0, maximum: 49, description: 'Place in the sequence, counted from 0.', examples: [0] }),
    body: Type.String({ maxLength: 1600, description: 'Message text with placeholders.', examples: ['Hi {{display_name}}, thanks for your interest!'] }),
    delay: Delay,
  },
  { title: 'OutreachStep', additionalProperties: false },
);

const Time = Type.String({
  pattern: '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$',
  maxLength: 5,
  description: 'Local wall-clock time HH:MM (24:00 is the end of the day).',
  examples: ['09:00'],
});

export const SendWindow = Type.Object(
  {
    days: Type.Array(Literals(WEEKDAYS, 'Day of the week.', 'monday'), {
      minItems: 1,
      maxItems: 7,
      description: 'Days of the week messages may go out on, Monday first.',
      examples: [['monday', 'tuesday', 'wednesday', 'thursday', 'friday']],
    }),
    start: Time,
    end: Type.String({ ...Time, description: 'Local time the window closes (exclusive), after start.', examples: ['17:00'] }),
  },
  { title: 'OutreachSendWindow', additionalProperties: false, description: 'When messages may go out, in the sequence time zone; null means any time.' },
);

const TimeInput = (description: string, example: string) =>
  Type.String({ pattern: '^([01]?[0-9]|2[0-4]):[0-5][0-9](:[0-5][0-9])?$', maxLength: 8, description, examples: [example] });
const HourInput = (description: string, minimum: number, maximum: number, example: number) => Type.Integer({ format: 'int32', minimum, maximum, description, examples: [example] });

/** The send window as clients may write it; stored and returned in the one shape of SendWindow. */
export const SendWindowInput = Type.Object(
  {
    days: Type.Optional(
      Type.Array(
        Type.Union([
          Type.String({ minLength: 2, maxLength: 9, pattern: '^[A-Za-z]+$', description: 'A day name, full or abbreviated, any case (monday, Mon, tu).' }),
          Type.Integer({ format: 'int32', minimum: 0, maximum: 7, description: 'A day number: 1 Monday ... 7 Sunday (0 is Sunday too).' }),
        ]),
        {
          minItems: 1,
          maxItems: 7,
          description: 'Days messages may go out on: names or numbers (1 Monday ... 7 or 0 Sunday); default every day.',
          examples: [['monday', 'friday']],
        },
      ),
    ),
    start: Type.Optional(TimeInput('Local opening time HH:MM (H:MM and HH:MM:SS accepted).', '09:00')),
    end: Type.Optional(TimeInput('Local closing time HH:MM, exclusive, after start; 24:00 is the end of the day.', '17:00')),
    start_time: Type.Optional(TimeInput('Same as start.', '09:00')),
    end_time: Type.Optional(TimeInput('Same as end.', '17:00')),
    start_hour: Type.Optional(HourInput('Opening hour 0-23, instead of start.', 0, 23, 9)),
    end_hour: Type.Optional(HourInput('Closing hour 1-24, instead of end.', 1, 24, 17)),
  },
  {
    title: 'OutreachSendWindowInput',
    additionalProperties: false,
    description: 'When messages may go out, in the sequence time zone: days and a start and end (start/end, start_time/end_time or start_hour/end_hour).',
    examples: [{ days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], start: '09:00', end: '17:00' }],
  },
);

const Count = (description: string) => Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description, examples: [3] });

export const Sequence = Type.Object(
  {
    id: Id('Sequence id.'),
    name: Type.String({ maxLength: 200, description: 'Name of the sequence.', examples: ['New lead follow-up'] }),
    status: SequenceStatus,
    steps: Type.Array(Step, {
      maxItems: 50,
      description: 'The messages in order.',
      examples: [[{ position: 0, body: 'Hi {{display_name}}!', delay: { amount: 0, unit: 'minutes' } }]],
    }),
    send_window: Nullable(SendWindow),
    timezone: Type.String({ maxLength: 64, description: 'IANA time zone of the send window.', examples: ['America/New_York'] }),
    counts: Type.Object(
      { active: Count('Active enrollments.'), completed: Count('Completed enrollments.'), exited: Count('Exited enrollments.'), failed: Count('Failed enrollments.') },
      { title: 'OutreachSequenceCounts', additionalProperties: false, description: 'Enrollments per status.' },
    ),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'OutreachSequence', additionalProperties: false },
);

const Steps = Type.Array(StepInput, {
  minItems: 1,
  maxItems: 50,
  description: 'The messages in order, 1 to 50.',
  examples: [
    [
      { body: 'Hi {{display_name}}!', delay: { amount: 0, unit: 'minutes' } },
      { body: 'Any questions?', delay: { amount: 2, unit: 'days' } },
    ],
  ],
});

export const CreateSequenceBody = Type.Object(
  {
    name: Name,
    status: Type.Optional(Literals(SEQUENCE_STATUSES, 'Default active.', 'active')),
    steps: Steps,
    send_window: Type.Optional(Nullable(SendWindowInput)),
    timezone: Type.Optional(Type.String({ ...TimeZone, description: 'IANA time zone of the send window; default UTC.' })),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'New lead follow-up',
        steps: [{ body: 'Hi {{display_name}}!', delay: { amount: 0, unit: 'minutes' } }],
        send_window: { days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], start: '09:00', end: '17:00' },
        timezone: 'America/New_York',
      },
    ],
  },
);

export const UpdateSequenceBody = Type.Object(
  {
    name: Type.Optional(Name),
    status: Type.Optional(SequenceStatus),
    steps: Type.Optional(Steps),
    send_window: Type.Optional(Nullable(SendWindowInput)),
    timezone: Type.Optional(TimeZone),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ status: 'paused' }] },
);

export const ListSequencesQuery = ListQuery({ status: Type.Optional(SequenceStatus) });

export const Enrollment = Type.Object(
  {
    id: Id('Enrollment id.'),
    sequence_id: Id('The sequence.'),
    address: E164('Phone number the messages go to, E.164.'),
    display_name: Nullable(Type.String({ maxLength: 200, description: 'Name of the person.', examples: ['Ada Lovelace'] })),
    status: EnrollmentStatus,
    next_position: Nullable(Type.Integer({ format: 'int32', minimum: 0, maximum: 50, description: 'Which message is next, counted from 0; null once finished.', examples: [1] })),
    next_run_at: Nullable(TimestampField('When the next message goes out; null once finished.')),
    exit_reason: Nullable(Literals(EXIT_REASONS, 'Why the person left early: replied, opted_out or removed.', 'replied')),
    source: Literals(ENROLLMENT_SOURCES, 'How the person was added: api, book, manual or workflow.', 'api'),
    enrolled_at: Timestamp,
    last_sent_at: Nullable(TimestampField('When the last message was sent.')),
  },
  { title: 'OutreachEnrollment', additionalProperties: false },
);

const EnrollmentInput = Type.Object(
  { address: PhoneInput, display_name: Type.Optional(Nullable(DisplayName)) },
  { title: 'OutreachEnrollmentInput', additionalProperties: false, description: 'One person to enrol.' },
);

export const CreateEnrollmentBody = Type.Object(
  {
    address: Type.Optional(PhoneInput),
    display_name: Type.Optional(Nullable(DisplayName)),
    enrollments: Type.Optional(
      Type.Array(EnrollmentInput, {
        minItems: 1,
        maxItems: 100,
        description: 'A batch of 1 to 100 people, instead of address and display_name.',
        examples: [[{ address: '+14155550123', display_name: 'Ada Lovelace' }]],
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'One person (address, display_name) or a batch (enrollments).',
    examples: [{ address: '+1 415 555 0123', display_name: 'Ada Lovelace' }],
  },
);

export const EnrollmentBatch = Type.Object(
  {
    enrollments: Type.Array(Enrollment, { maxItems: 100, description: 'The enrollment of each person enrolled or already active, in the order sent.' }),
    created: Count('People newly enrolled.'),
    existing: Count('People already active in the sequence (their enrollment is returned).'),
    refused: Type.Array(
      Type.Object(
        {
          index: Type.Integer({ format: 'int32', minimum: 0, maximum: 99, description: 'Position in the batch.', examples: [2] }),
          address: E164('The number refused.'),
          code: Type.String({ maxLength: 64, description: 'Why: address_suppressed.', examples: ['address_suppressed'] }),
          message: Type.String({ maxLength: 500, description: 'In words.', examples: ['The number is on the suppression list.'] }),
        },
        { title: 'OutreachEnrollmentRefusal', additionalProperties: false },
      ),
      { maxItems: 100, description: 'People not enrolled, with the reason.' },
    ),
  },
  { title: 'OutreachEnrollmentBatch', additionalProperties: false },
);

export const EnrollmentReply = Type.Union([Enrollment, EnrollmentBatch], { description: 'The enrollment (one person) or the batch result (enrollments).' });

export const ListEnrollmentsQuery = ListQuery({ status: Type.Optional(EnrollmentStatus) });

export const SequenceParams = PathParams({ id: UuidParam });
export const EnrollmentParams = PathParams({ id: UuidParam, enrollment_id: UuidParam });

export const Message = Type.Object(
  {
    id: Id('Message id.'),
    direction: Literals(['outbound', 'inbound'] as const, 'outbound (a sequence step) or inbound (a reply).', 'outbound'),
    sequence_id: Nullable(Id('The sequence of an outbound message.')),
    enrollment_id: Nullable(Id('The enrollment of an outbound message.')),
    position: Nullable(Type.Integer({ format: 'int32', minimum: 0, maximum: 49, description: 'The step sent, counted from 0.', examples: [0] })),
    from: Nullable(Type.String({ maxLength: 40, description: 'Sender number (the provider number for outbound messages when known).', examples: ['+14155550100'] })),
    to: Type.String({ maxLength: 40, description: 'Recipient number.', examples: ['+14155550123'] }),
    body: Type.String({ maxLength: 1600, description: 'Text as sent or received.', examples: ['Hi Ada Lovelace!'] }),
    status: MessageStatus,
    provider: Type.String({ maxLength: 20, description: 'sandbox (test mode) or twilio (live mode).', examples: ['sandbox'] }),
    provider_message_id: Nullable(Type.String({ maxLength: 64, description: 'The provider id (Twilio MessageSid).', examples: ['SM0123456789abcdef0123456789abcdef'] })),
    error: Nullable(Type.String({ maxLength: 500, description: 'Last provider error.', examples: ['provider_unavailable'] })),
    attempts: Type.Integer({ format: 'int32', minimum: 0, maximum: 100, description: 'Provider attempts made.', examples: [1] }),
    created_at: Timestamp,
    sent_at: Nullable(TimestampField('When the provider accepted it.')),
    updated_at: Timestamp,
  },
  { title: 'OutreachMessage', additionalProperties: false },
);

export const ListMessagesQuery = ListQuery({
  sequence_id: Type.Optional(Id('Only messages of this sequence.')),
  enrollment_id: Type.Optional(Id('Only messages of this enrollment.')),
  address: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'Only messages to or from this number (normalised to E.164).', examples: ['+14155550123'] })),
  to: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'Only messages to this number (normalised to E.164).', examples: ['+14155550123'] })),
  from: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'Only messages from this number (normalised to E.164).', examples: ['+14155550123'] })),
  direction: Type.Optional(Literals(['outbound', 'inbound'] as const, 'Only this direction.', 'outbound')),
  status: Type.Optional(MessageStatus),
});

export const MessageParams = PathParams({ id: UuidParam });

export const SuppressionParams = PathParams({
  id: Type.String({
    minLength: 1,
    maxLength: 40,
    pattern: '^[0-9A-Za-z+ ().-]+$',
    description: 'The suppression id, or the suppressed number itself (URL-encoded, + as %2B).',
    examples: ['3f1b5c8e-2a4d-4b7e-9c1a-5d6e7f8a9b0c', '+14155550123'],
  }),
});

export const MessageStatusBody = Type.Object(
  {
    status: Type.Enum(['queued', 'sent', 'delivered', 'failed', 'undelivered'], { description: 'New delivery status; undelivered reads as failed.', examples: ['delivered'] }),
    error_message: Type.Optional(Nullable(Type.String({ maxLength: 500, description: 'Provider error text when failed.', examples: ['30003: Unreachable destination handset'] }))),
  },
  { additionalProperties: false, examples: [{ status: 'delivered' }] },
);

export const InboundBody = Type.Object(
  {
    from: PhoneInput,
    to: Type.String({ minLength: 1, maxLength: 40, description: 'The number the message was sent to (yours).', examples: ['+14155550100'] }),
    body: Type.String({ maxLength: 1600, description: 'Text of the message.', examples: ['STOP'] }),
    provider_message_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[A-Za-z0-9_-]+$',
        description: 'The provider id of the message (Twilio MessageSid): the same id sent again is recorded and acted on once.',
        examples: ['SM0123456789abcdef0123456789abcdef'],
      }),
    ),
  },
  { additionalProperties: false, examples: [{ from: '+14155550123', to: '+14155550100', body: 'Thanks, not now' }] },
);

export const InboundResult = Type.Object(
  {
    message: Message,
    action: Literals(
      ['replied', 'opted_out', 'opted_in'] as const,
      'replied (active enrollments exited), opted_out (suppressed and exited), opted_in (suppression removed).',
      'replied',
    ),
    exited: Count('Active enrollments of the number that were exited.'),
    suppressed: Type.Boolean({ description: 'Whether the number is on the suppression list now.', examples: [false] }),
  },
  { title: 'OutreachInboundResult', additionalProperties: false },
);

export const Suppression = Type.Object(
  {
    id: Id('Suppression id.'),
    address: E164('Suppressed number, E.164.'),
    reason: Literals(['opted_out', 'manual'] as const, 'opted_out (a STOP keyword) or manual (added through the API).', 'opted_out'),
    note: Nullable(Type.String({ maxLength: 500, description: 'Free text.', examples: ['Asked by phone not to be texted.'] })),
    created_at: Timestamp,
  },
  { title: 'OutreachSuppression', additionalProperties: false },
);

export const CreateSuppressionBody = Type.Object(
  { address: PhoneInput, note: Type.Optional(Nullable(Type.String({ maxLength: 500, description: 'Free text.', examples: ['Asked by phone not to be texted.'] }))) },
  { additionalProperties: false, examples: [{ address: '+14155550123' }] },
);

export const ListSuppressionsQuery = ListQuery({
  address: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'Only this number (normalised to E.164).', examples: ['+14155550123'] })),
  reason: Type.Optional(Literals(['opted_out', 'manual'] as const, 'Only this reason.', 'opted_out')),
});

export const DeletedSuppression = Type.Object(
  { id: Id('The suppression removed.'), address: E164('The number, which may be messaged again.'), deleted: Type.Literal(true, { description: 'Always true.' }) },
  { title: 'DeletedOutreachSuppression', additionalProperties: false },
);

export const DeletedSequence = Type.Object(
  { id: Id('The sequence deleted.'), deleted: Type.Literal(true, { description: 'Always true.' }) },
  { title: 'DeletedOutreachSequence', additionalProperties: false },
);

export const StatusCallbackBody = Type.Object(
  {
    message_id: Type.Optional(Id('Our message id; send this or provider_message_id.')),
    provider_message_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[A-Za-z0-9_-]+$',
        description: 'The provider id (Twilio MessageSid).',
        examples: ['SM0123456789abcdef0123456789abcdef'],
      }),
    ),
    status: Literals(['queued', 'sent', 'delivered', 'failed', 'undelivered'] as const, 'New delivery status; undelivered reads as failed.', 'delivered'),
    error_message: Type.Optional(Nullable(Type.String({ maxLength: 500, description: 'Provider error text when failed.', examples: ['30003: Unreachable destination handset'] }))),
  },
  { additionalProperties: false, examples: [{ provider_message_id: 'SM0123456789abcdef0123456789abcdef', status: 'delivered' }] },
);

export type SequenceView = Static<typeof Sequence>;
export type EnrollmentView = Static<typeof Enrollment>;
export type EnrollmentBatchView = Static<typeof EnrollmentBatch>;
export type MessageView = Static<typeof Message>;
export type SuppressionView = Static<typeof Suppression>;
export type InboundResultView = Static<typeof InboundResult>;
export type CreateSequenceInput = Static<typeof CreateSequenceBody>;
export type UpdateSequenceInput = Static<typeof UpdateSequenceBody>;
export type CreateEnrollmentInput = Static<typeof CreateEnrollmentBody>;
export type SendWindowInputValue = Static<typeof SendWindowInput>;
export type InboundInput = Static<typeof InboundBody>;
export type CreateSuppressionInput = Static<typeof CreateSuppressionBody>;
export type StatusCallbackInput = Static<typeof StatusCallbackBody>;
export type MessageStatusInput = Static<typeof MessageStatusBody>;
export type ListMessagesInput = Static<typeof ListMessagesQuery>;
