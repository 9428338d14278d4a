import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeS3 } from '../../../test/fakes/fake-s3.js';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { S3BlobStore } from './s3-blob-store.js';
import { docx, hostile, mp4, png, sha256 } from './test-helpers.js';

const BASE = '/api/v1/services/social';

let s3: FakeS3;
beforeAll(async () => {
  s3 = await new FakeS3().start();
});
afterAll(async () => {
  await s3?.stop();
});

async function write(store: S3BlobStore, key: string, bytes: Buffer, declared = bytes.length) {
  const writer = await store.writer(key, declared);
  writer.stream.write(bytes);
  return writer;
}

describe('the S3-compatible blob store', () => {
  it('streams a blob to one signed PUT, reads ranges and streams back, and deletes it', async () => {
    const store = new S3BlobStore(s3.settings('unit/'));
    const bytes = Buffer.from('0123456789abcdefghij');
    const writer = await write(store, 'tenant/test/file-1', bytes);
    await writer.commit();
    expect(s3.objects.get('unit/tenant/test/file-1')).toEqual(bytes);
    expect((await store.read('tenant/test/file-1', 5, 4)).toString()).toBe('5678');
    expect((await store.read('tenant/test/file-1', 18, 10)).toString()).toBe('ij');
    expect((await store.read('tenant/test/file-1', 30, 10)).length).toBe(0);
    expect(await text(store.stream('tenant/test/file-1', { start: 10, end: 14 }))).toBe('abcde');
    expect(await text(store.stream('tenant/test/file-1', { start: 15 }))).toBe('fghij');
    await store.delete('tenant/test/file-1');
    expect(s3.objects.has('unit/tenant/test/file-1')).toBe(false);
    await store.delete('tenant/test/file-1'); // deleting what is gone is not an error
    await store.close();
  });

  it('keeps nothing of an aborted upload', async () => {
    const store = new S3BlobStore(s3.settings('unit/'));
    const writer = await write(store, 'tenant/test/file-2', Buffer.from('half of it'), 100);
    await writer.abort();
    expect(s3.objects.has('unit/tenant/test/file-2')).toBe(false);
    await store.close();
  });

  it('fails the writer at once when the store refuses the keys, instead of waiting on back-pressure', async () => {
    const store = new S3BlobStore({ ...s3.settings('unit/'), secretAccessKey: 'not-the-secret' });
    const writer = await store.writer('tenant/test/file-3', 64 * 1024 * 1024);
    const failed = new Promise<Error>((resolve) => writer.stream.once('error', resolve));
    Readable.from([Buffer.alloc(1024 * 1024)]).pipe(writer.stream, { end: false });
    const error = await failed;
    expect(error.message).toMatch(/answered 403 SignatureDoesNotMatch/);
    expect(error.message).not.toContain('not-the-secret');
    await writer.abort();
    await expect(store.read('tenant/test/file-3', 0, 10)).rejects.toThrow(/answered 403/);
    await store.close();
  });

  it('refuses a key that is not one the service makes, before any request', async () => {
    const store = new S3BlobStore(s3.settings('unit/'));
    const sent = s3.requests.length;
    await expect(store.read('../other-bucket/x', 0, 1)).rejects.toThrow(/Unsafe blob key/);
    expect(s3.requests.length).toBe(sent);
    await store.close();
  });
});

describe('uploads through the API with S3_BUCKET set', () => {
  let platform: TestPlatform;
  let key: string;
  beforeAll(async () => {
    platform = await startTestPlatform({ env: s3.env('social/') });
    key = await (await platform.newTenant()).key();
  });
  afterAll(async () => {
    await platform?.close();
  });

  async function upload(bytes: Buffer, declaredSha = sha256(bytes)) {
    const link = (await call(platform.app, 'POST', `${BASE}/files/upload-links`, { key, body: { file_name: 'f.bin', size_bytes: bytes.length, sha256: declaredSha } })).json().data;
    const response = await call(platform.app, 'PUT', new URL(link.upload_url).pathname, { body: bytes, headers: { 'content-type': 'application/octet-stream' } });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data;
  }

  const objectKeyOf = (fileId: string) => s3.keys().find((name) => name.startsWith('social/') && name.endsWith(fileId));

  it('stores accepted files in the bucket under the prefix and reads them back for the checks (PNG, MP4, DOCX)', async () => {
    for (const [bytes, kind] of [
      [png(), 'png'],
      [mp4(4096), 'mp4'],
      [docx(), 'docx'],
    ] as const) {
      const file = await upload(bytes);
      expect(file, kind).toMatchObject({ status: 'ready', kind, reject_code: null });
      expect(s3.objects.get(objectKeyOf(file.file_id)!)).toEqual(bytes);
    }
  });

  it('leaves nothing in the bucket for a wrong checksum or a refused file', async () => {
    const wrongHash = await upload(png(), 'c'.repeat(64));
    expect(wrongHash).toMatchObject({ status: 'rejected', reject_code: 'checksum_mismatch' });
    expect(objectKeyOf(wrongHash.file_id)).toBeUndefined();
    const macro = await upload(hostile.docxWithVbaProject());
    expect(macro).toMatchObject({ status: 'rejected', reject_code: 'macro_detected' });
    expect(objectKeyOf(macro.file_id)).toBeUndefined();
  });

  it('answers 503 with Retry-After while the store is down, and the same link works once it is back', async () => {
    const bytes = png(3, 3);
    const link = (await call(platform.app, 'POST', `${BASE}/files/upload-links`, { key, body: { file_name: 'f.png', size_bytes: bytes.length, sha256: sha256(bytes) } })).json()
      .data;
    const send = () => call(platform.app, 'PUT', new URL(link.upload_url).pathname, { body: bytes, headers: { 'content-type': 'application/octet-stream' } });
    s3.failWith = 503;
    try {
      const refused = expectError(await send(), 503, 'service_unavailable');
      expect(refused.message).toMatch(/send the file again/);
    } finally {
      s3.failWith = undefined;
    }
    expect((await call(platform.app, 'GET', `${BASE}/files/${link.file_id}`, { key })).json().data.status).toBe('pending');
    const retried = await send();
    expect(retried.statusCode, retried.body).toBe(200);
    expect(retried.json().data).toMatchObject({ status: 'ready', kind: 'png' });
  });
});
