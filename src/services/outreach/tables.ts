import type { ColumnType } from 'kysely';
import type { Mode } from '../../db/types.js';

export type Json = ColumnType<unknown, string, string>;

export const SEQUENCE_STATUSES = ['draft', 'active', 'paused', 'archived'] as const;
export type SequenceStatus = (typeof SEQUENCE_STATUSES)[number];
export const ENROLLMENT_STATUSES = ['active', 'completed', 'exited', 'failed'] as const;
export type EnrollmentStatus = (typeof ENROLLMENT_STATUSES)[number];
export const ENROLLMENT_SOURCES = ['api', 'book', 'manual', 'workflow'] as const;
export type EnrollmentSource = (typeof ENROLLMENT_SOURCES)[number];
export const EXIT_REASONS = ['replied', 'opted_out', 'removed'] as const;
export type ExitReason = (typeof EXIT_REASONS)[number];
export const MESSAGE_STATUSES = ['queued', 'sent', 'delivered', 'failed', 'received'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];
export const DELAY_UNITS = ['minutes', 'hours', 'days'] as const;
export type DelayUnit = (typeof DELAY_UNITS)[number];
export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface Step {
  body: string;
  delay: { amount: number; unit: DelayUnit };
}

export interface SendWindow {
  days: Weekday[];
  start: string;
  end: string;
}

export interface OutreachSequencesTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  name: string;
  status: SequenceStatus;
  steps: Json;
  send_window: Json | null;
  timezone: string;
  created_at: Date;
  updated_at: Date;
}

export interface OutreachEnrollmentsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  sequence_id: string;
  address: string;
  display_name: string | null;
  status: EnrollmentStatus;
  next_position: number | null;
  next_run_at: Date | null;
  exit_reason: ExitReason | null;
  source: EnrollmentSource;
  send_attempts: number;
  enrolled_at: Date;
  last_sent_at: Date | null;
  updated_at: Date;
}

export interface OutreachMessagesTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  direction: 'outbound' | 'inbound';
  sequence_id: string | null;
  enrollment_id: string | null;
  position: number | null;
  from_address: string | null;
  to_address: string;
  body: string;
  status: MessageStatus;
  provider: string;
  provider_message_id: string | null;
  error: string | null;
  attempts: number;
  created_at: Date;
  sent_at: Date | null;
  updated_at: Date;
}

export interface OutreachSuppressionsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  address: string;
  reason: 'opted_out' | 'manual';
  note: string | null;
  created_at: Date;
}

export interface OutreachTables {
  outreach_sequences: OutreachSequencesTable;
  outreach_enrollments: OutreachEnrollmentsTable;
  outreach_messages: OutreachMessagesTable;
  outreach_suppressions: OutreachSuppressionsTable;
}
