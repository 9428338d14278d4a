import type { ServiceModule } from '../module.js';
import { tasksRoutes } from './routes.js';
import { Assignment, Category, Review, Submission, Task, TaskLink } from './schemas.js';
import { createTasksService, type TasksService } from './service.js';

export type { TasksService } from './service.js';

/** Tasks, assignments of tasks to people, submissions, multi-stage reviews with grading, event history and links to records of other services. */
export const tasksModule: ServiceModule<TasksService> = {
  id: 'tasks',
  migrations: new URL('./migrations/', import.meta.url),
  events: [
    { type: 'tasks.category.created', description: 'A category was created.', object: Category },
    { type: 'tasks.category.updated', description: 'A category was updated.', object: Category },
    { type: 'tasks.category.deleted', description: 'A category without tasks was deleted; the object is the category as it was.', object: Category },
    { type: 'tasks.task.created', description: 'A task was created, or a recurring task generated an occurrence.', object: Task },
    { type: 'tasks.task.updated', description: 'A task was updated, moved to another status or assigned (assignment_count).', object: Task },
    { type: 'tasks.task.deleted', description: 'A task was deleted; the object is the task as it was.', object: Task },
    { type: 'tasks.assignment.created', description: 'A task was assigned to a person.', object: Assignment },
    {
      type: 'tasks.assignment.updated',
      description: 'An assignment moved: started, checklist, reassigned, delegated, due date, submitted, reviewed, completed, reopened or cancelled with its task.',
      object: Assignment,
    },
    { type: 'tasks.submission.created', description: 'An attempt was submitted.', object: Submission },
    { type: 'tasks.review.created', description: 'A submission was reviewed at a stage.', object: Review },
    { type: 'tasks.link.created', description: 'A task was linked to a record of another service.', object: TaskLink },
    { type: 'tasks.link.deleted', description: 'A link was deleted; the object is the link as it was.', object: TaskLink },
  ],
  create: (deps) => createTasksService(deps),
  routes: tasksRoutes,
};
