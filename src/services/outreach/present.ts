import type { EnrollmentRow, MessageRow, SequenceRow, StatusCounts, SuppressionRow } from './repository.js';
import type { EnrollmentView, MessageView, SequenceView, SuppressionView } from './schemas.js';

export function presentSequence(row: SequenceRow, counts: StatusCounts): SequenceView {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    steps: row.steps.map((step, position) => ({ position, body: step.body, delay: { amount: step.delay.amount, unit: step.delay.unit } })),
    // Rebuilt in the schema's order: jsonb hands keys back sorted by length.
    send_window: row.send_window && { days: row.send_window.days, start: row.send_window.start, end: row.send_window.end },
    timezone: row.timezone,
    counts,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentEnrollment(row: EnrollmentRow): EnrollmentView {
  return {
    id: row.id,
    sequence_id: row.sequence_id,
    address: row.address,
    display_name: row.display_name,
    status: row.status,
    next_position: row.next_position,
    next_run_at: row.next_run_at,
    exit_reason: row.exit_reason,
    source: row.source,
    enrolled_at: row.enrolled_at,
    last_sent_at: row.last_sent_at,
  };
}

export function presentMessage(row: MessageRow): MessageView {
  return {
    id: row.id,
    direction: row.direction,
    sequence_id: row.sequence_id,
    enrollment_id: row.enrollment_id,
    position: row.position,
    from: row.from_address,
    to: row.to_address,
    body: row.body,
    status: row.status,
    provider: row.provider,
    provider_message_id: row.provider_message_id,
    error: row.error,
    attempts: row.attempts,
    created_at: row.created_at,
    sent_at: row.sent_at,
    updated_at: row.updated_at,
  };
}

export function presentSuppression(row: SuppressionRow): SuppressionView {
  return { id: row.id, address: row.address, reason: row.reason, note: row.note, created_at: row.created_at };
}
