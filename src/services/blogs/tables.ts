import type { Mode } from '../../db/types.js';

export type PostStatus = 'draft' | 'scheduled' | 'published' | 'archived';
export type SubscriberStatus = 'active' | 'unsubscribed' | 'bounced';

export interface BlogPostsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  title: string;
  slug: string;
  excerpt: string | null;
  content: string;
  content_html: string;
  status: PostStatus;
  published_at: Date | null;
  scheduled_for: Date | null;
  categories: string[];
  category_keys: string[];
  tags: string[];
  tag_keys: string[];
  author_name: string | null;
  cover_image_url: string | null;
  seo_title: string | null;
  seo_description: string | null;
  reading_time_minutes: number;
  view_count: number;
  created_at: Date;
  updated_at: Date;
}

export interface BlogPostViewDaysTable {
  post_id: string;
  tenant_id: string;
  mode: Mode;
  /** A UTC calendar day, `YYYY-MM-DD`. */
  day: string;
  views: number;
}

export interface BlogSubscribersTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  email: string;
  name: string | null;
  status: SubscriberStatus;
  source: string;
  subscribed_at: Date;
  unsubscribed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface BlogTables {
  blog_posts: BlogPostsTable;
  blog_post_view_days: BlogPostViewDaysTable;
  blog_subscribers: BlogSubscribersTable;
}
