import type { ServiceModule } from '../module.js';
import { createAiCheckHandler, SandboxAnswerEngine, type AnswerEngine } from './ai.js';
import { createCrawlHandler } from './crawl-job.js';
import { seoRoutes } from './routes.js';
import { Competitor, Crawl, Question, Site } from './schemas.js';
import { createSeoService, type SeoService } from './service.js';
import { AI_CHECK_JOB, CRAWL_JOB } from './shared.js';
import type { ServiceDeps } from '../module.js';

export type { SeoService } from './service.js';
export type { AnswerEngine } from './ai.js';
export { SandboxAnswerEngine } from './ai.js';
export { AI_CHECK_JOB, CRAWL_JOB } from './shared.js';

interface SeoSettings {
  aiMonitorLimit: number;
}

/** Registers the crawl and AI-check job handlers on `deps.jobs` (tests register them on a runner of their own). */
export function registerSeoJobs(deps: Pick<ServiceDeps, 'db' | 'clock' | 'events' | 'outbound' | 'jobs'>, engine: AnswerEngine = new SandboxAnswerEngine()): void {
  deps.jobs.register(CRAWL_JOB, createCrawlHandler(deps));
  deps.jobs.register(AI_CHECK_JOB, createAiCheckHandler({ ...deps, engine }));
}

/**
 * Websites: a crawler reading each site (and its competitors) as a background job, search
 * data imported from Search Console exports and clustered into topics, tracked questions
 * evaluated against the crawled pages, AI answer monitoring and topic gaps against competitors.
 */
export const seoModule: ServiceModule<SeoService, SeoSettings> = {
  id: 'seo',
  migrations: new URL('./migrations/', import.meta.url),
  events: [
    { type: 'seo.site.created', description: 'A site was added.', object: Site },
    { type: 'seo.site.updated', description: 'A site was renamed or moved, or a crawl of it completed (page_count, last_crawled_at).', object: Site },
    { type: 'seo.site.deleted', description: 'A site was deleted with everything tracked for it; the object is the site as it was.', object: Site },
    { type: 'seo.topics.rebuilt', description: 'Search data was imported and the topics rebuilt; the object is the site with its new topics_revision.', object: Site },
    { type: 'seo.crawl.queued', description: 'A crawl of a site or a competitor was queued.', object: Crawl },
    { type: 'seo.crawl.completed', description: 'A crawl ended within its budget; its pages replaced the earlier ones.', object: Crawl },
    { type: 'seo.crawl.failed', description: 'A crawl was given up (a refused or unreachable target).', object: Crawl },
    { type: 'seo.question.created', description: 'A tracked question was added.', object: Question },
    { type: 'seo.question.updated', description: 'A question changed status (reopened, answered, ignored) or AI monitoring.', object: Question },
    { type: 'seo.question.ai_checked', description: 'AI answers to a monitored question were checked (ai_latest).', object: Question },
    { type: 'seo.question.deleted', description: 'A question is no longer tracked; the object is the question as it was.', object: Question },
    { type: 'seo.competitor.created', description: 'A competitor was added to a site.', object: Competitor },
    { type: 'seo.competitor.updated', description: 'A crawl of a competitor completed (page_count, last_crawled_at).', object: Competitor },
    { type: 'seo.competitor.deleted', description: 'A competitor was removed with its pages.', object: Competitor },
  ],
  settings: ({ config }) => ({ aiMonitorLimit: config.seoAiMonitorLimit }),
  create: (deps) => {
    registerSeoJobs(deps);
    return createSeoService({ db: deps.db, jobs: deps.jobs, events: deps.events, aiMonitorLimit: deps.settings.aiMonitorLimit });
  },
  routes: seoRoutes,
};
