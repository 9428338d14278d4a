import type { ServiceModule } from '../module.js';
import { formsRoutes } from './routes.js';
import { Submission } from './schemas.js';
import { createFormsService, type FormsService } from './service.js';

export type { FormsService } from './service.js';

/** Form definitions, submissions, read/unread marking and CSV export. */
export const formsModule: ServiceModule<FormsService> = {
  id: 'forms',
  migrations: new URL('./migrations/', import.meta.url),
  events: [{ type: 'forms.submission.created', description: 'A submission to a published form was received.', object: Submission }],
  create: (deps) => createFormsService(deps),
  routes: formsRoutes,
};
