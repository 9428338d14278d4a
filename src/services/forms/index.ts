import type { Owner } from '../../db/owned.js';
import { isUuid } from '../../lib/ids.js';
import type { RequestContext } from '../../platform/context.js';
import type { ServiceModule } from '../module.js';
import { formsRoutes } from './routes.js';
import { Submission } from './schemas.js';
import { createFormsService, type FormsService } from './service.js';

export type { FormsService } from './service.js';

declare module '../registry.js' {
  interface ServiceApis {
    forms: FormsService & FormLookup;
  }
}

/** For links from other services (tasks): a form's label (its name) and dashboard URL, or null when there is no such form. */
export interface FormLookup {
  describeRecord(owner: Owner, id: string): Promise<{ label: string; url: string } | null>;
}

function withFormLookup(service: FormsService): FormsService & FormLookup {
  return Object.assign(service, {
    async describeRecord(owner: Owner, id: string) {
      if (!isUuid(id)) return null;
      try {
        const form = await service.getForm(owner as RequestContext, id.toLowerCase());
        return { label: form.name, url: `/dashboard/forms/forms/${form.id}` };
      } catch (error) {
        if ((error as { code?: string }).code === 'not_found') return null;
        throw error;
      }
    },
  });
}

/** Form definitions, submissions, read/unread marking and CSV export. */
export const formsModule: ServiceModule<FormsService> = {
  id: 'forms',
  migrations: new URL('./migrations/', import.meta.url),
  events: [{ type: 'forms.submission.created', description: 'A submission to a published form was received.', object: Submission }],
  create: (deps) => withFormLookup(createFormsService(deps)),
  routes: formsRoutes,
};
