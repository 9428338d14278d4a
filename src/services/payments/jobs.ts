import type { Db } from '../../db/database.js';
import { isUuid } from '../../lib/ids.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobHandler, JobRunner } from '../../platform/jobs/runner.js';
import type { Owner } from '../../platform/context.js';
import { sessionPresenter } from './present.js';
import * as repository from './repository.js';
import { EXPIRE_SESSION_JOB } from './service.js';

export interface PaymentJobsDeps {
  db: Db;
  events: EventLog;
  /** Base of the session page URL that expiry events carry. */
  publicBaseUrl: string;
}

/**
 * Expires the job's session when its time has come. The conditional update is the guard:
 * a paid session, a second run or another process change nothing. A session held by a
 * payment attempt at that moment is looked at again when the hold ends.
 */
export function createExpireSessionHandler({ db, events, publicBaseUrl }: PaymentJobsDeps): JobHandler {
  const payments = repository.paymentsDb(db);
  const presentSession = sessionPresenter(publicBaseUrl);

  /** The update and its event share one transaction: an update that matched nothing records nothing. */
  function expireIfDue(owner: Owner, sessionId: string, now: Date): Promise<repository.SessionRow | undefined> {
    return db.transaction().execute(async (transaction) => {
      const tx = repository.paymentsDb(transaction);
      const expired = await repository.expireSessionIfDue(tx, owner, sessionId, now);
      if (expired) await events.record(tx, owner, 'payments.checkout_session.expired', presentSession(expired, now));
      return expired;
    });
  }

  return async (job, now) => {
    const sessionId = job.payload.session_id;
    if (typeof sessionId !== 'string' || !isUuid(sessionId) || job.tenantId === null || job.mode === null) return;
    const owner = { tenantId: job.tenantId, mode: job.mode };
    if (await expireIfDue(owner, sessionId, now)) return;
    const session = await repository.findSession(payments, owner, sessionId);
    if (session?.status !== 'open') return;
    const later = [session.expires_at, session.processing_until].filter((at): at is Date => at !== null && at.getTime() > now.getTime());
    if (later.length > 0) return { rescheduleAt: new Date(Math.max(...later.map((at) => at.getTime()))) };
  };
}

/** Registers the payments job handlers on a runner. */
export function registerPaymentJobs(jobs: JobRunner, deps: PaymentJobsDeps): void {
  jobs.register(EXPIRE_SESSION_JOB, createExpireSessionHandler(deps));
}
