import { PassThrough, Writable, type Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { EMPTY_PAYLOAD_HASH, signRequest, UNSIGNED_PAYLOAD } from '../../lib/aws-sigv4.js';
import type { S3Settings } from '../../config/index.js';
import { BlobStoreError, checkedBlobKey, type BlobStore, type BlobWriter } from './blob-store.js';

/** A failed call to the object store; its message names the call and status, never a credential. */
export class ObjectStoreError extends BlobStoreError {}

/**
 * Uploaded bytes in an S3-compatible object store (AWS S3, MinIO, Cloudflare R2...), addressed
 * path-style as `<endpoint>/<bucket>/<prefix><key>`, signed with AWS Signature V4. A blob is
 * streamed to a single PUT as it arrives (its size is declared up front, so no buffering;
 * uploads stay under S3's 5 GB single-PUT limit), read back with ranged GETs, and removed with
 * DELETE. An upload that is aborted never completes its PUT, so the store keeps nothing of it.
 */
export class S3BlobStore implements BlobStore {
  readonly #agent: Agent;

  constructor(
    private readonly settings: S3Settings,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.#agent = new Agent({ connectTimeout: 10_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
  }

  #url(key: string): URL {
    const { endpoint, bucket, prefix } = this.settings;
    return new URL(`${endpoint}/${encodeURIComponent(bucket)}/${prefix}${checkedBlobKey(key)}`);
  }

  #send(method: 'GET' | 'PUT' | 'DELETE', key: string, options: { headers?: Record<string, string>; body?: Readable; payloadHash?: string } = {}) {
    const url = this.#url(key);
    const headers = signRequest(
      { accessKeyId: this.settings.accessKeyId, secretAccessKey: this.settings.secretAccessKey, region: this.settings.region, service: 's3' },
      { method, url, headers: options.headers, payloadHash: options.payloadHash ?? EMPTY_PAYLOAD_HASH, date: this.now() },
    );
    return request(url, { method, headers, body: options.body, dispatcher: this.#agent }).catch((error: unknown) => {
      throw new ObjectStoreError(`${method} ${key}: ${(error as Error).message}`);
    });
  }

  async writer(key: string, sizeBytes: number): Promise<BlobWriter> {
    // The PUT's body is a stream of its own: the request may end it early (the store answered
    // before the upload was sent), and the writer must then fail loudly, not just close.
    const body = new PassThrough({ highWaterMark: 1024 * 1024 });
    const stream = new Writable({
      highWaterMark: 1024 * 1024,
      write(chunk: Buffer, _encoding, done) {
        if (body.write(chunk)) done();
        else body.once('drain', () => done());
      },
      final(done) {
        body.end();
        done();
      },
      destroy(error, done) {
        // Destroyed after its end (auto-destroy) the PUT goes on; before it, the PUT is abandoned.
        if (!body.writableEnded) body.destroy();
        done(error);
      },
    });
    let finished = false;
    const sent = this.#send('PUT', key, { headers: { 'content-length': String(sizeBytes) }, body, payloadHash: UNSIGNED_PAYLOAD });
    // A store that answers (or fails) before the body is sent stops the writer at once, so the
    // upload fails instead of waiting on back-pressure that will never clear.
    sent.then(
      async (response) => {
        if (!finished && response.statusCode >= 300) stream.destroy(await failure('PUT', key, response));
      },
      (error: unknown) => {
        if (!finished) stream.destroy(error as Error);
      },
    );
    return {
      stream,
      commit: async () => {
        finished = true;
        await new Promise<void>((resolve, reject) => stream.end((error?: Error | null) => (error ? reject(error) : resolve())));
        const response = await sent;
        if (response.statusCode >= 300) throw await failure('PUT', key, response);
        await response.body.dump();
      },
      abort: async () => {
        finished = true;
        stream.destroy();
        await sent.then((response) => response.body.dump()).catch(() => {});
        await this.delete(key).catch(() => {});
      },
    };
  }

  async read(key: string, start: number, length: number): Promise<Buffer> {
    if (length <= 0) return Buffer.alloc(0);
    const response = await this.#send('GET', key, { headers: { range: `bytes=${start}-${start + length - 1}` } });
    if (response.statusCode === 416) {
      await response.body.dump();
      return Buffer.alloc(0);
    }
    if (response.statusCode !== 200 && response.statusCode !== 206) throw await failure('GET', key, response);
    const bytes = Buffer.from(await response.body.arrayBuffer());
    // A store that ignores Range (200) sends the whole object.
    return response.statusCode === 200 ? bytes.subarray(start, start + length) : bytes;
  }

  stream(key: string, options: { start?: number; end?: number; highWaterMark?: number } = {}): Readable {
    const out = new PassThrough({ highWaterMark: options.highWaterMark ?? 256 * 1024 });
    const start = options.start ?? 0;
    const range = `bytes=${start}-${options.end ?? ''}`;
    this.#send('GET', key, { headers: { range } }).then(
      async (response) => {
        if (response.statusCode === 416) {
          await response.body.dump();
          out.end();
        } else if (response.statusCode === 206 || (response.statusCode === 200 && start === 0 && options.end === undefined)) {
          response.body.on('error', (error) => out.destroy(error)).pipe(out);
        } else {
          out.destroy(response.statusCode === 200 ? new ObjectStoreError(`GET ${key}: the object store ignored the Range header.`) : await failure('GET', key, response));
          if (response.statusCode === 200) response.body.destroy();
        }
      },
      (error: unknown) => out.destroy(error as Error),
    );
    return out;
  }

  async delete(key: string): Promise<void> {
    const response = await this.#send('DELETE', key);
    if (response.statusCode >= 300 && response.statusCode !== 404) throw await failure('DELETE', key, response);
    await response.body.dump();
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

/** The store's error code (S3 answers `<Error><Code>…</Code>`), never the request's headers. */
async function failure(method: string, key: string, response: Dispatcher.ResponseData): Promise<ObjectStoreError> {
  const text = await response.body.text().catch(() => '');
  const code = /<Code>([^<]{1,100})<\/Code>/.exec(text)?.[1];
  return new ObjectStoreError(`${method} ${key}: the object store answered ${response.statusCode}${code ? ` ${code}` : ''}.`);
}
