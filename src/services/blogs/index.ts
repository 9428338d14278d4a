import type { ServiceModule } from '../module.js';
import { blogsRoutes } from './routes.js';
import { registerBlogJobs } from './scheduler.js';
import { Post } from './schemas.js';
import { createBlogsService, type BlogsService } from './service.js';

export type { BlogsService } from './service.js';
export { PUBLISH_SCHEDULED_JOB, publishJobKey, registerBlogJobs } from './scheduler.js';

/** Blog posts (with scheduled publishing and view counts), subscribers, analytics and categories. */
export const blogsModule: ServiceModule<BlogsService> = {
  id: 'blogs',
  migrations: new URL('./migrations/', import.meta.url),
  events: [{ type: 'blogs.post.published', description: 'A post was published, directly or by its schedule; each publication of a post records one.', object: Post }],
  create: (deps) => {
    registerBlogJobs(deps.jobs, deps);
    return createBlogsService(deps);
  },
  routes: blogsRoutes,
};
