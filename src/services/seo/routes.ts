import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requestContext } from '../../platform/http/request-context.js';
import { DataEnvelope, ErrorReply } from '../../platform/http/schemas.js';
import { ListEnvelope, toPage } from '../../platform/pagination/index.js';
import {
  AddQuestionsBody,
  AddQuestionsResult,
  Competitor,
  CompetitorParams,
  CompetitorsView,
  CrawlParams,
  CreateCompetitorBody,
  CreateSiteBody,
  Crawl,
  Deleted,
  ListPagesQuery,
  ListQuestionsQuery,
  ListSitesQuery,
  ListTopicsQuery,
  Page,
  Question,
  QuestionParams,
  SearchDataBody,
  SearchDataImport,
  Site,
  SiteParams,
  StartCrawlBody,
  Topic,
  UpdateQuestionBody,
  UpdateSiteBody,
} from './schemas.js';
import type { SeoService } from './service.js';

const VIEW = 'service.seo.view';
const MANAGE = 'service.seo.manage';

const ListCrawlsQuery = ListTopicsQuery;

export function seoRoutes(seo: SeoService) {
  return async function registerSeoRoutes(app: FastifyInstance): Promise<void> {
    const routes = app.withTypeProvider<TypeBoxTypeProvider>();
    const sites = { tags: ['SEO: sites'] };
    const questions = { tags: ['SEO: questions'] };
    const data = { tags: ['SEO: search data and topics'] };
    const competitors = { tags: ['SEO: competitors'] };

    // Sites

    routes.post('/sites', {
      config: { scope: MANAGE },
      schema: {
        ...sites,
        operationId: 'seoCreateSite',
        summary: 'Add a site (a domain to crawl and track)',
        body: CreateSiteBody,
        response: { 201: DataEnvelope(Site), 409: ErrorReply('conflict: a site with this domain exists.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await seo.createSite(requestContext(request), request.body) };
      },
    });

    routes.get('/sites', {
      config: { scope: VIEW },
      schema: { ...sites, operationId: 'seoListSites', summary: 'List sites, newest first', querystring: ListSitesQuery, response: { 200: ListEnvelope(Site) } },
      handler: async (request) => {
        const { limit, offset } = request.query;
        const { rows, total } = await seo.listSites(requestContext(request), { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/sites/:site_id', {
      config: { scope: VIEW },
      schema: { ...sites, operationId: 'seoGetSite', summary: 'Fetch a site', params: SiteParams, response: { 200: DataEnvelope(Site) } },
      handler: async (request) => ({ data: await seo.getSite(requestContext(request), request.params.site_id) }),
    });

    routes.patch('/sites/:site_id', {
      config: { scope: MANAGE },
      schema: {
        ...sites,
        operationId: 'seoUpdateSite',
        summary: 'Rename a site or change its domain (a new domain forgets crawled pages)',
        params: SiteParams,
        body: UpdateSiteBody,
        response: { 200: DataEnvelope(Site), 409: ErrorReply('conflict: another site has this domain. stale_update: the site changed since expected_updated_at.') },
      },
      handler: async (request) => ({ data: await seo.updateSite(requestContext(request), request.params.site_id, request.body) }),
    });

    routes.delete('/sites/:site_id', {
      config: { scope: MANAGE },
      schema: {
        ...sites,
        operationId: 'seoDeleteSite',
        summary: 'Delete a site with its pages, search data, topics, questions and competitors',
        params: SiteParams,
        response: { 200: DataEnvelope(Deleted) },
      },
      handler: async (request) => ({ data: await seo.deleteSite(requestContext(request), request.params.site_id) }),
    });

    routes.post('/sites/:site_id/crawl', {
      config: { scope: MANAGE },
      schema: {
        ...sites,
        operationId: 'seoCrawlSite',
        summary: 'Crawl the site in the background (answers the crawl already queued or running, if any)',
        params: SiteParams,
        body: StartCrawlBody,
        response: { 202: DataEnvelope(Crawl) },
      },
      handler: async (request, reply) => {
        reply.code(202);
        return { data: await seo.crawlSite(requestContext(request), request.params.site_id, request.body ?? {}) };
      },
    });

    routes.get('/sites/:site_id/crawls', {
      config: { scope: VIEW },
      schema: {
        ...sites,
        operationId: 'seoListCrawls',
        summary: 'List crawls of the site and its competitors, newest first',
        params: SiteParams,
        querystring: ListCrawlsQuery,
        response: { 200: ListEnvelope(Crawl) },
      },
      handler: async (request) => {
        const { limit, offset } = request.query;
        const { rows, total } = await seo.listCrawls(requestContext(request), request.params.site_id, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/sites/:site_id/crawls/:crawl_id', {
      config: { scope: VIEW },
      schema: { ...sites, operationId: 'seoGetCrawl', summary: 'Fetch a crawl and its progress', params: CrawlParams, response: { 200: DataEnvelope(Crawl) } },
      handler: async (request) => ({ data: await seo.getCrawl(requestContext(request), request.params.site_id, request.params.crawl_id) }),
    });

    routes.get('/sites/:site_id/pages', {
      config: { scope: VIEW },
      schema: {
        ...sites,
        operationId: 'seoListPages',
        summary: "List the pages of the latest crawl, by URL (the site's own, or a competitor's)",
        params: SiteParams,
        querystring: ListPagesQuery,
        response: { 200: ListEnvelope(Page) },
      },
      handler: async (request) => {
        const { limit, offset, competitor_id } = request.query;
        const { rows, total } = await seo.listPages(requestContext(request), request.params.site_id, competitor_id?.toLowerCase(), { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    // Search data and topics

    routes.post('/sites/:site_id/search-data', {
      config: { scope: MANAGE },
      schema: {
        ...data,
        operationId: 'seoImportSearchData',
        summary: 'Import search query rows (as a Search Console export gives them) and rebuild the topics',
        params: SiteParams,
        body: SearchDataBody,
        response: { 200: DataEnvelope(SearchDataImport) },
      },
      handler: async (request) => ({ data: await seo.importSearchData(requestContext(request), request.params.site_id, request.body) }),
    });

    routes.get('/sites/:site_id/topics', {
      config: { scope: VIEW },
      schema: {
        ...data,
        operationId: 'seoListTopics',
        summary: 'List the topics of the current build, most seen first',
        params: SiteParams,
        querystring: ListTopicsQuery,
        response: { 200: ListEnvelope(Topic) },
      },
      handler: async (request) => {
        const { limit, offset } = request.query;
        const { rows, total } = await seo.listTopics(requestContext(request), request.params.site_id, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    // Questions

    routes.post('/sites/:site_id/questions', {
      config: { scope: MANAGE },
      schema: {
        ...questions,
        operationId: 'seoAddQuestions',
        summary: 'Add tracked questions (at most 50; duplicates are never created, ignored ones are reopened)',
        params: SiteParams,
        body: AddQuestionsBody,
        response: { 200: DataEnvelope(AddQuestionsResult), 409: ErrorReply('conflict: the site tracks the most questions allowed.') },
      },
      handler: async (request) => ({ data: await seo.addQuestions(requestContext(request), request.params.site_id, request.body) }),
    });

    routes.get('/sites/:site_id/questions', {
      config: { scope: VIEW },
      schema: {
        ...questions,
        operationId: 'seoListQuestions',
        summary: 'List tracked questions, newest first',
        params: SiteParams,
        querystring: ListQuestionsQuery,
        response: { 200: ListEnvelope(Question) },
      },
      handler: async (request) => {
        const { limit, offset, ...filters } = request.query;
        const { rows, total } = await seo.listQuestions(requestContext(request), request.params.site_id, filters, { limit, offset });
        return toPage(rows, total, { limit, offset });
      },
    });

    routes.get('/sites/:site_id/questions/:question_id', {
      config: { scope: VIEW },
      schema: { ...questions, operationId: 'seoGetQuestion', summary: 'Fetch a tracked question', params: QuestionParams, response: { 200: DataEnvelope(Question) } },
      handler: async (request) => ({ data: await seo.getQuestion(requestContext(request), request.params.site_id, request.params.question_id) }),
    });

    routes.patch('/sites/:site_id/questions/:question_id', {
      config: { scope: MANAGE },
      schema: {
        ...questions,
        operationId: 'seoUpdateQuestion',
        summary: 'Change the status of a question (open, answered, ignored) or its AI monitoring',
        params: QuestionParams,
        body: UpdateQuestionBody,
        response: {
          200: DataEnvelope(Question),
          409: ErrorReply('ai_monitor_limit_reached: the plan limit of AI-monitored questions is reached. stale_update: the question changed since expected_updated_at.'),
        },
      },
      handler: async (request) => ({ data: await seo.updateQuestion(requestContext(request), request.params.site_id, request.params.question_id, request.body) }),
    });

    routes.delete('/sites/:site_id/questions/:question_id', {
      config: { scope: MANAGE },
      schema: { ...questions, operationId: 'seoDeleteQuestion', summary: 'Stop tracking a question', params: QuestionParams, response: { 200: DataEnvelope(Deleted) } },
      handler: async (request) => ({ data: await seo.deleteQuestion(requestContext(request), request.params.site_id, request.params.question_id) }),
    });

    // Competitors

    routes.post('/sites/:site_id/competitors', {
      config: { scope: MANAGE },
      schema: {
        ...competitors,
        operationId: 'seoCreateCompetitor',
        summary: 'Add a competitor of the site',
        params: SiteParams,
        body: CreateCompetitorBody,
        response: { 201: DataEnvelope(Competitor), 409: ErrorReply('conflict: already a competitor, the site itself, or the most competitors allowed.') },
      },
      handler: async (request, reply) => {
        reply.code(201);
        return { data: await seo.createCompetitor(requestContext(request), request.params.site_id, request.body) };
      },
    });

    routes.get('/sites/:site_id/competitors', {
      config: { scope: VIEW },
      schema: {
        ...competitors,
        operationId: 'seoCompetitorsView',
        summary: 'Competitors and topic gaps (gaps once the site is crawled, topics exist and a competitor has been read)',
        params: SiteParams,
        response: { 200: DataEnvelope(CompetitorsView) },
      },
      handler: async (request) => ({ data: await seo.competitorsView(requestContext(request), request.params.site_id) }),
    });

    routes.delete('/sites/:site_id/competitors/:competitor_id', {
      config: { scope: MANAGE },
      schema: {
        ...competitors,
        operationId: 'seoDeleteCompetitor',
        summary: 'Remove a competitor and its pages',
        params: CompetitorParams,
        response: { 200: DataEnvelope(Deleted) },
      },
      handler: async (request) => ({ data: await seo.deleteCompetitor(requestContext(request), request.params.site_id, request.params.competitor_id) }),
    });

    routes.post('/sites/:site_id/competitors/:competitor_id/crawl', {
      config: { scope: MANAGE },
      schema: {
        ...competitors,
        operationId: 'seoCrawlCompetitor',
        summary: 'Read a competitor with the same crawler, in the background',
        params: CompetitorParams,
        body: StartCrawlBody,
        response: { 202: DataEnvelope(Crawl) },
      },
      handler: async (request, reply) => {
        reply.code(202);
        return { data: await seo.crawlCompetitor(requestContext(request), request.params.site_id, request.params.competitor_id, request.body ?? {}) };
      },
    });
  };
}
