import { createEnrollmentRules } from './enrollments.js';
import { createMessageRules } from './messages.js';
import { createSequenceRules } from './sequences.js';
import { createShared, type OutreachDeps } from './shared.js';
import { createSuppressionRules } from './suppressions.js';

export { keywordOf, START_KEYWORDS, STOP_KEYWORDS } from './messages.js';

/** Message sequences by phone number, their enrollments, the messages sent and received, and the suppression list. */
export function createOutreachService(deps: OutreachDeps) {
  const shared = createShared(deps);
  return {
    ...createSequenceRules(deps, shared),
    ...createEnrollmentRules(deps, shared),
    ...createMessageRules(deps, shared),
    ...createSuppressionRules(deps, shared),
  };
}

export type OutreachService = ReturnType<typeof createOutreachService>;
