import type { ServiceModule } from '../module.js';
import { crmRoutes } from './routes.js';
import { Contact } from './schemas.js';
import { createCrmService, type CrmService } from './service.js';

export type { CrmService } from './service.js';

declare module '../registry.js' {
  interface ServiceApis {
    crm: CrmService;
  }
}

/** Contacts and companies; other services use `CrmService`, never the crm tables. */
export const crmModule: ServiceModule<CrmService> = {
  id: 'crm',
  migrations: new URL('./migrations/', import.meta.url),
  events: [{ type: 'crm.contact.created', description: 'A contact was created.', object: Contact }],
  create: (deps) => createCrmService(deps),
  routes: crmRoutes,
};
