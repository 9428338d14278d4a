import type { ServiceModule } from '../module.js';
import { affiliatesPages } from './pages.js';
import { PlatformSalesReader } from './platform-sales.js';
import { affiliatesRoutes } from './routes.js';
import { Conversion, Partner, Programme, Referral, Tier } from './schemas.js';
import { createAffiliatesService, type AffiliatesService } from './service.js';

export type { AffiliatesService } from './service.js';

interface AffiliatesSettings {
  /** Base of the public referral links. */
  publicBaseUrl: string;
}

/** Referral programmes, tiers, partners, referral tracking (public /r/{code}) and commissions. */
export const affiliatesModule: ServiceModule<AffiliatesService, AffiliatesSettings> = {
  id: 'affiliates',
  migrations: new URL('./migrations/', import.meta.url),
  events: [
    { type: 'affiliates.programme.created', description: 'A referral programme was created.', object: Programme },
    { type: 'affiliates.programme.updated', description: 'A programme was updated.', object: Programme },
    { type: 'affiliates.tier.created', description: 'A tier was added to a programme.', object: Tier },
    { type: 'affiliates.tier.updated', description: 'A tier was updated.', object: Tier },
    { type: 'affiliates.partner.created', description: 'A partner was created; the object is the partner as GET returns it.', object: Partner },
    { type: 'affiliates.partner.updated', description: 'A partner was updated; the object is the partner as GET returns it.', object: Partner },
    { type: 'affiliates.partner.paused', description: 'An active partner was paused: it earns no new commission.', object: Partner },
    { type: 'affiliates.partner.reactivated', description: 'A paused partner became active again.', object: Partner },
    { type: 'affiliates.referral.created', description: 'A customer or visitor was attributed to a partner by the API (not a click).', object: Referral },
    { type: 'affiliates.referral.attributed', description: 'The visitor of a referral link click was attributed to a customer.', object: Referral },
    { type: 'affiliates.conversion.created', description: 'A sale was credited to a partner, with its commission (voided at once when it earned nothing).', object: Conversion },
    { type: 'affiliates.conversion.approved', description: 'A pending commission was approved.', object: Conversion },
    { type: 'affiliates.conversion.paid', description: 'An approved commission was marked paid.', object: Conversion },
    {
      type: 'affiliates.conversion.voided',
      description: 'A pending or approved commission was voided (the sale was refunded: by request, or by a full refund of its checkout session).',
      object: Conversion,
    },
  ],
  settings: ({ config }) => ({ publicBaseUrl: config.publicBaseUrl }),
  create: (deps) => {
    const service = createAffiliatesService({ db: deps.db, clock: deps.clock, events: deps.events, services: deps.services, publicBaseUrl: deps.settings.publicBaseUrl });
    deps.jobs.addWorker(
      new PlatformSalesReader({
        db: deps.db,
        events: deps.events,
        clock: deps.clock,
        record: service.record,
        voidRefunded: service.voidRefundedSale,
        onError: (error) => deps.jobs.reportError(error, 'affiliates platform sales'),
      }),
    );
    return service;
  },
  routes: affiliatesRoutes,
  pages: affiliatesPages,
};
