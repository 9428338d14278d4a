/**
 * The closed list of error codes the API answers with, and the HTTP status of each.
 * A service that needs a new code adds it here, so clients can rely on one list.
 */
export const ERROR_STATUS = {
  // Request shape
  validation_failed: 400,
  invalid_json: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  // Routing
  not_found: 404,
  method_not_allowed: 405,
  // Credentials
  unauthorized: 401,
  insufficient_scope: 403,
  rate_limited: 429,
  // Writes
  conflict: 409,
  stale_update: 409,
  idempotency_key_conflict: 409,
  idempotency_key_in_use: 409,
  // Service rules (each service adds its codes here)
  slug_taken: 409,
  form_not_published: 409,
  invalid_status_transition: 409,
  subscriber_already_exists: 409,
  // Server
  internal_error: 500,
  service_unavailable: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];
