import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Owner } from '../../db/owned.js';
import { HOUR_MS, MINUTE_MS } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound } from '../../platform/errors/app-error.js';
import { BlobStoreError, type BlobWriter } from './blob-store.js';
import { blobBytes, HEAD_BYTES, inspectFile, type Inspection } from './inspect.js';
import { presentFile } from './present.js';
import * as repository from './repository.js';
import type { FileRow } from './repository.js';
import type { CreateUploadLinkInput, UploadFileReply } from './schemas.js';
import { blobKey, inTransaction, type SocialDeps } from './shared.js';
import type { RejectCode } from './tables.js';

export const LINK_LIFE_MS = 15 * MINUTE_MS;
export const FILE_LIFE_MS = 24 * HOUR_MS;
export const SWEEP_JOB = 'social.files.sweep';
export const SWEEP_EVERY_MS = 15 * MINUTE_MS;
const TOKEN_PREFIX = 'upl_';
export const UPLOAD_PATH = '/api/v1/services/social/uploads/';

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;

/** The name as a plain file name: last path part, no control or shell-hostile characters, no reserved names. */
export function cleanFileName(raw: string): string {
  const last = raw.split(/[\\/]/).pop() ?? '';
  let name = last
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, '')
    .replace(/[<>:"|?*]/g, '_')
    .trim()
    .replace(/^\.+/, '')
    .replace(/[. ]+$/, '');
  if (WINDOWS_RESERVED.test(name)) name = `_${name}`;
  if (name.length > 255) {
    const dot = name.lastIndexOf('.');
    const extension = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
    name = name.slice(0, 255 - extension.length) + extension;
  }
  return name;
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

export interface UploadOutcome {
  file: UploadFileReply;
  /** The body was not read to its end: the connection must close after the reply. */
  closeConnection: boolean;
}

export function createFileRules(deps: SocialDeps) {
  const { db, clock, jobs, events, store, publicBaseUrl } = deps;
  const tables = repository.socialDb(db);

  async function finish(owner: Owner, file: FileRow, outcome: { code: RejectCode; detail: string } | null, inspection: Partial<Inspection>, now: Date): Promise<FileRow> {
    return inTransaction(db, async (tx) => {
      const updated = await repository.updateFile(
        tx,
        owner,
        file.id,
        {
          status: outcome ? 'rejected' : 'ready',
          kind: inspection.kind ?? null,
          mime: inspection.mime ?? null,
          reject_code: outcome?.code ?? null,
          reject_detail: outcome?.detail.slice(0, 500) ?? null,
          uploaded_at: now,
          updated_at: now,
        },
        ['uploading'],
      );
      if (!updated) return (await repository.findFile(tx, owner, file.id)) ?? file; // swept meanwhile
      await events.record(tx, owner, outcome ? 'social.file.rejected' : 'social.file.ready', presentFile(updated));
      return updated;
    });
  }

  /** Marks an unused link whose 15 minutes are over as rejected (link_expired). */
  /**
   * Streams the body into the store while hashing it, then reads what was stored for the type
   * checks; only a file that passes stays. The body's own problems and the checks' findings are
   * outcomes; the store's failures are thrown as BlobStoreError.
   */
  async function storeAndCheck(key: string, body: Readable, file: FileRow): Promise<Stored> {
    const writer = await store.writer(key, file.size_bytes);
    let received: Received;
    try {
      received = await receive(body, writer, file.size_bytes);
    } catch (error) {
      await writer.abort();
      throw error;
    }
    if (received.size !== file.size_bytes) {
      await writer.abort();
      return { outcome: sizeMismatch(file.size_bytes, received.size, received.overflow), inspection: {}, ended: received.ended };
    }
    if (received.sha256 !== file.sha256) {
      await writer.abort();
      return { outcome: { code: 'checksum_mismatch', detail: 'The SHA-256 of the bytes is not the declared one.' }, inspection: {}, ended: received.ended };
    }
    await writer.commit();
    const inspection = await inspectFile(blobBytes(store, key, received.size, received.head));
    if (inspection.reject) await store.delete(key);
    return { outcome: inspection.reject, inspection, ended: received.ended };
  }

  async function expireLink(owner: Owner, id: string, now: Date): Promise<void> {
    await inTransaction(db, async (tx) => {
      const updated = await repository.updateFile(
        tx,
        owner,
        id,
        { status: 'rejected', reject_code: 'link_expired', reject_detail: 'The upload link expired before the file was sent.', updated_at: now },
        ['pending'],
      );
      if (updated) await events.record(tx, owner, 'social.file.rejected', presentFile(updated));
    });
  }

  return {
    expireLink,

    async createUploadLink(ctx: RequestContext, input: CreateUploadLinkInput): Promise<UploadFileReply> {
      const fileName = cleanFileName(input.file_name);
      if (fileName === '') throw invalidField('file_name', 'invalid_value', 'file_name has no usable characters once path parts and control characters are removed.');
      const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
      const url = `${publicBaseUrl}${UPLOAD_PATH}${token}`;
      return inTransaction(db, async (tx, jobsDb) => {
        const row = await repository.insertFile(tx, ctx, {
          id: newId(),
          status: 'pending',
          file_name: fileName,
          kind: null,
          mime: null,
          size_bytes: input.size_bytes,
          sha256: input.sha256.toLowerCase(),
          reject_code: null,
          reject_detail: null,
          token_hash: hashToken(token),
          link_expires_at: new Date(ctx.now.getTime() + LINK_LIFE_MS),
          expires_at: new Date(ctx.now.getTime() + FILE_LIFE_MS),
          uploaded_at: null,
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        await jobs.enqueue({ kind: SWEEP_JOB, runAt: new Date(ctx.now.getTime() + SWEEP_EVERY_MS), dedupeKey: `recurring:${SWEEP_JOB}` }, jobsDb);
        await events.record(tx, ctx, 'social.file.created', presentFile(row));
        const howToSend = `curl --fail -X PUT -H 'Content-Type: application/octet-stream' --data-binary @${shellQuote(fileName)} ${shellQuote(url)}`;
        return presentFile(row, { token, url, howToSend });
      });
    },

    async getFile(ctx: RequestContext, id: string): Promise<UploadFileReply> {
      const row = await repository.findFile(tables, ctx, id);
      if (!row) throw notFound('File');
      return presentFile(row);
    },

    /**
     * The PUT of a link's bytes. The token is looked up (by its hash) and the link's one use taken
     * before a byte of the body is read; then the body streams to the blob store while its size
     * and SHA-256 are computed. More bytes than declared stop the upload at once.
     */
    async receiveUpload(token: string, body: Readable, contentLength: number | undefined): Promise<UploadOutcome> {
      const now = clock.now();
      const found = await repository.findFileByTokenHash(tables, hashToken(token));
      if (!found) throw new AppError('not_found', 'No upload link has this token.');
      const owner: Owner = { tenantId: found.tenant_id, mode: found.mode };
      if (found.status !== 'pending') {
        // A link never used that ran out (marked by a PUT or by the sweep) is expired, not used.
        if (found.uploaded_at === null && (found.reject_code === 'link_expired' || found.status === 'expired')) throw linkExpired();
        throw new AppError('link_used', 'This upload link was used already; create a new link to send the file again.');
      }
      if (found.link_expires_at.getTime() <= now.getTime()) {
        await expireLink(owner, found.id, now);
        throw linkExpired();
      }
      const file = await repository.claimUpload(tables, owner, found.id, now);
      if (!file) throw new AppError('link_used', 'This upload link was used already; create a new link to send the file again.');

      if (contentLength !== undefined && contentLength !== file.size_bytes) {
        const row = await finish(owner, file, sizeMismatch(file.size_bytes, contentLength), {}, clock.now());
        return { file: presentFile(row), closeConnection: true };
      }
      const key = blobKey(owner, file.id);
      let stored: Stored;
      try {
        stored = await storeAndCheck(key, body, file);
      } catch (error) {
        // The store failed, not the file: the link is handed back unused, to be sent again.
        await store.delete(key).catch(() => {});
        await repository.updateFile(tables, owner, file.id, { status: 'pending', updated_at: clock.now() }, ['uploading']);
        if (!(error instanceof BlobStoreError)) throw error;
        throw new AppError('service_unavailable', 'The file store could not take the upload just now; send the file again to the same upload_url.', [], { 'Retry-After': '5' });
      }
      const row = await finish(owner, file, stored.outcome, stored.inspection, clock.now());
      return { file: presentFile(row), closeConnection: !stored.ended };
    },
  };
}

function linkExpired(): AppError {
  return new AppError('link_expired', 'This upload link expired (links work for 15 minutes); create a new one.');
}

function sizeMismatch(declared: number, sent: number, overflow = false): { code: RejectCode; detail: string } {
  return {
    code: 'size_mismatch',
    detail: overflow ? `More bytes were sent than the declared ${declared}; the upload was stopped.` : `${sent} bytes were sent; ${declared} were declared.`,
  };
}

interface Stored {
  outcome: { code: RejectCode; detail: string } | null;
  inspection: Partial<Inspection>;
  /** The body was read to its end. */
  ended: boolean;
}

interface Received {
  size: number;
  sha256: string;
  head: Buffer;
  /** More bytes than declared arrived: reading stopped there. */
  overflow: boolean;
  /** The body was read to its end. */
  ended: boolean;
}

/**
 * Reads the body into the writer, hashing as it goes; memory stays at a chunk or two (the
 * writer's back-pressure pauses the body). Beyond `declared` bytes it stops reading at once;
 * a body cut off by the client ends what was received.
 */
function receive(body: Readable, writer: BlobWriter, declared: number): Promise<Received> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    const head = Buffer.alloc(Math.min(HEAD_BYTES, declared));
    let headLength = 0;
    let size = 0;
    let settled = false;
    const done = (overflow: boolean, ended: boolean) => {
      if (settled) return;
      settled = true;
      body.removeListener('data', onData);
      body.removeListener('end', onEnd);
      body.removeListener('close', onClose);
      if (!ended) body.pause();
      resolve({ size, sha256: hash.digest('hex'), head: head.subarray(0, headLength), overflow, ended });
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > declared) return done(true, false);
      hash.update(chunk);
      if (headLength < head.length) headLength += chunk.copy(head, headLength, 0, Math.min(chunk.length, head.length - headLength));
      if (!writer.stream.write(chunk)) {
        body.pause();
        writer.stream.once('drain', () => {
          if (!settled) body.resume();
        });
      }
    };
    const onEnd = () => done(false, true);
    const onClose = () => done(false, false);
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('close', onClose);
    body.on('error', () => done(false, false));
    writer.stream.once('error', (error) => {
      if (settled) return;
      settled = true;
      body.removeListener('data', onData);
      reject(error instanceof BlobStoreError ? error : new BlobStoreError(`Writing the upload failed: ${error.message}`, { cause: error }));
    });
  });
}
