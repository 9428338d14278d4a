import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { docx, gif, hostile, jpeg, mp4, pdf, png, pptx, sha256 } from './test-helpers.js';

const BASE = '/api/v1/services/social';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let platform: TestPlatform;
let filesDir: string;
const logLines: string[] = [];

beforeAll(async () => {
  filesDir = mkdtempSync(path.join(tmpdir(), 'social-files-'));
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  platform = await startTestPlatform({ env: { SOCIAL_FILES_DIR: filesDir }, logger: pino({ level: 'info' }, sink) });
});
afterAll(async () => {
  await platform?.close();
  rmSync(filesDir, { recursive: true, force: true });
});

interface Link {
  file_id: string;
  upload_url: string;
  upload_token: string;
  [field: string]: unknown;
}

async function createLink(key: string, bytes: Buffer, fileName = 'file.bin', overrides: Record<string, unknown> = {}): Promise<Link> {
  const response = await call(platform.app, 'POST', `${BASE}/files/upload-links`, {
    key,
    body: { file_name: fileName, size_bytes: bytes.length, sha256: sha256(bytes), ...overrides },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

const pathOf = (url: string) => new URL(url).pathname;

function put(link: Link, bytes: Buffer, headers: Record<string, string> = {}) {
  return call(platform.app, 'PUT', pathOf(link.upload_url), { body: bytes, headers: { 'content-type': 'application/octet-stream', ...headers } });
}

async function upload(key: string, bytes: Buffer, fileName = 'file.bin') {
  const link = await createLink(key, bytes, fileName);
  const response = await put(link, bytes);
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

describe('upload links', () => {
  it('creates a link: the whole record with an absolute one-time URL, its token, PUT, a curl command and 15 minutes', async () => {
    const key = await (await platform.newTenant()).key();
    const bytes = png();
    const before = Date.now();
    const response = await call(platform.app, 'POST', `${BASE}/files/upload-links`, {
      key,
      body: { file_name: '../../etc/Summer\t sale.png', size_bytes: bytes.length, sha256: sha256(bytes).toUpperCase() },
    });
    const after = Date.now();
    expect(response.statusCode, response.body).toBe(201);
    const link = response.json().data;
    expect(link).toMatchObject({
      file_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'pending',
      file_name: 'Summer sale.png',
      kind: null,
      mime: null,
      size_bytes: bytes.length,
      sha256: sha256(bytes),
      reject_code: null,
      upload_method: 'PUT',
      upload_token: expect.stringMatching(/^upl_[A-Za-z0-9_-]{43}$/),
    });
    expect(link.upload_url).toBe(`${platform.config.publicBaseUrl}${BASE}/uploads/${link.upload_token}`);
    expect(link.how_to_send).toContain(link.upload_url);
    expect(link.how_to_send).toMatch(/^curl .*-X PUT .*--data-binary @'Summer sale.png'/);
    // 15 minutes from the moment the server made the link, somewhere between before and after.
    const expiresAt = Date.parse(link.expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 15 * MINUTE - 1000);
    expect(expiresAt).toBeLessThanOrEqual(after + 15 * MINUTE + 1000);
    const fetched = (await call(platform.app, 'GET', `${BASE}/files/${link.file_id}`, { key })).json().data;
    expect(fetched).toMatchObject({ file_id: link.file_id, status: 'pending', upload_url: null, upload_token: null, how_to_send: null });
  });

  it('validates every field: required, size within 1..450 MB, sha256 of 64 hex characters, a usable name', async () => {
    const key = await (await platform.newTenant()).key();
    const good = { file_name: 'a.png', size_bytes: 10, sha256: 'a'.repeat(64) };
    for (const [body, field] of [
      [{ size_bytes: 10, sha256: 'a'.repeat(64) }, 'file_name'],
      [{ file_name: 'a.png', sha256: 'a'.repeat(64) }, 'size_bytes'],
      [{ file_name: 'a.png', size_bytes: 10 }, 'sha256'],
      [{ ...good, size_bytes: 0 }, 'size_bytes'],
      [{ ...good, size_bytes: 450 * 1024 * 1024 + 1 }, 'size_bytes'],
      [{ ...good, size_bytes: 1.5 }, 'size_bytes'],
      [{ ...good, sha256: 'g'.repeat(64) }, 'sha256'],
      [{ ...good, sha256: 'a'.repeat(63) }, 'sha256'],
      [{ ...good, file_name: '../../' }, 'file_name'],
    ] as const) {
      const error = expectError(await call(platform.app, 'POST', `${BASE}/files/upload-links`, { key, body }), 400, 'validation_failed');
      expect(error.details.map((detail: { path: string }) => detail.path)).toContain(field);
    }
  });

  it('replays an Idempotency-Key with the same record and 201, its token, URL and command null', async () => {
    const key = await (await platform.newTenant()).key();
    const body = { file_name: 'a.png', size_bytes: 10, sha256: 'b'.repeat(64) };
    const headers = { 'idempotency-key': 'social-link-replay-1' };
    const first = await call(platform.app, 'POST', `${BASE}/files/upload-links`, { key, body, headers });
    const second = await call(platform.app, 'POST', `${BASE}/files/upload-links`, { key, body, headers });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.json().data.upload_token).toMatch(/^upl_/);
    expect(second.json().data).toEqual({ ...first.json().data, upload_token: null, upload_url: null, how_to_send: null });
  });

  it('keeps files to their tenant and mode (rule 6): another tenant or the live key gets 404, and the token never reaches a log', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const bytes = png();
    const link = await createLink(key, bytes);
    expect((await put(link, bytes)).statusCode).toBe(200);
    expectError(await call(platform.app, 'GET', `${BASE}/files/${link.file_id}`, { key: await (await platform.newTenant()).key() }), 404, 'not_found');
    expectError(await call(platform.app, 'GET', `${BASE}/files/${link.file_id}`, { key: await tenant.key({ mode: 'live' }) }), 404, 'not_found');
    const logged = logLines.join('');
    expect(logged).toContain('/uploads/:upload_token');
    expect(logged).not.toContain(link.upload_token);
  });
});

describe('the PUT of the bytes', () => {
  it('accepts a real PNG, JPEG, GIF, MP4, PDF, DOCX and PPTX, typed from the bytes whatever the name', async () => {
    const key = await (await platform.newTenant()).key();
    const cases = [
      [png(), 'png', 'image/png'],
      [jpeg(), 'jpeg', 'image/jpeg'],
      [gif(), 'gif', 'image/gif'],
      [mp4(), 'mp4', 'video/mp4'],
      [pdf(), 'pdf', 'application/pdf'],
      [docx(), 'docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
      [pptx(), 'pptx', 'application/vnd.openxmlformats-officedocument.presentationml.presentation'],
    ] as const;
    for (const [bytes, kind, mime] of cases) {
      const file = await upload(key, bytes, 'misleading-name.txt');
      expect(file, kind).toMatchObject({ status: 'ready', kind, mime, reject_code: null, size_bytes: bytes.length, sha256: sha256(bytes), upload_token: null, upload_url: null });
      expect(Date.parse(file.expires_at) - Date.parse(file.created_at)).toBe(24 * HOUR);
      const key2 = (await call(platform.app, 'GET', `${BASE}/files/${file.file_id}`, { key })).json().data;
      expect(key2).toEqual(file);
    }
  });

  it('refuses each hostile or broken file with its reject_code and keeps no bytes of it', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const cases = [
      [hostile.exe(), 'type_not_allowed', 'renamed.png'],
      [hostile.svg(), 'type_not_allowed', 'image.svg'],
      [hostile.ole2(), 'type_not_allowed', 'old.doc'],
      [hostile.docm(), 'macro_detected', 'macros.docm'],
      [hostile.docxWithVbaProject(), 'macro_detected', 'hidden-macros.docx'],
      [hostile.docxWithEmbedding(), 'embedded_object', 'object.docx'],
      [hostile.docxWithExternalTemplate(), 'external_link', 'template.docx'],
      [hostile.pdfWithJavaScript(), 'script_detected', 'script.pdf'],
      [hostile.pdfWithHiddenJavaScript(), 'script_detected', 'hidden.pdf'],
      [hostile.pdfWithLaunch(), 'script_detected', 'launch.pdf'],
      [hostile.pdfWithEmbeddedFile(), 'embedded_object', 'attachment.pdf'],
      [hostile.truncatedPng(), 'malformed_file', 'truncated.png'],
      [hostile.zipBomb(), 'malformed_file', 'bomb.docx'],
      [Buffer.concat([png(), Buffer.from('PK\u0003\u0004 appended')]), 'malformed_file', 'polyglot.png'],
      [Buffer.concat([mp4(), Buffer.from([0, 0, 0, 99])]), 'malformed_file', 'cut.mp4'],
      [Buffer.from('#!/bin/sh\nrm -rf /\n'), 'type_not_allowed', 'run.sh'],
    ] as const;
    for (const [bytes, code, name] of cases) {
      const file = await upload(key, bytes, name);
      expect({ name, status: file.status, reject_code: file.reject_code }).toEqual({ name, status: 'rejected', reject_code: code });
      expect(file.reject_detail).toEqual(expect.any(String));
    }
    const stored = readdirSync(path.join(filesDir, tenant.id, 'test'));
    expect(stored).toEqual([]);
  });

  it('takes the bytes whatever the Content-Type says, or without one', async () => {
    const key = await (await platform.newTenant()).key();
    const bytes = png();
    const asJson = await createLink(key, bytes);
    expect((await put(asJson, bytes, { 'content-type': 'application/json' })).json().data.status).toBe('ready');
    const untyped = await createLink(key, bytes);
    const response = await platform.app.inject({ method: 'PUT', url: pathOf(untyped.upload_url), payload: bytes });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().data).toMatchObject({ status: 'ready', kind: 'png' });
  });

  it('refuses a wrong hash, a wrong size, and more bytes than declared (stopped at once, connection closed)', async () => {
    const key = await (await platform.newTenant()).key();
    const bytes = png();
    const wrongHash = await createLink(key, bytes, 'a.png', { sha256: sha256(Buffer.from('other')) });
    expect((await put(wrongHash, bytes)).json().data).toMatchObject({ status: 'rejected', reject_code: 'checksum_mismatch' });
    const shorter = await createLink(key, bytes, 'a.png', { size_bytes: bytes.length + 10 });
    expect((await put(shorter, bytes)).json().data).toMatchObject({ status: 'rejected', reject_code: 'size_mismatch' });
    const longer = await createLink(key, bytes.subarray(0, 20), 'a.png');
    const response = await put(longer, bytes);
    expect(response.statusCode).toBe(200);
    expect(response.headers.connection).toBe('close');
    expect(response.json().data).toMatchObject({ status: 'rejected', reject_code: 'size_mismatch' });
  });

  it('works once: a second PUT is 410 link_used, a wrong token 404, an expired link 410 link_expired (and the file says so)', async () => {
    const key = await (await platform.newTenant()).key();
    const bytes = gif();
    const link = await createLink(key, bytes);
    expect((await put(link, bytes)).json().data.status).toBe('ready');
    expectError(await put(link, bytes), 410, 'link_used');
    expect((await call(platform.app, 'GET', `${BASE}/files/${link.file_id}`, { key })).json().data.status).toBe('ready');
    expectError(await put({ ...link, upload_url: `${platform.config.publicBaseUrl}${BASE}/uploads/upl_${'x'.repeat(43)}` }, bytes), 404, 'not_found');
    expectError(
      await call(platform.app, 'PUT', `${BASE}/uploads/not-a-token`, { body: bytes, headers: { 'content-type': 'application/octet-stream' }, invalid: true }),
      404,
      'not_found',
    );

    const late = await createLink(key, bytes);
    platform.clock.advance(15 * MINUTE + 1000);
    try {
      expectError(await put(late, bytes), 410, 'link_expired');
      expectError(await put(late, bytes), 410, 'link_expired');
    } finally {
      platform.clock.advance(-(15 * MINUTE + 1000));
    }
    expect((await call(platform.app, 'GET', `${BASE}/files/${late.file_id}`, { key })).json().data).toMatchObject({ status: 'rejected', reject_code: 'link_expired' });
  });

  it('sweeps files after 24 hours, unused links after 15 minutes, and keeps files a scheduled post still needs', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const kept = await upload(key, png(), 'kept.png');
    const dropped = await upload(key, jpeg(), 'dropped.jpg');
    const unused = await createLink(key, gif());
    const account = (await call(platform.app, 'POST', `${BASE}/accounts`, { key, body: { platform: 'sandbox', display_name: 'Bakery' } })).json().data;
    const scheduledAt = new Date(platform.clock.now().getTime() + 30 * HOUR).toISOString();
    const post = await call(platform.app, 'POST', `${BASE}/posts`, {
      key,
      body: { account_ids: [account.id], text: 'Later', media: [{ file_id: kept.file_id }], scheduled_at: scheduledAt },
    });
    expect(post.statusCode, post.body).toBe(201);
    const get = async (id: string) => (await call(platform.app, 'GET', `${BASE}/files/${id}`, { key })).json().data;

    platform.clock.advance(20 * MINUTE);
    await platform.runtime.jobs.runDue();
    expect(await get(unused.file_id)).toMatchObject({ status: 'rejected', reject_code: 'link_expired' });
    expect((await get(dropped.file_id)).status).toBe('ready');

    platform.clock.advance(24 * HOUR);
    await platform.runtime.jobs.runDue();
    expect((await get(dropped.file_id)).status).toBe('expired');
    expect((await get(kept.file_id)).status).toBe('ready');
    expect(readdirSync(path.join(filesDir, tenant.id, 'test'))).toEqual([kept.file_id]);

    platform.clock.advance(6 * HOUR + 20 * MINUTE);
    await platform.runtime.jobs.runDue();
    platform.clock.advance(16 * MINUTE);
    await platform.runtime.jobs.runDue();
    expect((await call(platform.app, 'GET', `${BASE}/posts/${post.json().data.id}`, { key })).json().data.status).toBe('published');
    expect((await get(kept.file_id)).status).toBe('expired');
    expect(readdirSync(path.join(filesDir, tenant.id, 'test'))).toEqual([]);
  });
});

describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.social.manage',
  url: () => `${BASE}/files/upload-links`,
  body: () => ({ file_name: 'a.png', size_bytes: 10, sha256: 'c'.repeat(64) }),
  addressesOneRow: false,
});

describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.social.view',
  setup: async (key) => createLink(key, png()),
  url: (link) => `${BASE}/files/${link.file_id}`,
  addressesOneRow: true,
});
