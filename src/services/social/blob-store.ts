import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

/**
 * Where uploaded file bytes live. Local disk under DATA_DIR by default; an S3-compatible store
 * (s3-blob-store.ts: PUT object, ranged GET, DELETE) is what a deployment with several servers
 * configures.
 */
export interface BlobStore {
  /** A stream that writes a blob of exactly `sizeBytes`; `commit` makes it visible, `abort` removes what was written. */
  writer(key: string, sizeBytes: number): Promise<BlobWriter>;
  /** Up to `length` bytes from `start` (fewer at the end). */
  read(key: string, start: number, length: number): Promise<Buffer>;
  stream(key: string, options?: { start?: number; end?: number; highWaterMark?: number }): Readable;
  delete(key: string): Promise<void>;
}

/** The store failed to take or give back bytes (a disk error, an object store down or refusing the keys): never the file's fault. */
export class BlobStoreError extends Error {
  override readonly name = 'BlobStoreError';
}

export interface BlobWriter {
  stream: Writable;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/** A disk call whose failure (ENOSPC, EACCES...) is the store's, not the file's. */
async function storeCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new BlobStoreError(`The file store failed: ${(error as Error).message}`, { cause: error });
  }
}

const SAFE_KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/;

/** Blob keys are made by the service (tenant/mode/file id); anything else is a bug, refused before it reaches a path or URL. */
export function checkedBlobKey(key: string): string {
  if (!SAFE_KEY.test(key)) throw new Error(`Unsafe blob key: ${key}`);
  return key;
}

export class LocalDiskBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  #path(key: string): string {
    return path.join(this.root, checkedBlobKey(key));
  }

  async writer(key: string): Promise<BlobWriter> {
    const file = this.#path(key);
    await storeCall(() => mkdir(path.dirname(file), { recursive: true }));
    // 1 MiB writes: fewer system calls for large uploads, still a flat footprint.
    const stream = createWriteStream(file, { flags: 'w', highWaterMark: 1024 * 1024 });
    const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()));
    return {
      stream,
      commit: () =>
        storeCall(async () => {
          if (!stream.writableFinished) await new Promise<void>((resolve, reject) => stream.end((error?: Error | null) => (error ? reject(error) : resolve())));
          await closed;
        }),
      abort: async () => {
        stream.destroy();
        await closed;
        await rm(file, { force: true });
      },
    };
  }

  read(key: string, start: number, length: number): Promise<Buffer> {
    return storeCall(async () => {
      const handle = await open(this.#path(key), 'r');
      try {
        const buffer = Buffer.alloc(length);
        const { bytesRead } = await handle.read(buffer, 0, length, start);
        return buffer.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    });
  }

  stream(key: string, options: { start?: number; end?: number; highWaterMark?: number } = {}): Readable {
    return createReadStream(this.#path(key), { highWaterMark: 256 * 1024, ...options });
  }

  delete(key: string): Promise<void> {
    return storeCall(() => rm(this.#path(key), { force: true }));
  }
}
