import type { Generated } from 'kysely';
import type { Mode } from '../../db/types.js';

export type EndpointStatus = 'enabled' | 'disabled';
export type DisabledReason = 'manual' | 'failing';
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookEndpointsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  url: string;
  description: string | null;
  enabled_events: string[];
  status: EndpointStatus;
  disabled_reason: DisabledReason | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  last_success_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookDeliveriesTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempt_count: Generated<number>;
  scheduled_attempts: Generated<number>;
  next_attempt_at: Date | null;
  manual_retry: Generated<boolean>;
  resume_at: Date | null;
  locked_until: Date | null;
  last_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookAttemptsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  delivery_id: string;
  attempted_at: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
  manual: boolean;
}

export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
