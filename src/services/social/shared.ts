import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import type { Clock } from '../../lib/clock.js';
import { open, seal } from '../../lib/secret-box.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import type { BlobStore } from './blob-store.js';
import type { ConnectorTokens, SocialConnector } from './connector.js';
import * as repository from './repository.js';
import type { AccountRow, SocialDb } from './repository.js';

export interface SocialDeps {
  db: Db;
  clock: Clock;
  jobs: JobRunner;
  events: EventLog;
  store: BlobStore;
  /** Connectors by platform name; `sandbox` always. */
  connectors: ReadonlyMap<string, SocialConnector>;
  secretsKey: Buffer;
  /** Absolute base of upload URLs (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
}

/** Runs `work` in one transaction; `tx` is for the social tables, `jobsDb` for the job runner and the event log. */
export function inTransaction<T>(db: Db, work: (tx: SocialDb, jobsDb: Db) => Promise<T>): Promise<T> {
  return db.transaction().execute((tx) => work(repository.socialDb(tx), tx));
}

/** Where a file's bytes live in the blob store. */
export const blobKey = (owner: Owner, fileId: string) => `${owner.tenantId}/${owner.mode}/${fileId}`;

const tokenContext = (owner: Owner, externalId: string, which: 'access' | 'refresh') => `social_account:${owner.tenantId}:${owner.mode}:${externalId}:${which}`;

/** Tokens are stored sealed (AES-256-GCM with SECRETS_KEY), bound to their owner and account. */
export function sealTokens(secretsKey: Buffer, owner: Owner, externalId: string, tokens: { accessToken: string; refreshToken: string | null }) {
  return {
    access_token_sealed: seal(secretsKey, Buffer.from(tokens.accessToken), tokenContext(owner, externalId, 'access')),
    refresh_token_sealed: tokens.refreshToken === null ? null : seal(secretsKey, Buffer.from(tokens.refreshToken), tokenContext(owner, externalId, 'refresh')),
  };
}

export function openTokens(secretsKey: Buffer, owner: Owner, row: AccountRow): ConnectorTokens | undefined {
  if (!row.access_token_sealed) return undefined;
  return {
    accessToken: open(secretsKey, row.access_token_sealed, tokenContext(owner, row.external_id, 'access')).toString(),
    refreshToken: row.refresh_token_sealed ? open(secretsKey, row.refresh_token_sealed, tokenContext(owner, row.external_id, 'refresh')).toString() : null,
    expiresAt: row.token_expires_at,
    externalId: row.external_id,
  };
}
