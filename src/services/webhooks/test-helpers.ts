import type { TestPlatform } from '../../../test/harness.js';
import type { Mode } from '../../db/types.js';
import { PING_EVENT } from './service.js';

/**
 * Records an event as a service would, outside any request, of the one type the webhooks service
 * declares itself (its object is an endpoint): every enabled endpoint of the owner subscribed to it gets it.
 */
export function recordTestEvent(platform: TestPlatform, tenantId: string, mode: Mode = 'test') {
  const object = {
    id: crypto.randomUUID(),
    url: 'https://127.0.0.1:1/hooks',
    description: null,
    enabled_events: ['*'],
    status: 'enabled',
    disabled_reason: null,
    livemode: mode === 'live',
    created_at: new Date(),
    updated_at: new Date(),
  };
  return platform.runtime.events.record(platform.database.db, { tenantId, mode }, PING_EVENT, object);
}
