import type { ColumnType } from 'kysely';
import type { Mode } from '../../db/types.js';

export type Json = ColumnType<unknown, string, string>;

export const ACCOUNT_STATUSES = ['connected', 'expired', 'error'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];
export const ACCOUNT_KINDS = ['profile', 'page', 'business'] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];
export const VISIBILITIES = ['private', 'shared'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

export const FILE_STATUSES = ['pending', 'uploading', 'ready', 'rejected', 'expired'] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];
/** The fixed list of reasons a file is refused (docs/decisions.md, Social). */
export const REJECT_CODES = [
  'size_mismatch',
  'checksum_mismatch',
  'type_not_allowed',
  'too_large',
  'macro_detected',
  'embedded_object',
  'external_link',
  'script_detected',
  'malformed_file',
  'link_expired',
  'link_used',
] as const;
export type RejectCode = (typeof REJECT_CODES)[number];
export const FILE_KINDS = ['png', 'jpeg', 'gif', 'mp4', 'pdf', 'docx', 'pptx'] as const;
export type FileKind = (typeof FILE_KINDS)[number];

export const POST_STATUSES = ['draft', 'scheduled', 'publishing', 'published', 'partially_failed', 'failed'] as const;
export type PostStatus = (typeof POST_STATUSES)[number];
export const RESULT_STATUSES = ['pending', 'published', 'failed'] as const;
export type ResultStatus = (typeof RESULT_STATUSES)[number];

export interface PostMedia {
  file_id: string;
  alt_text: string | null;
}

export interface PostResult {
  account_id: string;
  platform: string | null;
  status: ResultStatus;
  platform_post_id: string | null;
  url: string | null;
  error: string | null;
  published_at: string | null;
}

export interface SocialAccountsTable {
  id: ColumnType<string, never, never>;
  tenant_id: string;
  mode: Mode;
  platform: string;
  account_kind: AccountKind;
  external_id: string;
  display_name: string | null;
  avatar_url: string | null;
  access_token_sealed: string | null;
  refresh_token_sealed: string | null;
  token_expires_at: Date | null;
  scopes: string[];
  status: AccountStatus;
  last_validated_at: Date | null;
  last_error: string | null;
  environment: string;
  connected_by: string | null;
  connected_by_name: string | null;
  visibility: Visibility;
  created_at: Date;
  updated_at: Date;
}

export interface SocialFilesTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  status: FileStatus;
  file_name: string;
  kind: string | null;
  mime: string | null;
  size_bytes: ColumnType<string | number, number, number>;
  sha256: string;
  reject_code: RejectCode | null;
  reject_detail: string | null;
  token_hash: string;
  link_expires_at: Date;
  expires_at: Date;
  uploaded_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface SocialPostsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  account_ids: string[];
  body: string;
  media: Json;
  scheduled_at: Date | null;
  status: PostStatus;
  results: Json;
  published_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface SocialTables {
  social_accounts: SocialAccountsTable;
  social_files: SocialFilesTable;
  social_posts: SocialPostsTable;
}
