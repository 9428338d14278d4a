import type { Db } from '../../db/database.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import type { ServiceRegistry } from '../registry.js';
import { createAssignmentRules } from './assignments.js';
import { createLinkRules } from './links.js';
import { registerTaskJobs } from './recurring-job.js';
import { tasksDb } from './repository.js';
import { createTaskRules } from './tasks.js';

interface TasksDeps {
  db: Db;
  events: EventLog;
  jobs: JobRunner;
  services: ServiceRegistry;
}

/** Categories, tasks, assignments with submissions and reviews, and links: the rules of each resource in its own file. */
export function createTasksService({ db, events, jobs, services }: TasksDeps) {
  const tables = tasksDb(db);
  registerTaskJobs(jobs, { db, events });
  return {
    ...createTaskRules({ tables, events, jobs }),
    ...createAssignmentRules({ tables, events }),
    ...createLinkRules({ tables, events, services }),
  };
}

export type TasksService = ReturnType<typeof createTasksService>;
