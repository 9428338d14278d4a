import { createAccountRules } from './accounts.js';
import { createFileRules } from './files.js';
import { registerSocialJobs } from './jobs.js';
import { createPostRules } from './posts.js';
import type { SocialDeps } from './shared.js';

/** The social service: connected accounts, one-time upload links and their files, posts. */
export function createSocialService(deps: SocialDeps) {
  const accounts = createAccountRules(deps);
  const files = createFileRules(deps);
  const posts = createPostRules(deps);
  registerSocialJobs(deps, accounts, files.expireLink);
  const { validate: _validate, ...accountApi } = accounts;
  const { expireLink: _expireLink, ...fileApi } = files;
  return { ...accountApi, ...fileApi, ...posts };
}

export type SocialService = ReturnType<typeof createSocialService>;
