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
  precondition_failed: 412,
  // Service rules (each service adds its codes here)
  slug_taken: 409,
  form_not_published: 409,
  invalid_status_transition: 409,
  subscriber_already_exists: 409,
  // invoicing
  invoice_not_editable: 409,
  invoice_not_finalizable: 409,
  invoice_not_payable: 409,
  customer_archived: 409,
  approval_already_decided: 409,
  // customer-auth
  invalid_credentials: 401,
  invalid_session: 401,
  invalid_challenge: 401,
  invalid_mfa_code: 401,
  too_many_attempts: 429,
  email_taken: 409,
  mfa_already_enabled: 409,
  mfa_not_enabled: 409,
  mfa_not_pending: 409,
  verification_token_invalid: 400,
  verification_token_expired: 410,
  verification_token_used: 410,
  // catalog
  coupon_code_taken: 409,
  coupon_not_redeemable: 400,
  // payments
  live_payments_not_configured: 503,
  checkout_session_not_paid: 409,
  checkout_session_fully_refunded: 409,
  payment_processor_error: 502,
  // appointments
  slot_unavailable: 409,
  resource_in_use: 409,
  asset_in_use: 409,
  // outreach
  address_suppressed: 409,
  sequence_archived: 409,
  sequence_in_use: 409,
  // social
  link_expired: 410,
  link_used: 410,
  post_not_editable: 409,
  // affiliates
  affiliate_not_found: 404,
  // seo
  ai_monitor_limit_reached: 409,
  // Server
  internal_error: 500,
  service_unavailable: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];
