import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { ServiceRegistry } from '../registry.js';
import { createConversionRules } from './conversions.js';
import { createPartnerRules } from './partners.js';
import { partnerPresenter } from './present.js';
import { createProgrammeRules } from './programmes.js';
import * as repository from './repository.js';
import { createTrackingRules } from './tracking.js';

export interface AffiliatesDeps {
  db: Db;
  clock: Clock;
  events: EventLog;
  services: ServiceRegistry;
  /** Base of the public referral links (`{base_url}/r/{code}`). */
  publicBaseUrl: string;
}

/**
 * Referral programmes and their tiers, partners with codes and lifetime totals, referral
 * tracking (public link clicks, attributed customers) and the commission engine.
 */
export function createAffiliatesService({ db, clock, events, services, publicBaseUrl }: AffiliatesDeps) {
  const tables = repository.affiliatesDb(db);
  const presenter = partnerPresenter(publicBaseUrl);
  return {
    ...createProgrammeRules(tables, events),
    ...createPartnerRules(tables, events, services, presenter),
    ...createTrackingRules(tables, events, services, clock),
    ...createConversionRules(tables, events),
  };
}

export type AffiliatesService = ReturnType<typeof createAffiliatesService>;
