import type { Owner } from '../../db/owned.js';
import type { EventLog, EventTypeDeclaration } from '../../platform/events/event-log.js';
import type { BillingEvent } from './billing.js';
import type { CatalogDb } from './repository.js';
import { Subscription, type SubscriptionView } from './schemas.js';
import type { SubscriptionStatus } from './tables.js';

export const SUBSCRIPTION_EVENTS = [
  { type: 'catalog.subscription.created', description: 'A subscription was started.', object: Subscription },
  {
    type: 'catalog.subscription.renewed',
    description: 'The billing clock began a new billing period of a subscription; one event per period, also when a late run catches up several.',
    object: Subscription,
  },
  {
    type: 'catalog.subscription.trial_ended',
    description: 'The billing clock ended a trial and began the subscription’s first paid period (status active); not recorded when a trial ends by a pause or a cancellation.',
    object: Subscription,
  },
  { type: 'catalog.subscription.paused', description: 'A subscription was paused.', object: Subscription },
  { type: 'catalog.subscription.resumed', description: 'A paused subscription was resumed: by request, or by the billing clock at pause_resumes_at.', object: Subscription },
  {
    type: 'catalog.subscription.canceled',
    description: 'A subscription ended: canceled now by request, or by the billing clock at the end of a period it was set to cancel at.',
    object: Subscription,
  },
] as const satisfies readonly EventTypeDeclaration[];

export type SubscriptionEventType = (typeof SUBSCRIPTION_EVENTS)[number]['type'];

/** The events of what the billing clock applied, in order. A trial's end is not a renewal: it has its own event, which starts the first paid period. */
export function clockEventTypes(applied: readonly BillingEvent[]): SubscriptionEventType[] {
  return applied.flatMap((event): SubscriptionEventType[] => {
    switch (event.type) {
      case 'renewed':
        return Array.from({ length: event.periods }, () => 'catalog.subscription.renewed' as const);
      case 'resumed':
        return ['catalog.subscription.resumed'];
      case 'canceled':
        return ['catalog.subscription.canceled'];
      case 'trial_ended':
        return ['catalog.subscription.trial_ended'];
    }
  });
}

/** The event of an action that moved a subscription from `from` to `to`; none when its status stayed (cancel at period end). */
export function statusEventTypes(from: SubscriptionStatus, to: SubscriptionStatus): SubscriptionEventType[] {
  if (from === to) return [];
  if (to === 'paused') return ['catalog.subscription.paused'];
  if (to === 'canceled') return ['catalog.subscription.canceled'];
  return from === 'paused' ? ['catalog.subscription.resumed'] : [];
}

/** Records each of `types`, in order, with the subscription as it is after the change; `tx` is the change's transaction. */
export async function recordSubscriptionEvents(events: EventLog, tx: CatalogDb, owner: Owner, types: readonly SubscriptionEventType[], view: SubscriptionView): Promise<void> {
  for (const type of types) await events.record(tx, owner, type, view);
}
