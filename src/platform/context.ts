import type { Owner } from '../db/owned.js';

export type { Owner };

/**
 * Who is calling and when: the first argument of every service function. It is also the
 * Owner (tenant and mode) that every query of the request is confined to.
 */
export interface RequestContext extends Owner {
  keyId: string;
  scopes: readonly string[];
  requestId: string;
  /** "Now" for this request, read once from the injected clock. */
  now: Date;
}
