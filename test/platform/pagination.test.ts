import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const CONTACTS = '/api/v1/services/crm/contacts';

async function seed(key: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await call(platform.app, 'POST', CONTACTS, { key, body: { name: `Person ${i}` } });
  }
}

describe('list pagination', () => {
  it('defaults to limit 50, offset 0, with total and has_more', async () => {
    const key = await (await platform.newTenant()).key();
    await seed(key, 3);
    const body = (await call(platform.app, 'GET', CONTACTS, { key })).json();
    expect(body.meta).toEqual({ limit: 50, offset: 0, total: 3, has_more: false });
    expect(body.data).toHaveLength(3);
  });

  it('lists newest first', async () => {
    const key = await (await platform.newTenant()).key();
    for (const name of ['first', 'second', 'third']) {
      await call(platform.app, 'POST', CONTACTS, { key, body: { name } });
      platform.clock.advance(5);
    }
    const names = (await call(platform.app, 'GET', CONTACTS, { key })).json().data.map((row: { name: string }) => row.name);
    expect(names).toEqual(['third', 'second', 'first']);
  });

  it('walks pages without skipping or repeating rows, even when timestamps tie', async () => {
    const key = await (await platform.newTenant()).key();
    platform.clock.freeze(new Date('2026-11-21T12:00:00.000Z'));
    try {
      await seed(key, 7); // all seven share one created_at: the id breaks the tie
    } finally {
      platform.clock.resume();
    }
    const seen: string[] = [];
    let offset = 0;
    for (;;) {
      const body = (await call(platform.app, 'GET', `${CONTACTS}?limit=3&offset=${offset}`, { key })).json();
      seen.push(...body.data.map((row: { id: string }) => row.id));
      expect(body.meta.total).toBe(7);
      expect(body.meta.limit).toBe(3);
      if (!body.meta.has_more) break;
      offset += 3;
    }
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
    const all = (await call(platform.app, 'GET', `${CONTACTS}?limit=200`, { key })).json().data.map((row: { id: string }) => row.id);
    expect(seen).toEqual(all);
  });

  it('accepts the bounds 1 and 200 and an offset past the end', async () => {
    const key = await (await platform.newTenant()).key();
    await seed(key, 2);
    expect((await call(platform.app, 'GET', `${CONTACTS}?limit=1`, { key })).json().meta).toEqual({ limit: 1, offset: 0, total: 2, has_more: true });
    expect((await call(platform.app, 'GET', `${CONTACTS}?limit=200`, { key })).statusCode).toBe(200);
    const past = (await call(platform.app, 'GET', `${CONTACTS}?offset=10`, { key })).json();
    expect(past).toEqual({ data: [], meta: { limit: 50, offset: 10, total: 2, has_more: false } });
  });
});
