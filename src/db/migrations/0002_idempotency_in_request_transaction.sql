-- An idempotency record is now written in the same transaction as the request it protects
-- (src/db/request-transaction.ts): it exists only once that request has committed, with its
-- reply. Concurrent requests with one key are kept apart by a transaction-scoped advisory
-- lock, so the in-progress state and its lock expiry are gone.
delete from idempotency_keys where state <> 'completed' or response_status is null;

alter table idempotency_keys
  drop column state,
  drop column locked_until,
  alter column response_status set not null,
  alter column response_content_type set not null,
  -- Bytes, so a reply that is not text (or not UTF-8) replays exactly.
  alter column response_body type bytea using convert_to(coalesce(response_body, ''), 'UTF8'),
  alter column response_body set not null;
