import { toIso } from '../../lib/timestamps.js';
import type { PostRow, SubscriberRow } from './repository.js';
import type { PostView, SubscriberView } from './schemas.js';

export function presentPost(row: PostRow): PostView {
  return {
    ...row,
    published_at: toIso(row.published_at),
    scheduled_for: toIso(row.scheduled_for),
    view_count: Number(row.view_count),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function presentSubscriber(row: SubscriberRow): SubscriberView {
  return {
    ...row,
    subscribed_at: toIso(row.subscribed_at),
    unsubscribed_at: toIso(row.unsubscribed_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}
