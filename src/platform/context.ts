import type { Mode } from '../db/types.js';

/** Who is calling and when: the first argument of every service function. */
export interface RequestContext {
  tenantId: string;
  mode: Mode;
  keyId: string;
  scopes: readonly string[];
  requestId: string;
  /** "Now" for this request, read once from the injected clock. */
  now: Date;
}

/** The tenant and mode every query of a service is confined to. */
export interface Owner {
  tenantId: string;
  mode: Mode;
}
