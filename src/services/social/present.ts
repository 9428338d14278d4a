import type { Owner } from '../../db/owned.js';
import type { AccountRow, FileRow, PostRow } from './repository.js';
import type { SocialAccountReply, SocialPostReply, UploadFileReply } from './schemas.js';

export function presentAccount(owner: Owner, row: AccountRow): SocialAccountReply {
  return {
    id: row.id,
    tenant_id: owner.tenantId,
    platform: row.platform,
    account_kind: row.account_kind,
    external_id: row.external_id,
    display_name: row.display_name,
    avatar_url: row.avatar_url,
    token_expires_at: row.token_expires_at,
    scopes: row.scopes,
    status: row.status,
    last_validated_at: row.last_validated_at,
    last_error: row.last_error,
    environment: row.environment,
    connected_by: row.connected_by === null ? null : Number(row.connected_by),
    visibility: row.visibility,
    created_at: row.created_at,
    updated_at: row.updated_at,
    connected_by_name: row.connected_by_name,
    shared_users: [],
    shared_roles: [],
    is_owner: false,
  };
}

export interface UploadSecrets {
  token: string;
  url: string;
  howToSend: string;
}

/** The file record; the link's secrets only in the reply that created it. */
export function presentFile(row: FileRow, secrets?: UploadSecrets): UploadFileReply {
  const beforeUpload = row.status === 'pending' || row.status === 'uploading';
  return {
    file_id: row.id,
    status: row.status,
    file_name: row.file_name,
    kind: row.kind,
    mime: row.mime,
    size_bytes: row.size_bytes,
    sha256: row.sha256,
    reject_code: row.reject_code,
    reject_detail: row.reject_detail,
    expires_at: beforeUpload ? row.link_expires_at : row.expires_at,
    created_at: row.created_at,
    upload_url: secrets?.url ?? null,
    upload_token: secrets?.token ?? null,
    upload_method: 'PUT',
    how_to_send: secrets?.howToSend ?? null,
  };
}

export function presentPost(row: PostRow): SocialPostReply {
  return {
    id: row.id,
    account_ids: row.account_ids,
    text: row.body,
    media: row.media.map((item) => ({ file_id: item.file_id, alt_text: item.alt_text })),
    scheduled_at: row.scheduled_at,
    status: row.status,
    results: row.results,
    published_at: row.published_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
