import type { ServiceModule } from '../module.js';
import { customerAuthRoutes } from './routes.js';
import { EndUser } from './schemas.js';
import { createCustomerAuthService, registerCustomerAuthJobs, type CustomerAuthService } from './service.js';

export type { CustomerAuthService } from './service.js';

/** End users of a tenant: accounts, email verification, sessions, TOTP MFA and recovery codes. */
export const customerAuthModule: ServiceModule<CustomerAuthService, { secretsKey: Buffer }> = {
  id: 'customer-auth',
  migrations: new URL('./migrations/', import.meta.url),
  events: [
    { type: 'customer_auth.user.created', description: 'An end user was created.', object: EndUser },
    { type: 'customer_auth.user.email_verified', description: "An end user's email address was verified (again after it changed).", object: EndUser },
  ],
  // TOTP secrets are sealed with the platform's secrets key.
  settings: ({ secretsKey }) => ({ secretsKey }),
  create: (deps) => {
    registerCustomerAuthJobs(deps.jobs, deps.db);
    return createCustomerAuthService({ db: deps.db, events: deps.events, jobs: deps.jobs, secretsKey: deps.settings.secretsKey });
  },
  routes: customerAuthRoutes,
};
