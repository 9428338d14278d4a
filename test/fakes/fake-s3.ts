import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signRequest } from '../../src/lib/aws-sigv4.js';

/**
 * An S3-compatible object store on 127.0.0.1 for tests: PUT (the body must be exactly its
 * Content-Length, or nothing is stored, as S3 does), GET with a Range, DELETE. Every request must
 * carry a valid Signature V4 for the configured keys: the fake signs what the request says it
 * signed, and refuses it (403 SignatureDoesNotMatch) unless the signatures agree.
 */
export class FakeS3 {
  readonly objects = new Map<string, Buffer>();
  readonly accessKeyId = 'AKIAFAKEFAKEFAKE0001';
  readonly secretAccessKey = 'fake/secret/key/for/tests/only/0000000000';
  readonly region = 'eu-west-3';
  readonly bucket = 'uploads-test';
  /** Methods and paths of the requests received, in order. */
  readonly requests: string[] = [];
  /** Set to make every call answer this status (a store that is down or refuses the keys). */
  failWith: number | undefined;
  #server: http.Server | undefined;
  origin = '';

  env(prefix = 'files/'): Record<string, string> {
    return {
      S3_ENDPOINT: this.origin,
      S3_REGION: this.region,
      S3_BUCKET: this.bucket,
      S3_ACCESS_KEY_ID: this.accessKeyId,
      S3_SECRET_ACCESS_KEY: this.secretAccessKey,
      S3_PREFIX: prefix,
    };
  }

  settings(prefix = 'files/') {
    return { endpoint: this.origin, region: this.region, bucket: this.bucket, accessKeyId: this.accessKeyId, secretAccessKey: this.secretAccessKey, prefix };
  }

  /** Object keys under the bucket. */
  keys(): string[] {
    return [...this.objects.keys()].sort();
  }

  async start(): Promise<this> {
    this.#server = http.createServer((request, response) => this.#handle(request, response));
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }

  #handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const url = new URL(request.url ?? '/', this.origin);
    this.requests.push(`${request.method} ${url.pathname}`);
    const answer = (status: number, code?: string, body?: Buffer, headers: Record<string, string> = {}) => {
      response.writeHead(status, code ? { 'content-type': 'application/xml', ...headers } : headers);
      response.end(code ? `<?xml version="1.0"?><Error><Code>${code}</Code></Error>` : body);
    };
    if (this.failWith) {
      request.resume();
      return answer(this.failWith, 'ServiceUnavailable');
    }
    if (!this.#signatureMatches(request, url)) {
      request.resume();
      return answer(403, 'SignatureDoesNotMatch');
    }
    const prefix = `/${this.bucket}/`;
    if (!url.pathname.startsWith(prefix)) return answer(404, 'NoSuchBucket');
    const key = decodeURIComponent(url.pathname.slice(prefix.length));

    if (request.method === 'PUT') {
      const declared = Number(request.headers['content-length']);
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        if (body.length !== declared) return answer(400, 'IncompleteBody');
        this.objects.set(key, body);
        answer(200);
      });
      return;
    }
    if (request.method === 'DELETE') {
      this.objects.delete(key);
      return answer(204);
    }
    if (request.method === 'GET') {
      const object = this.objects.get(key);
      if (!object) return answer(404, 'NoSuchKey');
      const range = /^bytes=(\d+)-(\d*)$/.exec(String(request.headers.range ?? ''));
      if (!range) return answer(200, undefined, object);
      const start = Number(range[1]);
      const end = range[2] ? Math.min(Number(range[2]), object.length - 1) : object.length - 1;
      if (start >= object.length) return answer(416, 'InvalidRange');
      return answer(206, undefined, object.subarray(start, end + 1), { 'content-range': `bytes ${start}-${end}/${object.length}` });
    }
    answer(405, 'MethodNotAllowed');
  }

  /** Signs again what the request says it signed, with this store's keys, and compares. */
  #signatureMatches(request: http.IncomingMessage, url: URL): boolean {
    const authorization = String(request.headers.authorization ?? '');
    const parsed = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(authorization);
    if (!parsed || parsed[1] !== this.accessKeyId || parsed[3] !== this.region) return false;
    const signed = parsed[4]!.split(';');
    if (!signed.includes('host') || !signed.includes('x-amz-date') || !signed.includes('x-amz-content-sha256')) return false;
    const amzDate = String(request.headers['x-amz-date'] ?? '');
    const date = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
    if (Number.isNaN(date.getTime()) || Math.abs(date.getTime() - Date.now()) > 15 * 60_000) return false;
    const headers: Record<string, string> = {};
    for (const name of signed) if (name !== 'host' && name !== 'x-amz-date' && name !== 'x-amz-content-sha256') headers[name] = String(request.headers[name] ?? '');
    const expected = signRequest(
      { accessKeyId: this.accessKeyId, secretAccessKey: this.secretAccessKey, region: this.region, service: 's3' },
      {
        method: request.method ?? 'GET',
        url: new URL(`http://${request.headers.host}${url.pathname}${url.search}`),
        headers,
        payloadHash: String(request.headers['x-amz-content-sha256']),
        date,
      },
    );
    return expected.authorization === authorization;
  }
}
