import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copiedReplySchemas } from '../../src/platform/http/serialization.js';
import { call, startTestPlatform, type TestPlatform } from '../harness.js';
import { buildWorld, type World } from '../world.js';

/**
 * Every GET of every service, called on a world of real rows, is written as it is: its reply is
 * built in the schema's exact shape (known keys in the written order), so the serialiser does
 * not copy it first. A presenter that spreads a stored row, or returns jsonb-ordered keys, shows
 * up here by its schema's title.
 */
let platform: TestPlatform;
let world: World;
let document: { paths: Record<string, { get?: { operationId: string } }> };

beforeAll(async () => {
  platform = await startTestPlatform();
  const key = await (await platform.newTenant('fast path')).key();
  world = await buildWorld(platform.app, key, { tag: 'fast-path-tag' });
  document = (await call(platform.app, 'GET', '/api/v1/openapi.json')).json();
}, 180_000);
afterAll(() => platform.close());

describe('reply serialisation on the fast path', () => {
  it('writes the reply of every GET of every service as it is, without a copy', async () => {
    copiedReplySchemas.clear();
    const answered: string[] = [];
    for (const [template, item] of Object.entries(document.paths)) {
      if (!template.startsWith('/api/v1/services/') || !item.get) continue;
      const response = await call(platform.app, 'GET', world.fillPath(template), { key: world.key, invalid: true });
      if (response.statusCode === 200) answered.push(item.get.operationId);
    }
    expect(answered.length).toBeGreaterThan(60);
    expect([...copiedReplySchemas].sort()).toEqual([]);
  });
});
