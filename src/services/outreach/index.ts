import type { TwilioSettings } from '../../config/index.js';
import type { ServiceModule } from '../module.js';
import { SandboxProvider, TwilioProvider, UnconfiguredProvider } from './provider.js';
import { outreachRoutes } from './routes.js';
import { registerOutreachJobs } from './scheduler.js';
import { Enrollment, Message, Sequence, Suppression } from './schemas.js';
import { createOutreachService, type OutreachService } from './service.js';

export type { OutreachService } from './service.js';
export type { MessagingProvider } from './provider.js';
export { MAX_SEND_ATTEMPTS, registerOutreachJobs, STEP_JOB } from './scheduler.js';
export { ProviderError, SandboxProvider, SANDBOX_FAILING_NUMBERS } from './provider.js';

interface OutreachSettings {
  twilio: TwilioSettings | undefined;
}

/**
 * SMS sequences sent to people by phone number: a durable job per due step sends it through
 * the sandbox (test mode) or Twilio (live mode, when TWILIO_* is set), inside the sequence's
 * send window; replies and STOP keywords end enrollments; a suppression list per tenant.
 */
export const outreachModule: ServiceModule<OutreachService, OutreachSettings> = {
  id: 'outreach',
  migrations: new URL('./migrations/', import.meta.url),
  events: [
    { type: 'outreach.sequence.created', description: 'A sequence was created.', object: Sequence },
    { type: 'outreach.sequence.updated', description: 'A sequence was updated (name, status, steps, window or time zone).', object: Sequence },
    { type: 'outreach.sequence.deleted', description: 'A sequence without enrollments was deleted; the object is the sequence as it was.', object: Sequence },
    { type: 'outreach.enrollment.created', description: 'A person was enrolled in a sequence.', object: Enrollment },
    { type: 'outreach.enrollment.exited', description: 'A person left a sequence early: replied, opted_out or removed (exit_reason).', object: Enrollment },
    { type: 'outreach.enrollment.completed', description: 'The last step of a sequence was sent to a person.', object: Enrollment },
    { type: 'outreach.enrollment.failed', description: 'A step could not be sent after every retry; the person gets no more messages.', object: Enrollment },
    { type: 'outreach.message.sent', description: 'A step message was accepted by the provider.', object: Message },
    { type: 'outreach.message.status_changed', description: 'An outbound message became delivered or failed (status callback or final send failure).', object: Message },
    { type: 'outreach.message.received', description: 'A message from a person arrived (POST /outreach/inbound).', object: Message },
    { type: 'outreach.suppression.created', description: 'A number was added to the suppression list (STOP keyword or by hand).', object: Suppression },
    { type: 'outreach.suppression.deleted', description: 'A number was removed from the suppression list (START/UNSTOP or by hand).', object: Suppression },
  ],
  settings: ({ config }) => ({ twilio: config.twilio }),
  create: (deps) => {
    const { twilio } = deps.settings;
    registerOutreachJobs({
      db: deps.db,
      jobs: deps.jobs,
      events: deps.events,
      providers: { test: new SandboxProvider(), live: twilio ? new TwilioProvider(twilio, deps.outbound) : new UnconfiguredProvider() },
    });
    return createOutreachService({ db: deps.db, jobs: deps.jobs, events: deps.events });
  },
  routes: outreachRoutes,
};
