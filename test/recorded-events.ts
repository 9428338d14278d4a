import type { Mode } from '../src/db/types.js';
import { presentEvent, type PlatformEvent } from '../src/platform/events/event-log.js';
import type { TestPlatform } from './harness.js';

/** The events of one type a tenant's mode has recorded, newest first, as the API shows them. */
export async function recordedEvents(platform: TestPlatform, tenantId: string, type: string, mode: Mode = 'test'): Promise<PlatformEvent[]> {
  const { rows } = await platform.runtime.events.list({ tenantId, mode }, { type }, { limit: 50, offset: 0 });
  return rows.map(presentEvent);
}

/** A value as it comes out of JSON: dates as ISO strings, undefined fields gone. */
export function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}
