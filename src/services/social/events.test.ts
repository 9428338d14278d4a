import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { asJson, recordedEvents } from '../../../test/recorded-events.js';
import { hostile, png, sha256 } from './test-helpers.js';

let platform: TestPlatform;
let filesDir: string;
beforeAll(async () => {
  filesDir = mkdtempSync(path.join(tmpdir(), 'social-events-'));
  platform = await startTestPlatform({ env: { SOCIAL_FILES_DIR: filesDir } });
});
afterAll(async () => {
  await platform?.close();
  rmSync(filesDir, { recursive: true, force: true });
});

const BASE = '/api/v1/services/social';

async function send(key: string, method: string, url: string, body?: unknown, status = 200, headers: Record<string, string> = {}) {
  const response = await call(platform.app, method, url.startsWith('/api') ? url : `${BASE}${url}`, {
    key,
    headers,
    ...(body === undefined ? {} : { body }),
  });
  expect(response.statusCode, response.body).toBe(status);
  return response.json().data;
}

/** Exactly `count` events of `type`, the newest deep-equal to `current` (what GET shows now). */
async function expectEvents(tenantId: string, type: string, current: unknown, count = 1) {
  const recorded = await recordedEvents(platform, tenantId, type);
  expect(recorded, type).toHaveLength(count);
  if (count > 0) expect(asJson(recorded[0]!.data.object)).toEqual(asJson(current));
}

async function uploadTo(key: string, bytes: Buffer) {
  const link = await send(key, 'POST', '/files/upload-links', { file_name: 'f.bin', size_bytes: bytes.length, sha256: sha256(bytes) }, 201);
  const response = await call(platform.app, 'PUT', new URL(link.upload_url).pathname, { body: bytes, headers: { 'content-type': 'application/octet-stream' } });
  return { link, file: response.json().data };
}

describe('social events', () => {
  it('records account, file and post events once each, as GET shows the resource, and never a link secret', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const headers = { 'idempotency-key': 'social-events-account' };
    const account = await send(key, 'POST', '/accounts', { platform: 'sandbox', display_name: 'Bakery' }, 201, headers);
    await send(key, 'POST', '/accounts', { platform: 'sandbox', display_name: 'Bakery' }, 201, headers);
    await expectEvents(tenant.id, 'social.account.connected', account);

    const { link, file } = await uploadTo(key, png());
    await expectEvents(tenant.id, 'social.file.created', { ...link, upload_url: null, upload_token: null, how_to_send: null });
    await expectEvents(tenant.id, 'social.file.ready', file);
    const { file: refused } = await uploadTo(key, hostile.svg());
    await expectEvents(tenant.id, 'social.file.rejected', refused);

    const created = await send(key, 'POST', '/posts', { account_ids: [account.id], text: 'Hello', media: [{ file_id: file.file_id }], status: 'draft' }, 201);
    await expectEvents(tenant.id, 'social.post.created', created);
    const updated = await send(key, 'PATCH', `/posts/${created.id}`, { status: 'scheduled' });
    await expectEvents(tenant.id, 'social.post.updated', updated);
    await platform.runtime.jobs.runDue();
    await expectEvents(tenant.id, 'social.post.published', await send(key, 'GET', `/posts/${created.id}`));
    const deleted = await send(key, 'DELETE', `/posts/${created.id}`);
    await expectEvents(tenant.id, 'social.post.deleted', deleted);
    await send(key, 'DELETE', `/accounts/${account.id}`);
    await expectEvents(tenant.id, 'social.account.disconnected', account);
  });
});
