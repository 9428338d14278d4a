import type { PostRow, SubscriberRow } from './repository.js';
import type { PostView, SubscriberView } from './schemas.js';

export function presentPost(row: PostRow): PostView {
  return { ...row, view_count: Number(row.view_count) };
}

/** A subscriber row is already in the API's shape (the reply serialiser writes its timestamps). */
export function presentSubscriber(row: SubscriberRow): SubscriberView {
  return row;
}
