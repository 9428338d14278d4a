import type { Db } from '../../db/database.js';
import { isUuid } from '../../lib/ids.js';
import type { JobHandler, JobRunner } from '../../platform/jobs/runner.js';
import * as repository from './repository.js';
import { EXPIRE_SESSION_JOB } from './service.js';

/**
 * Expires the job's session when its time has come. The conditional update is the guard:
 * a paid session, a second run or another process change nothing. A session held by a
 * payment attempt at that moment is looked at again when the hold ends.
 */
export function createExpireSessionHandler(db: Db): JobHandler {
  const payments = repository.paymentsDb(db);
  return async (job, now) => {
    const sessionId = job.payload.session_id;
    if (typeof sessionId !== 'string' || !isUuid(sessionId) || job.tenantId === null || job.mode === null) return;
    const owner = { tenantId: job.tenantId, mode: job.mode };
    if (await repository.expireSessionIfDue(payments, owner, sessionId, now)) return;
    const session = await repository.findSession(payments, owner, sessionId);
    if (session?.status !== 'open') return;
    const later = [session.expires_at, session.processing_until].filter((at): at is Date => at !== null && at.getTime() > now.getTime());
    if (later.length > 0) return { rescheduleAt: new Date(Math.max(...later.map((at) => at.getTime()))) };
  };
}

/** Registers the payments job handlers on a runner. */
export function registerPaymentJobs(jobs: JobRunner, db: Db): void {
  jobs.register(EXPIRE_SESSION_JOB, createExpireSessionHandler(db));
}
