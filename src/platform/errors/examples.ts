import { ERROR_STATUS, type ErrorCode } from './codes.js';

interface ErrorExample {
  message: string;
  details?: Array<Record<string, unknown>>;
}

const transition = { path: 'status', code: 'invalid_transition', message: 'A paid invoice cannot move to void.', from: 'paid', to: 'void', allowed: [] };

/**
 * One example reply per error code, as the server writes it: the OpenAPI document shows, under
 * every error status of an operation, the codes that operation can answer with.
 */
const EXAMPLES: Record<ErrorCode, ErrorExample> = {
  validation_failed: {
    message: 'The request is not valid; see details.',
    details: [{ path: 'email', code: 'invalid_format', message: 'email is not a valid email.' }],
  },
  invalid_json: { message: 'The body is not valid JSON.' },
  unsupported_media_type: { message: 'Send the body as application/json.' },
  payload_too_large: { message: 'The body is larger than 1 MiB.' },
  not_found: { message: 'No such resource.' },
  method_not_allowed: { message: 'This path does not take this method.' },
  unauthorized: { message: 'The API key is missing, malformed, unknown or revoked.' },
  insufficient_scope: {
    message: 'This API key lacks the scope service.crm.manage.',
    details: [{ path: 'scope', code: 'missing_scope', message: 'Requires scope service.crm.manage.', scope: 'service.crm.manage' }],
  },
  rate_limited: { message: 'Rate limit of 600 requests per minute exceeded; retry in 12 s.' },
  conflict: { message: 'The request conflicts with the current state of the resource.' },
  stale_update: { message: 'The resource changed since you read it; fetch it again and reapply your change.' },
  precondition_failed: { message: 'The resource changed since you read it (If-Match does not match its ETag); fetch it again and reapply your change.' },
  idempotency_key_conflict: { message: 'This Idempotency-Key was used with a different request.' },
  idempotency_key_in_use: { message: 'A request with this Idempotency-Key is still being processed; retry shortly.' },
  slug_taken: {
    message: 'Another post already uses the slug "hello-world".',
    details: [{ path: 'slug', code: 'taken', message: 'Choose another slug, or leave it out to derive a free one from the title.' }],
  },
  form_not_published: {
    message: 'The form is not published.',
    details: [{ path: 'status', code: 'invalid_value', message: 'The form is draft.', status: 'draft' }],
  },
  invalid_status_transition: { message: 'The status cannot change from paid to void.', details: [transition] },
  subscriber_already_exists: { message: 'A subscriber with this email exists already.' },
  invoice_not_editable: { message: 'Only draft invoices can be changed.' },
  invoice_not_finalizable: { message: 'An invoice needs at least one line and a total above 0.00 to be finalized.' },
  invoice_not_payable: { message: 'Only open or partially paid invoices take payments.' },
  customer_archived: { message: 'The customer is archived.' },
  approval_already_decided: { message: 'The approval was decided already.' },
  slot_unavailable: { message: 'The resource is fully booked for this time (capacity 1).' },
  resource_in_use: { message: 'The resource has bookings; set is_active to false instead.' },
  address_suppressed: {
    message: 'The number is on the suppression list (it opted out); it cannot be enrolled.',
    details: [{ path: 'address', code: 'suppressed', message: '+14155550123 is on the suppression list.', address: '+14155550123' }],
  },
  sequence_archived: { message: 'The sequence is archived; set its status to active, paused or draft to enrol people.' },
  sequence_in_use: { message: 'The sequence has enrollments; set its status to archived instead.' },
  link_expired: { message: 'This upload link expired (links work for 15 minutes); create a new one.' },
  link_used: { message: 'This upload link was used already; create a new link to send the file again.' },
  post_not_editable: {
    message: 'The post is published; only draft and scheduled posts can change.',
    details: [{ path: 'status', code: 'invalid_value', message: 'The post is published.', status: 'published' }],
  },
  asset_in_use: { message: 'The asset contains other assets; move or delete them first.' },
  affiliate_not_found: { message: 'No affiliate partner has this id.' },
  ai_monitor_limit_reached: { message: 'At most 25 questions can be monitored in AI answers.' },
  invalid_credentials: { message: 'The email or password is wrong.' },
  invalid_session: { message: 'The session token is unknown, expired or revoked.' },
  invalid_challenge: { message: 'The MFA challenge is unknown, used, expired or ended.' },
  invalid_mfa_code: { message: 'The code is wrong.' },
  too_many_attempts: { message: 'Too many failed attempts; retry after Retry-After seconds.' },
  email_taken: { message: 'Another end user has this email.' },
  mfa_already_enabled: { message: 'TOTP is on already.' },
  mfa_not_enabled: { message: 'TOTP is not on.' },
  mfa_not_pending: { message: 'No TOTP enrolment is waiting for confirmation.' },
  verification_token_invalid: { message: 'The verification token is not valid.' },
  verification_token_expired: { message: 'The verification token has expired.' },
  verification_token_used: { message: 'The verification token was used already.' },
  coupon_code_taken: { message: 'A coupon with this code exists already.' },
  coupon_not_redeemable: { message: 'The coupon cannot be redeemed.' },
  live_payments_not_configured: { message: 'Live payments are not configured on this server.' },
  checkout_session_not_paid: {
    message: 'Only a paid (complete) checkout session can be refunded; this one is open.',
    details: [{ path: 'checkout_session_id', code: 'not_paid', message: 'The session is open.', status: 'open' }],
  },
  checkout_session_fully_refunded: {
    message: 'This checkout session is already refunded in full.',
    details: [{ path: 'checkout_session_id', code: 'fully_refunded', message: 'All 5300 minor units were refunded.', amount_refunded_cents: 5300 }],
  },
  payment_processor_error: { message: 'The refund could not be made: Stripe could not be reached. Nothing was refunded; try again.' },
  internal_error: { message: 'Something failed on our side; quote the Service-Request-Id.' },
  service_unavailable: { message: 'The server is too busy to answer this request now; retry after the number of seconds in Retry-After.' },
};

/** The error codes named in a text (a response description) that answer with this status. */
export function errorCodesIn(text: string, status: number): ErrorCode[] {
  const words = new Set(text.match(/[a-z][a-z0-9_]+/g) ?? []);
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => words.has(code) && ERROR_STATUS[code] === status);
}

/** OpenAPI `examples` (a map named by code) of the error body for each code. */
export function errorExamples(codes: ErrorCode[]): Record<string, { summary: string; value: unknown }> {
  return Object.fromEntries(
    codes.map((code) => {
      const { message, details = [] } = EXAMPLES[code];
      return [code, { summary: code, value: { error: { code, message, details } } }];
    }),
  );
}
