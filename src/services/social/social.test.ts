import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';
import { gif, png, sha256 } from './test-helpers.js';

const BASE = '/api/v1/services/social';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let platform: TestPlatform;
let filesDir: string;
beforeAll(async () => {
  filesDir = mkdtempSync(path.join(tmpdir(), 'social-files-'));
  platform = await startTestPlatform({ env: { SOCIAL_FILES_DIR: filesDir } });
});
afterAll(async () => {
  await platform?.close();
  rmSync(filesDir, { recursive: true, force: true });
});

async function post(key: string, url: string, body: unknown, status = 201) {
  const response = await call(platform.app, 'POST', `${BASE}${url}`, { key, body });
  expect(response.statusCode, response.body).toBe(status);
  return response.json().data;
}

const connect = (key: string, body: Record<string, unknown> = {}) => post(key, '/accounts', { platform: 'sandbox', display_name: 'Acme Bakery', ...body });

async function readyFile(key: string, bytes = png()) {
  const link = await post(key, '/files/upload-links', { file_name: 'a.png', size_bytes: bytes.length, sha256: sha256(bytes) });
  const response = await call(platform.app, 'PUT', new URL(link.upload_url).pathname, { body: bytes, headers: { 'content-type': 'application/octet-stream' } });
  expect(response.json().data.status).toBe('ready');
  return link.file_id as string;
}

async function eventsOf(tenantId: string, type: string) {
  const { rows } = await platform.runtime.events.list({ tenantId, mode: 'test' }, { type }, { limit: 50, offset: 0 });
  return rows;
}

describe('accounts', () => {
  it('connects a sandbox account with a test key and lists it with every field of the table', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const account = await connect(key, { visibility: 'shared' });
    expect(account).toEqual({
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      tenant_id: tenant.id,
      platform: 'sandbox',
      account_kind: 'profile',
      external_id: expect.stringMatching(/^sandbox_[0-9a-f]{16}$/),
      display_name: 'Acme Bakery',
      avatar_url: null,
      token_expires_at: expect.stringMatching(TIMESTAMP),
      scopes: ['profile.read', 'posts.write'],
      status: 'connected',
      last_validated_at: expect.stringMatching(TIMESTAMP),
      last_error: null,
      environment: 'sandbox',
      connected_by: null,
      visibility: 'shared',
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: account.created_at,
      connected_by_name: null,
      shared_users: [],
      shared_roles: [],
      is_owner: false,
    });
    const second = await connect(key, { display_name: 'Second' });
    const list = await call(platform.app, 'GET', `${BASE}/accounts`, { key });
    expect(list.json()).toEqual({ data: [second, account], meta: { limit: 50, offset: 0, total: 2, has_more: false } });
    expect((await call(platform.app, 'GET', `${BASE}/accounts?limit=1&offset=1`, { key })).json()).toEqual({
      data: [account],
      meta: { limit: 1, offset: 1, total: 2, has_more: false },
    });
    expect((await call(platform.app, 'GET', `${BASE}/accounts/${account.id}`, { key })).json().data).toEqual(account);
    expect(await eventsOf(tenant.id, 'social.account.connected')).toHaveLength(2);
  });

  it('refuses the sandbox to live keys and anything but sandbox', async () => {
    const tenant = await platform.newTenant();
    const error = expectError(
      await call(platform.app, 'POST', `${BASE}/accounts`, { key: await tenant.key({ mode: 'live' }), body: { platform: 'sandbox', display_name: 'x' } }),
      400,
      'validation_failed',
    );
    expect(error.details[0]).toMatchObject({ path: 'platform' });
    expectError(await call(platform.app, 'POST', `${BASE}/accounts`, { key: await tenant.key(), body: { platform: 'facebook', display_name: 'x' } }), 400, 'validation_failed');
    expectError(await call(platform.app, 'POST', `${BASE}/accounts`, { key: await tenant.key(), body: { platform: 'sandbox', display_name: ' ' } }), 400, 'validation_failed');
  });

  it('disconnects: the reply is the account as it was, then 404', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const account = await connect(key);
    const deleted = await call(platform.app, 'DELETE', `${BASE}/accounts/${account.id}`, { key });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().data).toEqual(account);
    expectError(await call(platform.app, 'GET', `${BASE}/accounts/${account.id}`, { key }), 404, 'not_found');
    expectError(await call(platform.app, 'DELETE', `${BASE}/accounts/${account.id}`, { key }), 404, 'not_found');
    expect(await eventsOf(tenant.id, 'social.account.disconnected')).toHaveLength(1);
  });

  it('health check: refreshes a token close to expiry and records when it last validated', async () => {
    const key = await (await platform.newTenant()).key();
    const account = await connect(key);
    const expiresAt = Date.parse(account.token_expires_at);
    platform.clock.advance(59.5 * DAY);
    try {
      const checked = await post(key, `/accounts/${account.id}/validate`, undefined, 200);
      expect(checked.status).toBe('connected');
      expect(checked.last_error).toBeNull();
      expect(Date.parse(checked.token_expires_at)).toBeGreaterThan(expiresAt);
      expect(Date.parse(checked.last_validated_at)).toBeGreaterThan(Date.parse(account.last_validated_at));
    } finally {
      platform.clock.advance(-59.5 * DAY);
    }
  });
});

describe('posts', () => {
  it('creates a scheduled post with media, publishes it once when due through the connector, with per-account results', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const [first, second] = [await connect(key), await connect(key, { display_name: 'Other' })];
    const fileId = await readyFile(key);
    const scheduledAt = new Date(platform.clock.now().getTime() + 2 * HOUR).toISOString();
    const created = await post(key, '/posts', {
      account_ids: [first.id, second.id, first.id],
      text: 'Fresh croissants!',
      media: [{ file_id: fileId, alt_text: 'Croissants' }],
      scheduled_at: scheduledAt,
    });
    expect(created).toEqual({
      id: expect.any(String),
      account_ids: [first.id, second.id],
      text: 'Fresh croissants!',
      media: [{ file_id: fileId, alt_text: 'Croissants' }],
      scheduled_at: scheduledAt,
      status: 'scheduled',
      results: [],
      published_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: created.created_at,
    });
    await platform.runtime.jobs.runDue();
    expect((await call(platform.app, 'GET', `${BASE}/posts/${created.id}`, { key })).json().data.status).toBe('scheduled');

    platform.clock.advance(2 * HOUR + MINUTE);
    await platform.runtime.jobs.runDue();
    await platform.runtime.jobs.runDue();
    const published = (await call(platform.app, 'GET', `${BASE}/posts/${created.id}`, { key })).json().data;
    expect(published.status).toBe('published');
    expect(published.results).toEqual([
      expect.objectContaining({
        account_id: first.id,
        platform: 'sandbox',
        status: 'published',
        platform_post_id: expect.stringMatching(/^sbx_post_/),
        url: expect.stringMatching(/^https:/),
        error: null,
      }),
      expect.objectContaining({ account_id: second.id, status: 'published' }),
    ]);
    expect(await eventsOf(tenant.id, 'social.post.published')).toHaveLength(1);
    expectError(await call(platform.app, 'PATCH', `${BASE}/posts/${created.id}`, { key, body: { text: 'Too late' } }), 409, 'post_not_editable');
  });

  it('publishes now when scheduled_at is null, and reports partial failure per account', async () => {
    const key = await (await platform.newTenant()).key();
    const account = await connect(key);
    const gone = await connect(key, { display_name: 'Gone' });
    const created = await post(key, '/posts', { account_ids: [account.id, gone.id], text: 'Now', scheduled_at: null });
    expect(created.status).toBe('publishing');
    await call(platform.app, 'DELETE', `${BASE}/accounts/${gone.id}`, { key });
    await platform.runtime.jobs.runDue();
    const done = (await call(platform.app, 'GET', `${BASE}/posts/${created.id}`, { key })).json().data;
    expect(done.status).toBe('partially_failed');
    expect(done.results.map((result: { status: string }) => result.status)).toEqual(['published', 'failed']);

    const refused = await post(key, '/posts', { account_ids: [account.id], text: 'Please [sandbox:fail]' });
    await platform.runtime.jobs.runDue();
    const failed = (await call(platform.app, 'GET', `${BASE}/posts/${refused.id}`, { key })).json().data;
    expect(failed.status).toBe('failed');
    expect(failed.results[0].error).toContain('sandbox');
  });

  it('accepts only ready files of the same tenant and mode, naming the file; unknown accounts likewise', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const account = await connect(key);
    const otherTenantFile = await readyFile(await (await platform.newTenant()).key(), gif());
    const liveKey = await tenant.key({ mode: 'live' });
    const liveLink = await post(liveKey, '/files/upload-links', { file_name: 'a.png', size_bytes: 10, sha256: 'd'.repeat(64) });
    const pending = await post(key, '/files/upload-links', { file_name: 'b.png', size_bytes: 10, sha256: 'e'.repeat(64) });
    for (const fileId of [otherTenantFile, liveLink.file_id, pending.file_id]) {
      const error = expectError(
        await call(platform.app, 'POST', `${BASE}/posts`, { key, body: { account_ids: [account.id], text: 'x', media: [{ file_id: fileId }] } }),
        400,
        'validation_failed',
      );
      expect(error.details[0]).toMatchObject({ path: 'media[0].file_id', file_id: fileId });
      expect(error.message).toContain(fileId);
    }
    const error = expectError(await call(platform.app, 'POST', `${BASE}/posts`, { key, body: { account_ids: ['999999999'], text: 'x' } }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: 'account_ids[0]' });
  });

  it('updates a draft into a scheduled post, lists and filters, deletes; publishing posts cannot be deleted', async () => {
    const key = await (await platform.newTenant()).key();
    const account = await connect(key);
    const draft = await post(key, '/posts', { account_ids: [account.id], text: 'Draft', status: 'draft' });
    expect(draft.status).toBe('draft');
    await platform.runtime.jobs.runDue();
    expect((await call(platform.app, 'GET', `${BASE}/posts/${draft.id}`, { key })).json().data.status).toBe('draft');
    const later = new Date(platform.clock.now().getTime() + DAY).toISOString();
    const patched = await call(platform.app, 'PATCH', `${BASE}/posts/${draft.id}`, { key, body: { text: 'Scheduled', status: 'scheduled', scheduled_at: later } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().data).toMatchObject({ text: 'Scheduled', status: 'scheduled', scheduled_at: later });
    const now = await post(key, '/posts', { account_ids: [account.id], text: 'Now' });
    expectError(await call(platform.app, 'DELETE', `${BASE}/posts/${now.id}`, { key }), 409, 'post_not_editable');
    const list = (await call(platform.app, 'GET', `${BASE}/posts?status=scheduled&account_id=${account.id}`, { key })).json();
    expect(list.data.map((row: { id: string }) => row.id)).toEqual([draft.id]);
    expect(list.meta).toEqual({ limit: 50, offset: 0, total: 1, has_more: false });
    const deleted = await call(platform.app, 'DELETE', `${BASE}/posts/${draft.id}`, { key });
    expect(deleted.json().data.id).toBe(draft.id);
    expectError(await call(platform.app, 'GET', `${BASE}/posts/${draft.id}`, { key }), 404, 'not_found');
    platform.clock.advance(DAY + MINUTE);
    try {
      await platform.runtime.jobs.runDue();
    } finally {
      platform.clock.advance(-(DAY + MINUTE));
    }
    expect((await call(platform.app, 'GET', `${BASE}/posts?status=published`, { key })).json().data.map((row: { id: string }) => row.id)).toEqual([now.id]);
  });

  it('publishes exactly once when two workers run the same due job at the same time', async () => {
    const key = await (await platform.newTenant()).key();
    const account = await connect(key);
    const created = await post(key, '/posts', { account_ids: [account.id], text: 'Once' });
    await Promise.all([platform.runtime.jobs.runDue(), platform.runtime.jobs.runDue()]);
    const done = (await call(platform.app, 'GET', `${BASE}/posts/${created.id}`, { key })).json().data;
    expect(done.status).toBe('published');
    expect(done.results).toHaveLength(1);
  });
});

const accountFixture = async (key: string) => connect(key);
const postFixture = async (key: string) => post(key, '/posts', { account_ids: [(await connect(key)).id], text: 'Hi', status: 'draft' });

describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.social.view', url: () => `${BASE}/accounts`, addressesOneRow: false });
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.social.manage',
  url: () => `${BASE}/accounts`,
  body: () => ({ platform: 'sandbox', display_name: 'x' }),
  addressesOneRow: false,
});
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.social.view',
  setup: accountFixture,
  url: (account) => `${BASE}/accounts/${account.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'DELETE',
  scope: 'service.social.manage',
  setup: accountFixture,
  url: (account) => `${BASE}/accounts/${account.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.social.manage',
  setup: accountFixture,
  url: (account) => `${BASE}/accounts/${account.id}/validate`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.social.view', url: () => `${BASE}/posts`, addressesOneRow: false });
describeRouteSecurity(() => platform, { method: 'GET', scope: 'service.social.view', setup: postFixture, url: (row) => `${BASE}/posts/${row.id}`, addressesOneRow: true });
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.social.manage',
  setup: postFixture,
  url: (row) => `${BASE}/posts/${row.id}`,
  body: () => ({ text: 'New' }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, { method: 'DELETE', scope: 'service.social.manage', setup: postFixture, url: (row) => `${BASE}/posts/${row.id}`, addressesOneRow: true });
describeRouteSecurity(() => platform, {
  method: 'POST',
  scope: 'service.social.manage',
  setup: accountFixture,
  url: () => `${BASE}/posts`,
  body: (account) => ({ account_ids: [account.id], text: 'Hi', status: 'draft' }),
  addressesOneRow: false,
});
