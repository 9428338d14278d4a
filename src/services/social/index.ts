import type { ServiceModule } from '../module.js';
import type { S3Settings } from '../../config/index.js';
import { LocalDiskBlobStore, type BlobStore } from './blob-store.js';
import { SandboxConnector, type SocialConnector } from './connector.js';
import { socialRoutes } from './routes.js';
import { S3BlobStore } from './s3-blob-store.js';
import { SocialAccount, SocialPost, UploadFile } from './schemas.js';
import { createSocialService, type SocialService } from './service.js';

export type { SocialService } from './service.js';
export type { SocialConnector } from './connector.js';
export type { BlobStore } from './blob-store.js';

interface SocialSettings {
  filesDir: string;
  objectStore: S3Settings | undefined;
  publicBaseUrl: string;
  secretsKey: Buffer;
}

/**
 * Connected social accounts (a sandbox platform in test mode; the connector interface for OAuth
 * platforms), one-time upload links whose bytes are checked before a file can be used, and
 * posts published through the connectors by a durable job.
 */
export const socialModule: ServiceModule<SocialService, SocialSettings> = {
  id: 'social',
  migrations: new URL('./migrations/', import.meta.url),
  events: [
    { type: 'social.account.connected', description: 'An account was connected.', object: SocialAccount },
    { type: 'social.account.disconnected', description: 'An account was disconnected (DELETE); the object is the account as it was.', object: SocialAccount },
    { type: 'social.account.status_changed', description: 'The health check changed an account status (connected, expired, error).', object: SocialAccount },
    { type: 'social.file.created', description: 'An upload link was created (the object carries no secret).', object: UploadFile },
    { type: 'social.file.ready', description: 'An uploaded file passed every check.', object: UploadFile },
    { type: 'social.file.rejected', description: 'An upload was refused, or its link expired unused (reject_code).', object: UploadFile },
    { type: 'social.file.expired', description: 'A file reached the end of its 24 hours and its bytes were deleted.', object: UploadFile },
    { type: 'social.post.created', description: 'A post was created (draft, scheduled or publishing now).', object: SocialPost },
    { type: 'social.post.updated', description: 'A draft or scheduled post was changed.', object: SocialPost },
    { type: 'social.post.deleted', description: 'A post was deleted; the object is the post as it was.', object: SocialPost },
    { type: 'social.post.published', description: 'A post was published to every one of its accounts.', object: SocialPost },
    { type: 'social.post.failed', description: 'Publishing a post failed on some (partially_failed) or all (failed) of its accounts.', object: SocialPost },
  ],
  settings: ({ config, secretsKey }) => ({ filesDir: config.socialFilesDir, objectStore: config.objectStore, publicBaseUrl: config.publicBaseUrl, secretsKey }),
  create: (deps) => {
    const connectors = new Map<string, SocialConnector>([['sandbox', new SandboxConnector()]]);
    return createSocialService({
      db: deps.db,
      clock: deps.clock,
      jobs: deps.jobs,
      events: deps.events,
      store: blobStore(deps.settings),
      connectors,
      secretsKey: deps.settings.secretsKey,
      publicBaseUrl: deps.settings.publicBaseUrl,
    });
  },
  routes: socialRoutes,
};

function blobStore(settings: SocialSettings): BlobStore {
  return settings.objectStore ? new S3BlobStore(settings.objectStore) : new LocalDiskBlobStore(settings.filesDir);
}
