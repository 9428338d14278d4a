import { createCompetitorRules } from './competitors.js';
import { createQuestionRules } from './questions.js';
import { createSearchDataRules } from './search-data.js';
import type { SeoDeps } from './shared.js';
import { createSiteRules } from './sites.js';

/** The SEO service: sites and their crawls, search data and topics, tracked questions, competitors and gaps. */
export function createSeoService(deps: SeoDeps) {
  const sites = createSiteRules(deps);
  const { requireSite, queueCrawl, ...siteRules } = sites;
  return {
    ...siteRules,
    ...createQuestionRules(deps, requireSite),
    ...createSearchDataRules(deps, requireSite),
    ...createCompetitorRules(deps, requireSite, queueCrawl),
  };
}

export type SeoService = ReturnType<typeof createSeoService>;
