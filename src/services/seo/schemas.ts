import { Type, type Static } from 'typebox';
import { ExpectedUpdatedAt } from '../../platform/concurrency.js';
import { Nullable, ONE_LINE_NOT_BLANK, Timestamp, TimestampField, Uuid } from '../../platform/http/schemas.js';
import { ListQuery } from '../../platform/pagination/index.js';
import { COVERAGES, CRAWL_RUN_STATUSES, CRAWL_STATUSES, QUESTION_STATUSES } from './tables.js';

const Str = (maxLength: number, description: string, example: string) => Type.String({ maxLength, description, examples: [example] });
const Int = (description: string, example: number, maximum = 2_147_483_647) => Type.Integer({ format: 'int32', minimum: 0, maximum, description, examples: [example] });
const Id = (description: string) => Type.String({ ...Uuid, description });
const Enum = <T extends readonly string[]>(values: T, description: string) =>
  Type.Unsafe<T[number]>(
    Type.Union(
      values.map((value) => Type.Literal(value)),
      { description: `${description} One of ${values.join(', ')}.`, examples: [values[0]] },
    ),
  );

/** Limits of this service (documented in docs/decisions.md). */
export const MAX_QUESTIONS_PER_REQUEST = 50;
export const MAX_SEARCH_ROWS_PER_REQUEST = 1000;
export const MAX_CRAWL_PAGES = 500;
export const MAX_CRAWL_DEPTH = 10;
export const MAX_CRAWL_SECONDS = 300;
export const DEFAULT_CRAWL_BUDGET = { max_pages: 50, max_depth: 3, max_seconds: 60 } as const;

const DOMAIN_DESCRIPTION =
  'A host name (example.com), optionally with a port, or a URL (https://www.example.com/blog): stored as the lower-case host (IDN as punycode) with a non-default port; the URL, if given, is where crawls start.';
const DomainInput = Type.String({
  minLength: 1,
  maxLength: 300,
  pattern: ONE_LINE_NOT_BLANK,
  description: DOMAIN_DESCRIPTION,
  examples: ['example.com'],
});
const NameInput = Type.String({ minLength: 1, maxLength: 200, pattern: ONE_LINE_NOT_BLANK, description: 'Display name; trimmed.', examples: ['Example blog'] });

export const Site = Type.Object(
  {
    id: Id('Site id.'),
    domain: Str(300, 'Host name, lower case, with a port only when not the default.', 'example.com'),
    name: Str(200, 'Display name.', 'Example blog'),
    start_url: Str(2100, 'Where crawls start.', 'https://example.com/'),
    crawl_status: Enum(CRAWL_STATUSES, 'State of the latest crawl.'),
    last_crawled_at: Nullable(TimestampField('When the latest crawl finished; null before the first.')),
    page_count: Int('Pages recorded by the latest crawl (answered 2xx, HTML, not noindex).', 12),
    topics_revision: Nullable(Int('Build of the topics clustered from search data; null before the first import.', 3)),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'SeoSite', additionalProperties: false },
);

export const CreateSiteBody = Type.Object(
  { domain: DomainInput, name: Type.Optional(Type.String({ ...NameInput, description: 'Display name; trimmed. Default: the domain.' })) },
  { additionalProperties: false, examples: [{ domain: 'example.com', name: 'Example blog' }] },
);

export const UpdateSiteBody = Type.Object(
  {
    domain: Type.Optional(Type.String({ ...DomainInput, description: `${DOMAIN_DESCRIPTION} A new domain forgets the pages crawled so far.` })),
    name: Type.Optional(NameInput),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ name: 'Example' }] },
);

export const ListSitesQuery = ListQuery({});

export const SiteParams = Type.Object({ site_id: Type.String({ ...Uuid, description: 'Site id.' }) }, { additionalProperties: false });
const SiteId = Type.String({ ...Uuid, description: 'Site id.' });
export const QuestionParams = Type.Object({ site_id: SiteId, question_id: Type.String({ ...Uuid, description: 'Question id.' }) }, { additionalProperties: false });
export const CompetitorParams = Type.Object({ site_id: SiteId, competitor_id: Type.String({ ...Uuid, description: 'Competitor id.' }) }, { additionalProperties: false });
export const CrawlParams = Type.Object({ site_id: SiteId, crawl_id: Type.String({ ...Uuid, description: 'Crawl id.' }) }, { additionalProperties: false });

export const Deleted = Type.Object(
  { id: Id('The id of what was deleted.'), deleted: Type.Literal(true, { description: 'Always true.', examples: [true] }) },
  { title: 'DeletedSeoObject', additionalProperties: false },
);

// Crawls

export const StartCrawlBody = Type.Object(
  {
    max_pages: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_CRAWL_PAGES, description: `Pages to fetch at most; default ${DEFAULT_CRAWL_BUDGET.max_pages}.`, examples: [50] }),
    ),
    max_depth: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_CRAWL_DEPTH, description: `Links away from the start page at most; default ${DEFAULT_CRAWL_BUDGET.max_depth}.`, examples: [3] }),
    ),
    max_seconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_CRAWL_SECONDS, description: `Seconds of crawling at most; default ${DEFAULT_CRAWL_BUDGET.max_seconds}.`, examples: [60] }),
    ),
  },
  { additionalProperties: false, examples: [{ max_pages: 100, max_depth: 2 }] },
);

export const Crawl = Type.Object(
  {
    id: Id('Crawl id.'),
    site_id: Id('The site.'),
    competitor_id: Nullable(Id('The competitor read; null when the crawl reads the site itself.')),
    status: Enum(CRAWL_RUN_STATUSES, 'Where the crawl is.'),
    budget: Type.Object(
      {
        max_pages: Int('Pages to fetch at most.', 50),
        max_depth: Int('Links away from the start page at most.', 3),
        max_seconds: Int('Seconds of crawling at most.', 60),
      },
      { additionalProperties: false, description: 'The budget the crawl runs within.' },
    ),
    progress: Type.Object(
      {
        pages_crawled: Int('HTML pages read (2xx).', 10),
        pages_failed: Int('Pages that answered an error status, could not be reached or redirected too often.', 1),
        urls_blocked: Int('Links robots.txt did not allow.', 2),
        urls_queued: Int('Same-host URLs found so far (the start page included).', 25),
      },
      { additionalProperties: false, description: 'Counts so far; updated while the crawl runs.' },
    ),
    stop_reason: Nullable(Str(20, 'Why it stopped: completed (nothing left), max_pages, time_budget; null until it ends.', 'completed')),
    error: Nullable(Str(500, 'Why it failed (a refused or unreachable target).', 'Refused to connect to 10.0.0.1: not a public address (private).')),
    started_at: Nullable(TimestampField('When a worker began it.')),
    finished_at: Nullable(TimestampField('When it ended.')),
    created_at: Timestamp,
  },
  { title: 'SeoCrawl', additionalProperties: false },
);

// Pages

const PageQuestionSchema = Type.Object(
  {
    question: Str(300, 'The question as written.', 'How long does shipping take?'),
    answer: Str(1000, 'Text after the question heading, or the accepted answer of FAQ markup; cut at 1,000 characters.', 'Orders ship within two days.'),
    source: Enum(['heading', 'faq_schema'] as const, 'Where the page asks it: a heading, or FAQPage JSON-LD.'),
  },
  { additionalProperties: false },
);

export const Page = Type.Object(
  {
    id: Id('Page id.'),
    competitor_id: Nullable(Id('The competitor whose page this is; null for the site itself.')),
    url: Str(2100, 'The URL that answered (after redirects).', 'https://example.com/faq'),
    depth: Int('Links away from the start page.', 1),
    status_code: Int('HTTP status of the answer.', 200, 999),
    title: Nullable(Str(500, 'The <title>.', 'Shipping FAQ')),
    meta_description: Nullable(Str(1000, 'The meta description.', 'Answers about shipping and returns.')),
    headings: Type.Array(
      Type.Object(
        { level: Type.Integer({ minimum: 1, maximum: 6, description: 'h1 to h6.', examples: [2] }), text: Str(300, 'Heading text.', 'How long does shipping take?') },
        { additionalProperties: false },
      ),
      { maxItems: 200, description: 'Headings in document order.' },
    ),
    word_count: Int('Words of visible text.', 640),
    questions: Type.Array(PageQuestionSchema, { maxItems: 100, description: 'Questions the page answers: headings phrased as questions, then FAQPage entries.' }),
    crawled_at: Timestamp,
  },
  { title: 'SeoPage', additionalProperties: false },
);

export const ListPagesQuery = ListQuery({
  competitor_id: Type.Optional(Type.String({ ...Uuid, description: "A competitor's pages instead of the site's own." })),
});

// Search data and topics

const DateText = Type.String({ format: 'date', maxLength: 10, description: 'Day, YYYY-MM-DD.', examples: ['2026-11-01'] });

export const SearchDataBody = Type.Object(
  {
    rows: Type.Array(
      Type.Object(
        {
          query: Type.String({ minLength: 1, maxLength: 500, pattern: ONE_LINE_NOT_BLANK, description: 'The search query.', examples: ['how long does shipping take'] }),
          page: Type.String({ minLength: 1, maxLength: 2048, description: 'The page that appeared (an absolute http or https URL).', examples: ['https://example.com/faq'] }),
          impressions: Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Impressions that day.', examples: [120] }),
          clicks: Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Clicks that day; at most the impressions.', examples: [12] }),
          position: Type.Number({ minimum: 1, maximum: 1000, description: 'Average position that day (1 is the top).', examples: [4.2] }),
          date: DateText,
        },
        { additionalProperties: false },
      ),
      {
        minItems: 1,
        maxItems: MAX_SEARCH_ROWS_PER_REQUEST,
        description: `Rows as a Search Console export gives them, at most ${MAX_SEARCH_ROWS_PER_REQUEST} per request; a row for the same query, page and day replaces the earlier one.`,
      },
    ),
  },
  {
    additionalProperties: false,
    examples: [{ rows: [{ query: 'how long does shipping take', page: 'https://example.com/faq', impressions: 120, clicks: 12, position: 4.2, date: '2026-11-01' }] }],
  },
);

export const SearchDataImport = Type.Object(
  {
    imported: Int('Rows stored by this request.', 250),
    queries: Int('Distinct queries of the site now.', 80),
    topics: Int('Topics of the new build.', 12),
    revision: Int('The new build of the topics.', 4),
  },
  { title: 'SeoSearchDataImport', additionalProperties: false },
);

export const Topic = Type.Object(
  {
    id: Id('Topic id; the same cluster keeps its id across builds.'),
    label: Str(500, 'The query the topic formed around (its most seen).', 'shipping time'),
    terms: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 5, description: 'The highest-weighted terms.', examples: [['shipping', 'time']] }),
    query_count: Int('Queries in the topic.', 6),
    impressions: Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Impressions of its queries.', examples: [1200] }),
    clicks: Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Clicks of its queries.', examples: [80] }),
    revision: Int('The build this topic belongs to.', 4),
  },
  { title: 'SeoTopic', additionalProperties: false },
);

export const ListTopicsQuery = ListQuery({});

// Questions

const QuestionText = Type.String({
  minLength: 1,
  maxLength: 500,
  pattern: ONE_LINE_NOT_BLANK,
  description: 'The question; compared without case, quotes, extra spaces or end punctuation.',
  examples: ['How long does shipping take?'],
});

export const AddQuestionsBody = Type.Object(
  {
    questions: Type.Array(
      Type.Object(
        {
          question: QuestionText,
          monitor_in_ai: Type.Optional(
            Type.Boolean({
              description: 'true schedules checks of AI answers (within the plan limit, using no AI credits); false stops them; absent leaves them as they are.',
              examples: [true],
            }),
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_QUESTIONS_PER_REQUEST, description: `At most ${MAX_QUESTIONS_PER_REQUEST} questions.` },
    ),
  },
  { additionalProperties: false, examples: [{ questions: [{ question: 'How long does shipping take?', monitor_in_ai: true }] }] },
);

const CheckSchema = Type.Object(
  {
    key: Str(40, 'Stable key of the check.', 'question_on_page'),
    label: Str(200, 'What the check looks for.', 'The page asks the question (a heading or an FAQ entry)'),
    passed: Type.Boolean({ description: 'Whether the best page passes it.', examples: [true] }),
    weight: Int('Points of answer_score it is worth (the weights sum to 100).', 25, 100),
    detail: Str(500, 'What was found.', 'Asked as "How long does shipping take?" (heading).'),
  },
  { additionalProperties: false },
);

const DemandSchema = Type.Object(
  {
    impressions: Type.Integer({
      format: 'int64',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Impressions of the matching query over the period.',
      examples: [1200],
    }),
    clicks: Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Clicks of the matching query over the period.', examples: [80] }),
    position: Type.Number({ minimum: 0, description: 'Average position weighted by impressions; 0 when not measured.', examples: [4.2] }),
    measured: Type.Boolean({ description: 'Whether imported search data has a query for this question.', examples: [true] }),
    period: Str(21, 'First and last day of the data, YYYY-MM-DD/YYYY-MM-DD; empty when not measured.', '2026-10-01/2026-10-28'),
  },
  { additionalProperties: false, description: 'Search demand from imported search data.' },
);

export const AiLatest = Type.Object(
  {
    engine: Str(40, 'Answer engine asked.', 'sandbox'),
    model: Str(100, 'Model of the engine.', 'sandbox-1'),
    mentioned: Type.Boolean({ description: "Whether the answer mentions the site's domain or name.", examples: [true] }),
    cited_urls: Type.Array(Type.String({ maxLength: 2100 }), { maxItems: 20, description: 'URLs the answer cites.', examples: [['https://example.com/faq']] }),
    position: Nullable(Type.Integer({ minimum: 1, maximum: 20, description: 'Rank of the first citation of the site; null when not cited.', examples: [1] })),
    answer_excerpt: Str(500, 'Start of the answer.', 'Orders usually ship within two days.'),
    checked_at: Timestamp,
  },
  { additionalProperties: false, description: 'The latest AI answer check.' },
);

export const Question = Type.Object(
  {
    id: Id('Question id.'),
    question: Str(500, 'The question as first added.', 'How long does shipping take?'),
    kind: Str(20, 'Classification from its wording: definition, how_to, reason, comparison, quantity, time, place, entity, yes_no, other.', 'how_to'),
    intent: Str(20, 'Search intent: informational, commercial, transactional, navigational.', 'informational'),
    sources: Type.Array(Type.String({ maxLength: 20 }), { maxItems: 10, description: 'Where the question came from: api.', examples: [['api']] }),
    topic_id: Nullable(Id('The topic of its query (or the topic whose label it shares), of the current build.')),
    topic_label: Nullable(Str(500, 'Label of that topic.', 'shipping time')),
    query_id: Nullable(Id('The imported query it corresponds to.')),
    demand: DemandSchema,
    best_page_url: Nullable(Str(2100, 'The crawled page of the site that answers it best.', 'https://example.com/faq')),
    match_basis: Str(20, 'What the best page matched on: faq_schema, question_heading, title, heading, body_text, none.', 'question_heading'),
    coverage: Enum(COVERAGES, 'none: no page covers it; partial: a page is about it without asking and answering it; full: a page asks it and answers it directly.'),
    answer_score: Int('0-100: the weights of the checks the best page passes.', 70, 100),
    checks: Type.Array(CheckSchema, { maxItems: 20, description: 'Weighted checks of the best page; empty until the site has been crawled.' }),
    status: Enum(QUESTION_STATUSES, 'Workflow state; an ignored question is reopened when added again.'),
    ai_monitored: Type.Boolean({ description: 'Whether AI answers to it are checked on a schedule.', examples: [false] }),
    ai_priority: Int('Order of AI checks, higher first: 0-100 from its demand.', 10, 100),
    ai_models: Nullable(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 10, description: 'Engines asked; null when not monitored.', examples: [['sandbox']] })),
    ai_last_checked_at: Nullable(TimestampField('When AI answers were last checked.')),
    ai_next_check_at: Nullable(TimestampField('When they are checked next; null when not monitored.')),
    ai_latest: Nullable(AiLatest),
    author_label: Nullable(Str(200, 'Who added it; null when added through the API.', 'Ada')),
    evaluated_at: Nullable(TimestampField('When it was last evaluated against crawled pages and search data; null before the site is crawled.')),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'SeoQuestion', additionalProperties: false },
);

export const AddQuestionsResult = Type.Object(
  {
    created: Int('Questions added by this request.', 2),
    existing: Int('Questions sent that were already tracked (or sent twice).', 1),
    questions: Type.Array(Question, { maxItems: MAX_QUESTIONS_PER_REQUEST, description: 'Every question sent, in order, as stored.' }),
    ai_monitoring: Type.Object(
      {
        limit: Int('AI-monitored questions allowed per tenant and mode (SEO_AI_MONITOR_LIMIT).', 25),
        monitored: Int('AI-monitored questions now.', 3),
        not_monitored: Int('Questions of this request that asked for monitoring and did not get it, the limit being reached.', 0),
      },
      { additionalProperties: false, description: 'The plan limit of AI monitoring and where it stands.' },
    ),
  },
  { title: 'SeoAddQuestionsResult', additionalProperties: false },
);

export const ListQuestionsQuery = ListQuery({
  status: Type.Optional(Enum(QUESTION_STATUSES, 'Only questions in this state.')),
  coverage: Type.Optional(Enum(COVERAGES, 'Only questions with this coverage.')),
  topic_id: Type.Optional(Type.String({ ...Uuid, description: 'Only questions of this topic.' })),
});

export const UpdateQuestionBody = Type.Object(
  {
    status: Type.Optional(Enum(QUESTION_STATUSES, 'The new state.')),
    ai_monitored: Type.Optional(Type.Boolean({ description: 'Start (within the plan limit) or stop AI answer checks.', examples: [true] })),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false, examples: [{ status: 'answered' }] },
);

// Competitors

export const Competitor = Type.Object(
  {
    id: Id('Competitor id.'),
    site_id: Id('The site it competes with.'),
    domain: Str(300, 'Host name, lower case.', 'rival.example'),
    name: Str(200, 'Display name.', 'Rival'),
    start_url: Str(2100, 'Where crawls start.', 'https://rival.example/'),
    crawl_status: Enum(CRAWL_STATUSES, 'State of the latest crawl.'),
    last_crawled_at: Nullable(TimestampField('When the latest crawl finished; null before the first.')),
    page_count: Int('Pages recorded by the latest crawl.', 30),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'SeoCompetitor', additionalProperties: false },
);

export const CreateCompetitorBody = Type.Object(
  { domain: DomainInput, name: Type.Optional(Type.String({ ...NameInput, description: 'Display name; trimmed. Default: the domain.', examples: ['Rival'] })) },
  { additionalProperties: false, examples: [{ domain: 'rival.example', name: 'Rival' }] },
);

const Gap = Type.Object(
  {
    topic_id: Id('The topic.'),
    topic_label: Str(500, 'Its label.', 'shipping time'),
    impressions: Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "The topic's impressions: the gap's size.", examples: [1200] }),
    clicks: Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "The topic's clicks.", examples: [80] }),
    query_count: Int('Queries in the topic.', 6),
    competitors: Type.Array(
      Type.Object(
        {
          competitor_id: Id('A competitor covering the topic.'),
          domain: Str(300, 'Its domain.', 'rival.example'),
          url: Str(2100, 'Its page that covers the topic.', 'https://rival.example/shipping'),
        },
        { additionalProperties: false },
      ),
      { maxItems: 100, description: 'Competitors whose crawled pages cover the topic.' },
    ),
  },
  { additionalProperties: false },
);

export const CompetitorsView = Type.Object(
  {
    competitors: Type.Array(Competitor, { maxItems: 100, description: 'Competitors set up for the site.' }),
    gaps: Type.Array(Gap, { maxItems: 1000, description: "Topics competitor pages cover and the site's do not, largest first (impressions, then clicks)." }),
    crawled: Type.Boolean({ description: 'Whether any competitor has been read yet.', examples: [true] }),
    measurable: Type.Boolean({ description: 'False when gaps cannot be computed yet (see reason).', examples: [true] }),
    reason: Type.Union([Type.Literal('needs_crawl'), Type.Literal('no_topics'), Type.Null()], {
      description: 'needs_crawl when the site itself has not been crawled; no_topics when search data has not been clustered; null when gaps were computed.',
      examples: ['needs_crawl'],
    }),
    revision: Nullable(Int('Build of the topics the gaps were computed against.', 4)),
    note: Str(1000, 'What the data is and is not.', 'Gaps are computed from the pages last crawled.'),
  },
  { title: 'SeoCompetitorsView', additionalProperties: false },
);

export type SiteView = Static<typeof Site>;
export type CreateSiteInput = Static<typeof CreateSiteBody>;
export type UpdateSiteInput = Static<typeof UpdateSiteBody>;
export type CrawlView = Static<typeof Crawl>;
export type StartCrawlInput = Static<typeof StartCrawlBody>;
export type PageView = Static<typeof Page>;
export type SearchDataInput = Static<typeof SearchDataBody>;
export type TopicView = Static<typeof Topic>;
export type QuestionView = Static<typeof Question>;
export type AddQuestionsInput = Static<typeof AddQuestionsBody>;
export type UpdateQuestionInput = Static<typeof UpdateQuestionBody>;
export type CompetitorView = Static<typeof Competitor>;
export type CreateCompetitorInput = Static<typeof CreateCompetitorBody>;
export type CompetitorsViewData = Static<typeof CompetitorsView>;
