import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { ownedTables, type OwnedInsert, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import type { Mode } from '../../db/types.js';
import type {
  AccountKind,
  AccountStatus,
  FileStatus,
  PostMedia,
  PostResult,
  PostStatus,
  RejectCode,
  SocialAccountsTable,
  SocialFilesTable,
  SocialTables,
  Visibility,
} from './tables.js';

export type SocialDb = Kysely<SocialTables>;

export function socialDb(db: Db): SocialDb {
  return serviceDb(db);
}

const owned = ownedTables<SocialTables>();
const accounts = owned('social_accounts');
const files = owned('social_files');
const posts = owned('social_posts');

/** jsonb arrives parsed from both drivers; text only if a driver ever hands it over unparsed. */
const json = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

// Accounts

const ACCOUNT_COLUMNS = [
  'id',
  'platform',
  'account_kind',
  'external_id',
  'display_name',
  'avatar_url',
  'access_token_sealed',
  'refresh_token_sealed',
  'token_expires_at',
  'scopes',
  'status',
  'last_validated_at',
  'last_error',
  'environment',
  'connected_by',
  'connected_by_name',
  'visibility',
  'created_at',
  'updated_at',
] as const;

export interface AccountRow {
  id: string;
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

const toAccount = (row: Record<string, unknown>): AccountRow => {
  const connectedBy = row.connected_by as string | number | bigint | null;
  return { ...row, id: String(row.id), connected_by: connectedBy === null ? null : String(connectedBy) } as unknown as AccountRow;
};

export type NewAccount = OwnedInsert<SocialAccountsTable>;

export async function insertAccount(db: SocialDb, owner: Owner, row: NewAccount): Promise<AccountRow> {
  return toAccount(await accounts.insert(db, owner, row).returning(ACCOUNT_COLUMNS).executeTakeFirstOrThrow());
}

const accountById = accounts.statement((from, values: { id: string }) => from.select(ACCOUNT_COLUMNS).where('id', '=', values.id));
const accountsByIds = accounts.statement((from, values: { ids: string[] }) => from.select(ACCOUNT_COLUMNS).where(sql<boolean>`id = any(${values.ids}::bigint[])`));

export async function findAccount(db: SocialDb, owner: Owner, id: string): Promise<AccountRow | undefined> {
  const row = await accountById.first(db, owner, { id });
  return row && toAccount(row);
}

export async function findAccounts(db: SocialDb, owner: Owner, ids: string[]): Promise<AccountRow[]> {
  if (ids.length === 0) return [];
  return (await accountsByIds.all(db, owner, { ids })).map(toAccount);
}

export async function findAccountForUpdate(db: SocialDb, owner: Owner, id: string): Promise<AccountRow | undefined> {
  const row = await accounts.select(db, owner).select(ACCOUNT_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst();
  return row && toAccount(row);
}

const accountList = accounts.list<{ platform?: string; status?: AccountStatus }, Record<string, unknown>>({
  filters: { platform: (eb, platform) => eb('platform', '=', platform), status: (eb, status) => eb('status', '=', status) },
  select: (from) => from.select(ACCOUNT_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listAccounts(db: SocialDb, owner: Owner, filters: { platform?: string; status?: AccountStatus }, page: PageRequest) {
  const { rows, total } = await accountList.page(db, owner, filters, page);
  return { rows: rows.map(toAccount), total };
}

export async function updateAccount(db: SocialDb, owner: Owner, id: string, changes: Partial<NewAccount>): Promise<AccountRow> {
  return toAccount(await accounts.update(db, owner).set(changes).where('id', '=', id).returning(ACCOUNT_COLUMNS).executeTakeFirstOrThrow());
}

export async function deleteAccount(db: SocialDb, owner: Owner, id: string): Promise<void> {
  await accounts.delete(db, owner).where('id', '=', id).execute();
}

/** Accounts of every owner not validated since `before`, oldest first (the health check). */
export async function accountsToValidate(db: SocialDb, before: Date, limit: number): Promise<Array<{ id: string; tenant_id: string; mode: Mode }>> {
  const rows = await accounts
    .acrossOwners(db)
    .select('id')
    .where((eb) => eb.or([eb('last_validated_at', 'is', null), eb('last_validated_at', '<', before)]))
    .orderBy('last_validated_at', 'asc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, id: String(row.id) }));
}

// Files

const FILE_COLUMNS = [
  'id',
  'status',
  'file_name',
  'kind',
  'mime',
  'size_bytes',
  'sha256',
  'reject_code',
  'reject_detail',
  'link_expires_at',
  'expires_at',
  'uploaded_at',
  'created_at',
  'updated_at',
] as const;

export interface FileRow {
  id: string;
  status: FileStatus;
  file_name: string;
  kind: string | null;
  mime: string | null;
  size_bytes: number;
  sha256: string;
  reject_code: RejectCode | null;
  reject_detail: string | null;
  link_expires_at: Date;
  expires_at: Date;
  uploaded_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const toFile = (row: Record<string, unknown>): FileRow => ({ ...row, size_bytes: Number(row.size_bytes) }) as unknown as FileRow;

export type NewFile = OwnedInsert<SocialFilesTable>;

export async function insertFile(db: SocialDb, owner: Owner, row: NewFile): Promise<FileRow> {
  return toFile(await files.insert(db, owner, row).returning(FILE_COLUMNS).executeTakeFirstOrThrow());
}

const fileById = files.statement((from, values: { id: string }) => from.select(FILE_COLUMNS).where('id', '=', values.id));
const filesByIds = files.statement((from, values: { ids: string[] }) => from.select(FILE_COLUMNS).where(sql<boolean>`id = any(${values.ids}::uuid[])`));

export async function findFile(db: SocialDb, owner: Owner, id: string): Promise<FileRow | undefined> {
  const row = await fileById.first(db, owner, { id });
  return row && toFile(row);
}

export async function findFiles(db: SocialDb, owner: Owner, ids: string[]): Promise<FileRow[]> {
  if (ids.length === 0) return [];
  return (await filesByIds.all(db, owner, { ids })).map(toFile);
}

/** The upload link's file, whoever owns it: the token is the credential (its hash is unique). */
export async function findFileByTokenHash(db: SocialDb, tokenHash: string): Promise<(FileRow & { tenant_id: string; mode: Mode }) | undefined> {
  const row = await files.acrossOwners(db).select(FILE_COLUMNS).where('token_hash', '=', tokenHash).executeTakeFirst();
  return row && { ...toFile(row), tenant_id: row.tenant_id, mode: row.mode };
}

/** Takes the one use of an upload link: pending and unexpired becomes uploading, atomically. */
export async function claimUpload(db: SocialDb, owner: Owner, id: string, now: Date): Promise<FileRow | undefined> {
  const row = await files
    .update(db, owner)
    .set({ status: 'uploading', updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('link_expires_at', '>', now)
    .returning(FILE_COLUMNS)
    .executeTakeFirst();
  return row && toFile(row);
}

export async function updateFile(db: SocialDb, owner: Owner, id: string, changes: Partial<NewFile>, onlyIf?: FileStatus[]): Promise<FileRow | undefined> {
  let query = files.update(db, owner).set(changes).where('id', '=', id);
  if (onlyIf) query = query.where('status', 'in', onlyIf);
  const row = await query.returning(FILE_COLUMNS).executeTakeFirst();
  return row && toFile(row);
}

/** Unused links past their 15 minutes, of every owner. */
export async function lapsedLinks(db: SocialDb, now: Date, limit: number): Promise<Array<{ id: string; tenant_id: string; mode: Mode }>> {
  return files.acrossOwners(db).select('id').where('status', '=', 'pending').where('link_expires_at', '<=', now).limit(limit).execute();
}

/**
 * Files of every owner past their 24 hours that no scheduled or publishing post still uses.
 * An upload cut off mid-way (`uploading`) is swept with them.
 */
export async function filesToExpire(db: SocialDb, now: Date, limit: number): Promise<Array<{ id: string; tenant_id: string; mode: Mode }>> {
  return files
    .acrossOwners(db)
    .select('id')
    .where('status', '<>', 'expired')
    .where('expires_at', '<=', now)
    .where(
      sql<boolean>`not exists (select 1 from social_posts p where p.tenant_id = social_files.tenant_id and p.mode = social_files.mode
        and p.status in ('scheduled', 'publishing') and p.media @> jsonb_build_array(jsonb_build_object('file_id', social_files.id::text)))`,
    )
    .limit(limit)
    .execute();
}

// Posts

const POST_COLUMNS = ['id', 'account_ids', 'body', 'media', 'scheduled_at', 'status', 'results', 'published_at', 'created_at', 'updated_at'] as const;

export interface PostRow {
  id: string;
  account_ids: string[];
  body: string;
  media: PostMedia[];
  scheduled_at: Date | null;
  status: PostStatus;
  results: PostResult[];
  published_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const toPost = (row: Record<string, unknown>): PostRow =>
  ({ ...row, media: (json(row.media) as PostMedia[] | null) ?? [], results: (json(row.results) as PostResult[] | null) ?? [] }) as unknown as PostRow;

export interface NewPost {
  id: string;
  account_ids: string[];
  body: string;
  media: PostMedia[];
  scheduled_at: Date | null;
  status: PostStatus;
  results: PostResult[];
  published_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

function postValues(row: Partial<NewPost>) {
  const { media, results, ...rest } = row;
  return {
    ...rest,
    ...(media !== undefined ? { media: JSON.stringify(media) } : {}),
    ...(results !== undefined ? { results: JSON.stringify(results) } : {}),
  };
}

export async function insertPost(db: SocialDb, owner: Owner, row: NewPost): Promise<PostRow> {
  return toPost(
    await posts
      .insert(db, owner, postValues(row) as never)
      .returning(POST_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}

const postById = posts.statement((from, values: { id: string }) => from.select(POST_COLUMNS).where('id', '=', values.id));

export async function findPost(db: SocialDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<PostRow | undefined> {
  const row = options.forUpdate ? await posts.select(db, owner).select(POST_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst() : await postById.first(db, owner, { id });
  return row && toPost(row);
}

const postList = posts.list<{ status?: PostStatus; account_id?: string }, Record<string, unknown>>({
  filters: {
    status: (eb, status) => eb('status', '=', status),
    account_id: (eb, accountId) => eb(sql.val(accountId), '=', eb.fn.any('account_ids')),
  },
  select: (from) => from.select(POST_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listPosts(db: SocialDb, owner: Owner, filters: { status?: PostStatus; account_id?: string }, page: PageRequest) {
  const { rows, total } = await postList.page(db, owner, filters, page);
  return { rows: rows.map(toPost), total };
}

export async function updatePost(db: SocialDb, owner: Owner, id: string, changes: Partial<NewPost>): Promise<PostRow> {
  return toPost(
    await posts
      .update(db, owner)
      .set(postValues(changes) as never)
      .where('id', '=', id)
      .returning(POST_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}

export async function deletePost(db: SocialDb, owner: Owner, id: string): Promise<void> {
  await posts.delete(db, owner).where('id', '=', id).execute();
}

/** Posts of every owner due to publish whose job may have been lost (the safety net). */
export async function overduePosts(db: SocialDb, before: Date, limit: number): Promise<Array<{ id: string; tenant_id: string; mode: Mode }>> {
  return posts
    .acrossOwners(db)
    .select('id')
    .where('status', 'in', ['scheduled', 'publishing'])
    .where((eb) => eb.or([eb('scheduled_at', 'is', null), eb('scheduled_at', '<', before)]))
    .limit(limit)
    .execute();
}
