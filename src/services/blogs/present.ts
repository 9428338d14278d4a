import type { PostRow, SubscriberRow } from './repository.js';
import type { PostView, SubscriberView } from './schemas.js';

export function presentPost(row: PostRow): PostView {
  return {
    ...row,
    published_at: row.published_at,
    scheduled_for: row.scheduled_for,
    view_count: Number(row.view_count),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentSubscriber(row: SubscriberRow): SubscriberView {
  return {
    ...row,
    subscribed_at: row.subscribed_at,
    unsubscribed_at: row.unsubscribed_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
