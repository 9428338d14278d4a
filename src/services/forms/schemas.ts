import { Type, type Static } from 'typebox';
import { ExpectedUpdatedAt } from '../../platform/concurrency.js';
import { ListQuery } from '../../platform/pagination/index.js';
import { IdParams, Nullable, PathParams, Timestamp, Uuid, UuidParam } from '../../platform/http/schemas.js';
import { SLUG_PATTERN } from '../../lib/slug.js';
import { FIELD_KEY_PATTERN, FIELD_TYPES, MAX_FIELDS } from './fields.js';
import { MAX_PATTERN_LENGTH } from './pattern-safety.js';

export const FORM_STATUSES = ['draft', 'published', 'closed'] as const;
export const MAX_METADATA_BYTES = 8 * 1024;
export const MAX_METADATA_KEYS = 50;

/** A free JSON object (values of any JSON type). */
function FreeObject(options: { description: string; maxProperties?: number; examples?: unknown[] }) {
  return Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });
}

const FormStatus = Type.Enum(FORM_STATUSES, {
  description: '`draft` (being built; refuses submissions), `published` (accepts submissions) or `closed` (no longer accepts submissions).',
});

const FieldOption = Type.Object(
  {
    value: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'What is submitted and stored; matched exactly.' }),
    label: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'What the person sees; trimmed.' }),
  },
  { title: 'FieldOption', additionalProperties: false },
);

const fieldProperties = {
  key: Type.String({
    maxLength: 64,
    pattern: FIELD_KEY_PATTERN,
    description:
      'Name of the value in submissions and the CSV column: a lower-case letter, then up to 63 lower-case letters, digits or underscores. Unique in the form; `id`, `submitted_at` and `read` are reserved.',
    examples: ['email'],
  }),
  label: Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S', description: 'The question as shown; trimmed.' }),
  type: Type.Enum(FIELD_TYPES, {
    description:
      'text, textarea, email, number, phone, url (absolute http/https), date (YYYY-MM-DD), select (one option value), multiselect (array of option values), checkbox (true/false) or hidden (a string set by the page, not the person).',
  }),
  required: Type.Boolean({
    description: 'Whether an answer is needed. Missing, null, an empty or all-space string and an empty array count as no answer; a required checkbox must be true.',
  }),
  options: Type.Array(FieldOption, {
    minItems: 1,
    maxItems: 500,
    description: 'Choices of select and multiselect fields (required there, refused elsewhere); values unique.',
  }),
  min: Type.Union([Type.Number(), Type.String({ maxLength: 10 })], {
    description: 'number: smallest value; date: earliest date (YYYY-MM-DD); multiselect: fewest selections. Refused on other types.',
  }),
  max: Type.Union([Type.Number(), Type.String({ maxLength: 10 })], {
    description: 'number: largest value; date: latest date (YYYY-MM-DD); multiselect: most selections. Refused on other types.',
  }),
  max_length: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    description:
      'Longest answer in characters (UTF-16 units, as HTML counts them) for text kinds (text, textarea, email, phone, url, hidden). Defaults: text and hidden 1,000 (at most 10,000), textarea 10,000 (at most 100,000), email 320, phone 40, url 2,048.',
  }),
  pattern: Type.String({
    minLength: 1,
    maxLength: MAX_PATTERN_LENGTH,
    description:
      "For text kinds: a JavaScript regular expression (unicode mode) the whole answer must match, as HTML's pattern attribute. Refused when it could backtrack catastrophically: backreferences, a repeated group containing | or a variable quantifier (e.g. (a+)+), or too many open-ended repeats for the max_length.",
    examples: ['[A-Z]{2}[0-9]{4}'],
  }),
};

/** A field as returned: settings that were not set are absent. */
export const Field = Type.Object(
  {
    key: fieldProperties.key,
    label: fieldProperties.label,
    type: fieldProperties.type,
    required: fieldProperties.required,
    options: Type.Optional(fieldProperties.options),
    min: Type.Optional(fieldProperties.min),
    max: Type.Optional(fieldProperties.max),
    max_length: Type.Optional(fieldProperties.max_length),
    pattern: Type.Optional(fieldProperties.pattern),
  },
  { title: 'FormField', additionalProperties: false },
);

/** A field as sent: `required` defaults to false. */
const FieldInput = Type.Object(
  {
    key: fieldProperties.key,
    label: fieldProperties.label,
    type: fieldProperties.type,
    required: Type.Optional(fieldProperties.required),
    options: Type.Optional(fieldProperties.options),
    min: Type.Optional(fieldProperties.min),
    max: Type.Optional(fieldProperties.max),
    max_length: Type.Optional(fieldProperties.max_length),
    pattern: Type.Optional(fieldProperties.pattern),
  },
  { additionalProperties: false },
);

const Fields = Type.Array(FieldInput, {
  maxItems: MAX_FIELDS,
  description: `The questions, in order (at most ${MAX_FIELDS}). On PATCH the whole list is replaced; submissions already stored keep their values.`,
});

export const Form = Type.Object(
  {
    id: Uuid,
    name: Type.String({ maxLength: 200 }),
    slug: Type.String({ maxLength: 120, description: 'Unique per tenant and mode; used by GET /forms/by-slug/{slug} and POST /forms/{slug}/submit.' }),
    description: Nullable(Type.String({ maxLength: 5000 })),
    status: FormStatus,
    fields: Type.Array(Field, { maxItems: 100 }),
    success_message: Nullable(Type.String({ maxLength: 2000, description: 'What to show after a successful submission.' })),
    redirect_url: Nullable(Type.String({ maxLength: 2048, description: 'Where to send the person after a successful submission.' })),
    submission_count: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Submissions stored.' }),
    unread_count: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Submissions not yet read.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Form', additionalProperties: false },
);

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name; trimmed.' });
const Slug = Type.String({
  minLength: 1,
  maxLength: 120,
  pattern: SLUG_PATTERN,
  description:
    'Lower-case letters and digits in hyphen-separated words. Derived from the name when not sent (numbered if taken); an explicit slug that is taken is 409 slug_taken.',
  examples: ['contact-us'],
});
const Description = Type.String({ maxLength: 5000, description: 'Shown above the questions.' });
const SuccessMessage = Type.String({ maxLength: 2000, description: 'What to show after a successful submission.' });
const RedirectUrl = Type.String({ format: 'uri', maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', description: 'Absolute http or https URL.' });

export const CreateFormBody = Type.Object(
  {
    name: Name,
    slug: Type.Optional(Slug),
    description: Type.Optional(Nullable(Description)),
    status: Type.Optional(FormStatus),
    fields: Type.Optional(Fields),
    success_message: Type.Optional(Nullable(SuccessMessage)),
    redirect_url: Type.Optional(Nullable(RedirectUrl)),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Contact us',
        status: 'published',
        fields: [
          { key: 'name', label: 'Your name', type: 'text', required: true, max_length: 200 },
          { key: 'email', label: 'Email', type: 'email', required: true },
          {
            key: 'topic',
            label: 'Topic',
            type: 'select',
            options: [
              { value: 'sales', label: 'Sales' },
              { value: 'support', label: 'Support' },
            ],
          },
          { key: 'message', label: 'Message', type: 'textarea', required: true },
        ],
        success_message: 'Thanks! We will reply within a day.',
      },
    ],
  },
);

export const UpdateFormBody = Type.Object(
  {
    name: Type.Optional(Name),
    slug: Type.Optional(Slug),
    description: Type.Optional(Nullable(Description)),
    status: Type.Optional(FormStatus),
    fields: Type.Optional(Fields),
    success_message: Type.Optional(Nullable(SuccessMessage)),
    redirect_url: Type.Optional(Nullable(RedirectUrl)),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ status: 'closed' }] },
);

export const ListFormsQuery = ListQuery({
  status: Type.Optional(FormStatus),
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive match anywhere in name or slug.' })),
});

export const FormIdParams = IdParams;
export const SlugParams = PathParams({ slug: Type.String({ pattern: SLUG_PATTERN, maxLength: 120, examples: ['contact-us'] }) });
export const SubmissionParams = PathParams({ id: UuidParam, subId: UuidParam });

export const Submission = Type.Object(
  {
    id: Uuid,
    form_id: Uuid,
    data: FreeObject({ description: 'The answers by field key (fields left unanswered are absent).', examples: [{ email: 'ada@example.com', topic: 'sales' }] }),
    read: Type.Boolean(),
    read_at: Nullable(Timestamp),
    submitted_at: Timestamp,
    metadata: FreeObject({ description: 'What the caller sent as metadata (e.g. ip, user_agent, referrer); {} when none.' }),
  },
  { title: 'FormSubmission', additionalProperties: false },
);

export const SubmitBody = Type.Object(
  {
    data: FreeObject({
      maxProperties: 200,
      description: 'Answers by field key. Checked against the form: required fields, types, options and bounds; unknown keys are refused.',
    }),
    metadata: Type.Optional(
      FreeObject({
        maxProperties: MAX_METADATA_KEYS,
        description: `Anything the caller wants kept with the submission, e.g. the person's ip and user agent (at most ${MAX_METADATA_KEYS} keys and ${MAX_METADATA_BYTES} bytes as JSON). Stored as sent; the API adds nothing.`,
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        data: { name: 'Ada Lovelace', email: 'ada@example.com', topic: 'sales', message: 'Hello!' },
        metadata: { ip: '203.0.113.7', user_agent: 'Mozilla/5.0' },
      },
    ],
  },
);

export const ListSubmissionsQuery = ListQuery({
  read: Type.Optional(Type.Boolean({ description: 'true: read submissions only; false: unread only.' })),
});

export const UpdateSubmissionBody = Type.Object(
  { read: Type.Boolean({ description: 'true marks the submission read (read_at set to now), false unread (read_at null).' }) },
  { additionalProperties: false, examples: [{ read: false }] },
);

export const Deleted = Type.Object({ id: Uuid, deleted: Type.Literal(true) }, { title: 'DeletedObject', additionalProperties: false });

export type FormView = Static<typeof Form>;
export type SubmissionView = Static<typeof Submission>;
export type CreateFormInput = Static<typeof CreateFormBody>;
export type UpdateFormInput = Static<typeof UpdateFormBody>;
export type SubmitInput = Static<typeof SubmitBody>;
