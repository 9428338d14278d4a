import { Type, type Static } from 'typebox';
import { ExpectedUpdatedAt } from '../../platform/concurrency.js';
import { Nullable, ONE_LINE_NOT_BLANK, Timestamp, TimestampField } from '../../platform/http/schemas.js';
import { ListQuery } from '../../platform/pagination/index.js';
import { ASSIGNMENT_STATUSES, DECISIONS, EVENT_TYPES, GRADING_SCHEMES, LINK_SOURCES, PRIORITIES, SCHEDULE_MODES, SUBMISSION_MODES, TASK_SOURCES, TASK_STATUSES } from './tables.js';

const MAX_ID = Number.MAX_SAFE_INTEGER;
const Id = (description: string) => Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description, examples: [42] });
const UserId = (description: string) => Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description, examples: [7] });
const Enum = <T extends readonly string[]>(values: T, description: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], maxLength: 32, description: `${description} One of: ${values.join(', ')}.`, examples: [values[0]] });
const NullableEnum = <T extends readonly string[]>(values: T, description: string) =>
  Type.Unsafe<T[number] | null>({
    type: ['string', 'null'],
    enum: [...values, null],
    maxLength: 32,
    description: `${description} One of: ${values.join(', ')}, or null.`,
    examples: [values[0]],
  });
const Score = (description: string) => Type.Number({ minimum: 0, maximum: 1_000_000, description, examples: [8.5] });
const Instant = (description: string) => Type.String({ format: 'date-time', maxLength: 64, description, examples: ['2026-12-01T17:00:00.000Z'] });
const ShortText = (maxLength: number, description: string, example: string) => Type.String({ maxLength, description, examples: [example] });
const ItemId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$', description: 'Item id, unique in its list: letters, digits, _ . -', examples: ['c1'] });
const ActorUserId = (required: boolean) =>
  UserId(required ? 'The user making the change (recorded as the actor). Required.' : 'The user making the change; defaults to the assignee.');

const CustomFieldValue = Type.Union([Type.String({ maxLength: 2000 }), Type.Number(), Type.Boolean(), Type.Null()]);
const CustomFields = Type.Record(Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]{0,62}$', maxLength: 63 }), CustomFieldValue, {
  maxProperties: 50,
  description: 'Values for workspace-defined fields: string, number, boolean or null.',
  examples: [{ cost_centre: 'CC-12' }],
});

export const FileObject = Type.Object(
  {
    filename: ShortText(255, 'File name.', 'report.pdf'),
    mime: ShortText(255, 'Media type.', 'application/pdf'),
    size_bytes: Type.Integer({ format: 'int64', minimum: 0, maximum: MAX_ID, description: 'Size in bytes.', examples: [20480] }),
    download_url: ShortText(2048, 'Temporary storage address.', 'https://files.example.com/tmp/report.pdf'),
    content_url: ShortText(2048, "Path of the service's own file content route.", '/files/report.pdf'),
  },
  { title: 'TasksFile', additionalProperties: false, description: 'A file object.' },
);

export const FileInput = Type.Object(
  {
    filename: Type.String({ minLength: 1, maxLength: 255, pattern: ONE_LINE_NOT_BLANK, description: 'File name.', examples: ['report.pdf'] }),
    mime: Type.String({ minLength: 3, maxLength: 255, pattern: '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+$', description: 'Media type.', examples: ['application/pdf'] }),
    size_bytes: Type.Integer({ format: 'int64', minimum: 0, maximum: MAX_ID, description: 'Size in bytes.', examples: [20480] }),
    download_url: Type.String({
      format: 'uri',
      maxLength: 2048,
      pattern: '^https?://',
      description: 'Temporary storage address (http or https).',
      examples: ['https://files.example.com/tmp/report.pdf'],
    }),
    content_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        pattern: '^(/|https?://)\\S*$',
        description: 'Path of the file content route; defaults to download_url.',
        examples: ['/files/report.pdf'],
      }),
    ),
  },
  { additionalProperties: false, description: 'A file object: name, media type, size and where to fetch it.' },
);
const Files = Type.Array(FileInput, {
  maxItems: 50,
  description: 'File objects.',
  examples: [[{ filename: 'report.pdf', mime: 'application/pdf', size_bytes: 20480, download_url: 'https://files.example.com/tmp/report.pdf' }]],
});

export const RubricCriterion = Type.Object(
  {
    id: ItemId,
    label: Type.String({ minLength: 1, maxLength: 200, description: 'Criterion.', examples: ['Accuracy'] }),
    max_score: Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'Highest score of this criterion.', examples: [10] }),
    weight: Type.Number({ minimum: 0, maximum: 1000, description: 'Weight of the criterion in the rubric score.', examples: [2] }),
  },
  { title: 'TasksRubricCriterion', additionalProperties: false },
);

export const ChecklistItem = Type.Object(
  {
    id: ItemId,
    label: Type.String({ minLength: 1, maxLength: 200, description: 'What to do.', examples: ['Attach the signed form'] }),
    required: Type.Boolean({ description: 'Must be checked before submitting.', examples: [true] }),
    requires_note: Type.Optional(Type.Boolean({ description: 'Checking it needs a note.', examples: [false] })),
    requires_file: Type.Optional(Type.Boolean({ description: 'Checking it needs a file.', examples: [true] })),
  },
  { title: 'TasksChecklistItem', additionalProperties: false },
);

// Categories

export const Category = Type.Object(
  {
    id: Id('Category id.'),
    name: ShortText(200, 'Name.', 'Homework'),
    description: Nullable(ShortText(2000, 'Description.', 'Weekly homework')),
    grading_scheme: Enum(GRADING_SCHEMES, 'Default grading scheme of its tasks.'),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'TasksCategory', additionalProperties: false },
);

const CategoryName = Type.String({ minLength: 1, maxLength: 200, pattern: ONE_LINE_NOT_BLANK, description: 'Name; trimmed.', examples: ['Homework'] });
export const CreateCategoryBody = Type.Object(
  {
    name: CategoryName,
    description: Type.Optional(Nullable(ShortText(2000, 'Description.', 'Weekly homework'))),
    grading_scheme: Type.Optional(Enum(GRADING_SCHEMES, 'Default grading scheme of its tasks; default points.')),
  },
  { additionalProperties: false, examples: [{ name: 'Homework', grading_scheme: 'points' }] },
);
export const UpdateCategoryBody = Type.Object(
  {
    name: Type.Optional(CategoryName),
    description: Type.Optional(Nullable(ShortText(2000, 'Description.', 'Weekly homework'))),
    grading_scheme: Type.Optional(Enum(GRADING_SCHEMES, 'Default grading scheme of its tasks.')),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ grading_scheme: 'letter' }] },
);
export const ListCategoriesQuery = ListQuery({});

export const Rollup = Type.Object(
  {
    category_id: Id('Category id.'),
    assignee_user_id: Nullable(UserId('Assignee; null when the rollup covers every assignee.')),
    percentage: Nullable(Type.Number({ minimum: 0, maximum: 100, description: 'Weighted by task weight; null without graded work.', examples: [86.5] })),
    tasks: Type.Array(
      Type.Object(
        {
          task_id: Id('Task id.'),
          weight: Type.Number({ minimum: 0, maximum: 1_000_000, description: 'Task weight.', examples: [1] }),
          score: Score('Sum of the graded assignments’ scores.'),
          max_score: Score('Sum of their max scores.'),
          percentage: Type.Number({ minimum: 0, maximum: 100, description: 'score / max_score × 100, 2 decimals.', examples: [85] }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 10000, description: 'Tasks of the category with graded assignments of this person.' },
    ),
  },
  { title: 'TasksCategoryRollup', additionalProperties: false },
);

// Tasks

const taskFields = {
  id: Id('Task id.'),
  category_id: Nullable(Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description: 'Category.', examples: [3] })),
  title: ShortText(500, 'Title.', 'Week 3 essay'),
  instructions: Nullable(ShortText(20000, 'Instructions.', 'Write 500 words.')),
  priority: Enum(PRIORITIES, 'Priority.'),
  status: Enum(TASK_STATUSES, 'Status.'),
  due_at: Nullable(TimestampField('Default deadline, overridable per assignment.')),
  schedule_mode: Enum(SCHEDULE_MODES, 'one_time, scheduled (visible from starts_at) or recurring (generates occurrences).'),
  starts_at: Nullable(TimestampField('When a scheduled task becomes visible to assignees; the first occurrence of a recurring one.')),
  recurrence_rule: Nullable(ShortText(500, 'RFC 5545 RRULE of a recurring task (FREQ, INTERVAL, BYDAY, COUNT, UNTIL).', 'FREQ=WEEKLY;BYDAY=MO,WE;COUNT=6')),
  recurrence_parent_id: Nullable(
    Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description: 'The recurring task this occurrence was generated from.', examples: [12] }),
  ),
  occurrence_at: Nullable(TimestampField('The instant of the rule this occurrence stands for.')),
  submission_mode: Enum(SUBMISSION_MODES, 'What the assignee must send back.'),
  required_files: Type.Integer({ format: 'int32', minimum: 0, maximum: 50, description: 'Minimum files per submission.', examples: [1] }),
  allowed_submission_count: Nullable(Type.Integer({ format: 'int32', minimum: 1, maximum: 1000, description: 'Maximum attempts; null means unlimited.', examples: [3] })),
  allow_late_submission: Type.Boolean({ description: 'Whether submissions after due_at are accepted (marked is_late).', examples: [true] }),
  grading_scheme: NullableEnum(GRADING_SCHEMES, 'Overrides the category scheme; null inherits.'),
  max_score: Nullable(Score('Denominator for points, percentage and letter schemes (and the scale of rubric scores); null reads as 100.')),
  weight: Type.Number({ minimum: 0, maximum: 1_000_000, description: 'Weight in the category rollup; default 1.', examples: [1] }),
  review_stages: Type.Integer({ format: 'int32', minimum: 0, maximum: 5, description: 'Review stages a submission passes; 0 completes on submission. Default 1.', examples: [1] }),
  rubric: Type.Array(RubricCriterion, { maxItems: 50, description: 'Rubric criteria.' }),
  checklist: Type.Array(ChecklistItem, { maxItems: 100, description: 'Checklist items.' }),
  attachments: Type.Array(FileObject, { maxItems: 50, description: 'File objects.' }),
  custom_fields: Type.Record(Type.String({ maxLength: 63 }), CustomFieldValue, { description: 'Values for workspace-defined fields.', examples: [{ cost_centre: 'CC-12' }] }),
  source: Enum(TASK_SOURCES, 'Where the task came from.'),
  template_id: Nullable(Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description: 'Template.', examples: [5] })),
  assignment_count: Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647, description: 'Assignments made of this task.', examples: [2] }),
  created_at: Timestamp,
  updated_at: TimestampField('Round-tripped as expected_updated_at.'),
};
export const Task = Type.Object(taskFields, { title: 'TasksTask', additionalProperties: false });

const Title = Type.String({ minLength: 1, maxLength: 500, pattern: ONE_LINE_NOT_BLANK, description: 'Title; trimmed.', examples: ['Week 3 essay'] });
const writableTaskFields = {
  category_id: Type.Optional(Nullable(Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description: 'Category.', examples: [3] }))),
  instructions: Type.Optional(Nullable(ShortText(20000, 'Instructions.', 'Write 500 words.'))),
  priority: Type.Optional(Enum(PRIORITIES, 'Priority; default normal.')),
  due_at: Type.Optional(Nullable(Instant('Default deadline.'))),
  schedule_mode: Type.Optional(Enum(SCHEDULE_MODES, 'Default one_time; scheduled needs starts_at; recurring needs starts_at and recurrence_rule.')),
  starts_at: Type.Optional(Nullable(Instant('Visibility start (scheduled) or first occurrence (recurring).'))),
  recurrence_rule: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 500,
        pattern: '^(RRULE:)?[A-Za-z0-9=;,:+-]+$',
        description: 'RFC 5545 RRULE subset: FREQ=DAILY|WEEKLY|MONTHLY, INTERVAL, BYDAY, COUNT, UNTIL.',
        examples: ['FREQ=WEEKLY;BYDAY=MO;COUNT=4'],
      }),
    ),
  ),
  submission_mode: Type.Optional(Enum(SUBMISSION_MODES, 'What the assignee must send back; default none.')),
  required_files: Type.Optional(Type.Integer({ format: 'int32', minimum: 0, maximum: 50, description: 'Minimum files per submission; default 0.', examples: [1] })),
  allowed_submission_count: Type.Optional(
    Nullable(Type.Integer({ format: 'int32', minimum: 1, maximum: 1000, description: 'Maximum attempts; null (default) is unlimited.', examples: [3] })),
  ),
  allow_late_submission: Type.Optional(Type.Boolean({ description: 'Default true.', examples: [true] })),
  grading_scheme: Type.Optional(NullableEnum(GRADING_SCHEMES, 'Overrides the category scheme; null inherits.')),
  max_score: Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'Denominator of the score; null reads as 100.', examples: [10] }))),
  weight: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000, description: 'Weight in the category rollup; default 1.', examples: [1] })),
  review_stages: Type.Optional(Type.Integer({ format: 'int32', minimum: 0, maximum: 5, description: 'Review stages; default 1.', examples: [1] })),
  rubric: Type.Optional(Type.Array(RubricCriterion, { maxItems: 50, description: 'Rubric criteria (ids unique).' })),
  checklist: Type.Optional(Type.Array(ChecklistItem, { maxItems: 100, description: 'Checklist items (ids unique).' })),
  attachments: Type.Optional(Type.Array(FileInput, { maxItems: 50, description: 'File objects.' })),
  custom_fields: Type.Optional(CustomFields),
  template_id: Type.Optional(Nullable(Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description: 'Template.', examples: [5] }))),
};

export const CreateTaskBody = Type.Object(
  {
    title: Title,
    status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('published')], { description: 'Default draft.', examples: ['published'] })),
    source: Type.Optional(Enum(TASK_SOURCES, 'Where the task came from; default api.')),
    ...writableTaskFields,
  },
  { additionalProperties: false, examples: [{ title: 'Week 3 essay', due_at: '2026-12-01T17:00:00.000Z', submission_mode: 'files', required_files: 1, max_score: 10 }] },
);
export const UpdateTaskBody = Type.Object(
  {
    title: Type.Optional(Title),
    status: Type.Optional(Enum(TASK_STATUSES, 'Move the task (see docs/decisions.md for the allowed moves).')),
    actor_user_id: Type.Optional(ActorUserId(false)),
    ...writableTaskFields,
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ status: 'published', expected_updated_at: '2026-11-21T09:30:00.000Z' }] },
);
export const ListTasksQuery = ListQuery({
  status: Type.Optional(Enum(TASK_STATUSES, 'Only this status.')),
  category_id: Type.Optional(Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description: 'Only this category.', examples: [3] })),
  priority: Type.Optional(Enum(PRIORITIES, 'Only this priority.')),
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive match on title.', examples: ['essay'] })),
});

export const Deleted = Type.Object(
  { id: Id('Deleted id.'), deleted: Type.Literal(true, { description: 'Always true.', examples: [true] }) },
  { title: 'TasksDeleted', additionalProperties: false },
);

// Assignments

export const ChecklistState = Type.Object(
  {
    id: Type.String({ maxLength: 64, description: 'Checklist item id.', examples: ['c1'] }),
    checked_at: Timestamp,
    checked_by: UserId('Who checked it.'),
    note: Nullable(ShortText(2000, 'Note given when checking.', 'Signed by the client.')),
    file: Nullable(FileObject),
  },
  { additionalProperties: false },
);

export const Assignment = Type.Object(
  {
    id: Id('Assignment id.'),
    task_id: Id('Task id.'),
    assignee_user_id: UserId('Who holds it.'),
    assigned_by: UserId('Who assigned it.'),
    group_id: Nullable(Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description: 'Group sent when assigning.', examples: [1] })),
    delegated_by: Nullable(UserId('Who delegated it last.')),
    delegation_reason: Nullable(ShortText(2000, 'Why.', 'On leave')),
    status: Enum(ASSIGNMENT_STATUSES, 'Status.'),
    due_at: TimestampField('Current deadline.'),
    original_due_at: TimestampField('Deadline it was assigned with.'),
    checklist_state: Type.Array(ChecklistState, { maxItems: 100, description: 'Checked items.' }),
    custom_fields: Type.Record(Type.String({ maxLength: 63 }), CustomFieldValue, { description: 'Values for workspace-defined fields.', examples: [{}] }),
    score: Nullable(Score('Score of the final review stage.')),
    attempt_count: Type.Integer({ format: 'int32', minimum: 0, maximum: 100000, description: 'Submissions made.', examples: [1] }),
    started_at: Nullable(Timestamp),
    submitted_at: Nullable(Timestamp),
    completed_at: Nullable(Timestamp),
    reopened_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'TasksAssignment', additionalProperties: false },
);

export const Submission = Type.Object(
  {
    id: Id('Submission id.'),
    assignment_id: Id('Assignment id.'),
    attempt_no: Type.Integer({ format: 'int32', minimum: 1, maximum: 100000, description: 'Attempt number, from 1.', examples: [1] }),
    note: Nullable(ShortText(20000, 'Note.', 'Done, see attached.')),
    files: Type.Array(FileObject, { maxItems: 50, description: 'File objects.' }),
    custom_fields: Type.Record(Type.String({ maxLength: 63 }), CustomFieldValue, { description: 'Values for workspace-defined fields.', examples: [{}] }),
    is_late: Type.Boolean({ description: 'Submitted after the assignment due_at.', examples: [false] }),
    submitted_at: Timestamp,
  },
  { title: 'TasksSubmission', additionalProperties: false },
);

export const RubricScore = Type.Object(
  { criterion_id: Type.String({ maxLength: 64, description: 'Rubric criterion id.', examples: ['c1'] }), score: Score('Points on this criterion.') },
  { additionalProperties: false },
);

export const Review = Type.Object(
  {
    id: Id('Review id.'),
    submission_id: Id('Submission id.'),
    reviewer_id: UserId('Reviewer.'),
    stage: Type.Integer({ format: 'int32', minimum: 1, maximum: 5, description: 'Review stage, from 1.', examples: [1] }),
    decision: Enum(DECISIONS, 'Decision.'),
    feedback: Nullable(ShortText(20000, 'Feedback.', 'Well argued.')),
    score: Nullable(Score('Score computed by the grading scheme against max_score.')),
    grade: Nullable(ShortText(2, 'Letter of the score (letter table in docs/decisions.md).', 'B')),
    rubric_scores: Type.Array(RubricScore, { maxItems: 50, description: 'Scores per criterion (rubric scheme).' }),
    created_at: Timestamp,
  },
  { title: 'TasksReview', additionalProperties: false },
);

export const AssignmentEvent = Type.Object(
  {
    id: Id('Event id.'),
    assignment_id: Id('Assignment id.'),
    event_type: Enum(EVENT_TYPES, 'What happened.'),
    from_user_id: Nullable(UserId('Holder before.')),
    to_user_id: Nullable(UserId('Holder after.')),
    from_value: Nullable(ShortText(200, 'Value before (status, deadline...).', '2026-12-01T17:00:00.000Z')),
    to_value: Nullable(ShortText(200, 'Value after.', '2026-12-08T17:00:00.000Z')),
    changed_by: UserId('Actor.'),
    reason: Nullable(ShortText(2000, 'Reason given.', 'On leave')),
    created_at: Timestamp,
  },
  { title: 'TasksAssignmentEvent', additionalProperties: false },
);

export const AssignmentDetail = Type.Object(
  {
    assignment: Assignment,
    task: Task,
    submissions: Type.Array(Submission, { maxItems: 100000, description: 'Every attempt, newest first.' }),
    reviews: Type.Array(Review, { maxItems: 100000, description: 'Reviews of its submissions, oldest first.' }),
    events: Type.Array(AssignmentEvent, { maxItems: 100000, description: 'Full history, oldest first.' }),
  },
  { title: 'TasksAssignmentDetail', additionalProperties: false },
);

const Reason = Type.String({ minLength: 1, maxLength: 2000, description: 'Why.', examples: ['On leave'] });

export const AssignBody = Type.Object(
  {
    user_ids: Type.Optional(
      Type.Array(UserId('A user to assign.'), {
        minItems: 1,
        maxItems: 100,
        uniqueItems: true,
        description: 'Users to assign (required unless assignee_user_ids or assignee_user_id is sent).',
        examples: [[7, 8]],
      }),
    ),
    assignee_user_ids: Type.Optional(
      Type.Array(UserId('A user to assign.'), { minItems: 1, maxItems: 100, uniqueItems: true, description: 'Same as user_ids.', examples: [[7, 8]] }),
    ),
    assignee_user_id: Type.Optional(UserId('One user to assign (same as user_ids: [n]).')),
    actor_user_id: ActorUserId(true),
    due_at: Type.Optional(Instant('Due override; defaults to the task due_at.')),
    group_id: Type.Optional(Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description: 'Group the assignment belongs to.', examples: [1] })),
    custom_fields: Type.Optional(CustomFields),
  },
  { additionalProperties: false, examples: [{ user_ids: [7], actor_user_id: 1 }] },
);
export const AssignReply = Type.Array(Assignment, { maxItems: 100, description: 'One assignment per user, in the order sent.' });

export const ListAssignmentsQuery = ListQuery({
  assignee_user_id: Type.Optional(Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description: 'Whose assignments (the assignee view).', examples: [7] })),
  status: Type.Optional(Enum(ASSIGNMENT_STATUSES, 'Only this status.')),
  task_id: Type.Optional(Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description: 'Only this task.', examples: [42] })),
  include_hidden: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'Show assignments of paused tasks and of scheduled tasks before starts_at.', examples: ['true'] }),
  ),
});

export const ActorBody = Type.Object(
  { actor_user_id: Type.Optional(ActorUserId(false)), reason: Type.Optional(Reason) },
  { additionalProperties: false, examples: [{ actor_user_id: 7 }] },
);
export const TransferBody = Type.Object(
  {
    actor_user_id: ActorUserId(true),
    to_user_id: Type.Optional(UserId('New holder (required unless assignee_user_id is sent).')),
    assignee_user_id: Type.Optional(UserId('Same as to_user_id.')),
    reason: Type.Optional(Reason),
  },
  { additionalProperties: false, examples: [{ actor_user_id: 1, to_user_id: 8, reason: 'On leave' }] },
);
export const DueBody = Type.Object(
  { due_at: Instant('New deadline.'), actor_user_id: Type.Optional(ActorUserId(false)), reason: Type.Optional(Reason) },
  { additionalProperties: false, examples: [{ due_at: '2026-12-08T17:00:00.000Z', actor_user_id: 1, reason: 'Sick note' }] },
);
export const UpdateAssignmentBody = Type.Object(
  {
    due_at: Type.Optional(Instant('New deadline (a due_changed event; original_due_at stays).')),
    custom_fields: Type.Optional(CustomFields),
    actor_user_id: Type.Optional(ActorUserId(false)),
    reason: Type.Optional(Reason),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ due_at: '2026-12-08T17:00:00.000Z', actor_user_id: 1, reason: 'Sick note' }] },
);
export const CheckBody = Type.Object(
  {
    actor_user_id: ActorUserId(true),
    checked: Type.Optional(Type.Boolean({ description: 'false unchecks; default true.', examples: [true] })),
    note: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'Required by items with requires_note.', examples: ['Signed by the client.'] })),
    file: Type.Optional(FileInput),
  },
  { additionalProperties: false, examples: [{ actor_user_id: 7, note: 'Signed by the client.' }] },
);
export const CheckParams = Type.Object(
  {
    id: Type.String({ format: 'int64-id', pattern: '^[1-9][0-9]{0,18}$', maxLength: 19, examples: ['42'] }),
    itemId: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$', examples: ['c1'] }),
  },
  { additionalProperties: false },
);

export const SubmitBody = Type.Object(
  {
    note: Type.Optional(Nullable(Type.String({ maxLength: 20000, description: 'Note; blank reads as none.', examples: ['Done, see attached.'] }))),
    files: Type.Optional(Files),
    custom_fields: Type.Optional(CustomFields),
    actor_user_id: Type.Optional(ActorUserId(false)),
  },
  { additionalProperties: false, examples: [{ note: 'Done, see attached.' }] },
);

export const ReviewBody = Type.Object(
  {
    actor_user_id: ActorUserId(true),
    decision: Enum(DECISIONS, 'Decision.'),
    feedback: Type.Optional(Nullable(Type.String({ maxLength: 20000, description: 'Feedback.', examples: ['Well argued.'] }))),
    score: Type.Optional(
      Nullable(
        Type.Number({ minimum: 0, maximum: 1_000_000, description: 'points: points out of max_score; percentage: 0-100; letter: points (or send grade).', examples: [8.5] }),
      ),
    ),
    grade: Type.Optional(Type.String({ maxLength: 2, description: 'letter scheme: A, B, C, D or F instead of score.', examples: ['B'] })),
    rubric_scores: Type.Optional(Type.Array(RubricScore, { maxItems: 50, description: 'rubric scheme: a score per criterion.' })),
  },
  { additionalProperties: false, examples: [{ actor_user_id: 1, decision: 'approved', score: 8.5 }] },
);

// Links

export const TaskLink = Type.Object(
  {
    id: Id('Link id.'),
    task_id: Id('Task id.'),
    source: Enum(LINK_SOURCES, 'Service id owning the record.'),
    source_id: ShortText(200, 'Row id in that service.', '42'),
    label: Nullable(ShortText(500, 'Resolved display label; null when the owning service is not installed.', 'INV-000001')),
    url: Nullable(ShortText(2048, 'Resolved dashboard URL.', '/dashboard/invoicing/invoices/42')),
  },
  { title: 'TasksTaskLink', additionalProperties: false },
);
export const LinkBody = Type.Object(
  {
    source: Enum(LINK_SOURCES, 'Service id owning the record.'),
    source_id: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_.:-]+$', description: 'Row id in that service.', examples: ['42'] }),
  },
  { additionalProperties: false, examples: [{ source: 'invoicing', source_id: '42' }] },
);
export const LinkParams = Type.Object(
  {
    id: Type.String({ format: 'int64-id', pattern: '^[1-9][0-9]{0,18}$', maxLength: 19, examples: ['42'] }),
    linkId: Type.String({ format: 'int64-id', pattern: '^[1-9][0-9]{0,18}$', maxLength: 19, examples: ['5'] }),
  },
  { additionalProperties: false },
);
export const ListLinksQuery = ListQuery({});

export type CategoryView = Static<typeof Category>;
export type TaskView = Static<typeof Task>;
export type AssignmentView = Static<typeof Assignment>;
export type SubmissionView = Static<typeof Submission>;
export type ReviewView = Static<typeof Review>;
export type EventView = Static<typeof AssignmentEvent>;
export type LinkView = Static<typeof TaskLink>;
export type FileView = Static<typeof FileObject>;
export type FileInputValue = Static<typeof FileInput>;
export type CreateTaskInput = Static<typeof CreateTaskBody>;
export type UpdateTaskInput = Static<typeof UpdateTaskBody>;
export type RubricCriterionValue = Static<typeof RubricCriterion>;
export type ChecklistItemValue = Static<typeof ChecklistItem>;
