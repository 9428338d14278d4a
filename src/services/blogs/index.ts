import type { ServiceModule } from '../module.js';
import { blogsRoutes } from './routes.js';
import { registerBlogJobs } from './scheduler.js';
import { createBlogsService, type BlogsService } from './service.js';

export type { BlogsService } from './service.js';
export { PUBLISH_SCHEDULED_JOB, publishJobKey, registerBlogJobs } from './scheduler.js';

/** Blog posts (with scheduled publishing and view counts), subscribers, analytics and categories. */
export const blogsModule: ServiceModule<BlogsService> = {
  id: 'blogs',
  migrations: new URL('./migrations/', import.meta.url),
  create: (deps) => {
    registerBlogJobs(deps.jobs, deps.db);
    return createBlogsService(deps);
  },
  routes: blogsRoutes,
};
