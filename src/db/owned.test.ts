import { CompiledQuery, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from './database.js';
import { runCompiledQueriesDirectly } from './execute-compiled.js';
import { ownedTables, type Owner } from './owned.js';
import type { Mode } from './types.js';
import { testDatabaseUrl } from '../../test/database.js';

interface Tables {
  owned_notes: { id: number; tenant_id: string; mode: Mode; label: string; pinned: boolean };
}

const TENANT_A = '00000000-0000-4000-8000-00000000000a';
const TENANT_B = '00000000-0000-4000-8000-00000000000b';
const a: Owner = { tenantId: TENANT_A, mode: 'test' };
const aLive: Owner = { tenantId: TENANT_A, mode: 'live' };
const b: Owner = { tenantId: TENANT_B, mode: 'test' };
const bLive: Owner = { tenantId: TENANT_B, mode: 'live' };

let database: Database;
let db: Kysely<Tables>;

const notes = ownedTables<Tables>()('owned_notes');
const noteById = notes.statement((from, values: { id: number }) => from.select(['id', 'label']).where('id', '=', values.id));
const noteList = notes.list<{ pattern?: string; pinned?: boolean }, { id: number; label: string }>({
  filters: {
    pattern: (eb, pattern) => eb('label', 'like', pattern),
    pinned: (eb, pinned) => eb('pinned', '=', pinned),
  },
  select: (from) => from.select(['id', 'label']).orderBy('id'),
});

beforeAll(async () => {
  database = await openDatabase({ databaseUrl: testDatabaseUrl(), dataDir: undefined, poolSize: 3 });
  db = database.db as unknown as Kysely<Tables>;
  await sql`drop table if exists owned_notes`.execute(db);
  await sql`create table owned_notes (id int primary key, tenant_id uuid not null, mode text not null, label text not null, pinned boolean not null)`.execute(db);
  await notes
    .insert(db, a, [
      { id: 1, label: 'apple', pinned: false },
      { id: 2, label: 'avocado', pinned: true },
      { id: 3, label: 'banana', pinned: false },
    ])
    .execute();
  await notes.insert(db, aLive, { id: 4, label: 'apricot', pinned: true }).execute();
  await notes.insert(db, b, { id: 5, label: 'almond', pinned: true }).execute();
});

afterAll(() => database.close());

describe('OwnedTable', () => {
  it('sets the owner on insert and confines every builder to it', async () => {
    expect(await notes.select(db, a).select('id').orderBy('id').execute()).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    expect(await notes.select(db, aLive).select('id').execute()).toEqual([{ id: 4 }]);
    const updated = await notes.update(db, b).set({ label: 'changed' }).where('id', '=', 1).executeTakeFirst();
    expect(updated.numUpdatedRows).toBe(0n);
    const deleted = await notes.delete(db, aLive).where('id', '=', 5).executeTakeFirst();
    expect(deleted.numDeletedRows).toBe(0n);
    expect(await notes.select(db, b).select('label').execute()).toEqual([{ label: 'almond' }]);
  });

  it("finds a row of its owner by a prepared statement, never another owner's", async () => {
    expect(await noteById.first(db, a, { id: 2 })).toEqual({ id: 2, label: 'avocado' });
    expect(await noteById.first(db, b, { id: 2 })).toBeUndefined();
    expect(await noteById.first(db, aLive, { id: 2 })).toBeUndefined();
    expect(await noteById.first(db, aLive, { id: 4 })).toEqual({ id: 4, label: 'apricot' });
  });

  it('takes a list of values as one array parameter, so one statement serves any number of ids', async () => {
    const notesIn = notes.statement((from, values: { ids: number[] }) =>
      from
        .select(['id', 'label'])
        .where((eb) => eb('id', '=', eb.fn.any(eb.val(values.ids))))
        .orderBy('id'),
    );
    expect(await notesIn.all(db, a, { ids: [1, 3, 4, 5] })).toEqual([
      { id: 1, label: 'apple' },
      { id: 3, label: 'banana' },
    ]);
    expect(await notesIn.all(db, a, { ids: [] })).toEqual([]);
  });

  it('lists pages with totals per combination of filters, within the owner', async () => {
    expect(await noteList.page(db, a, {}, { limit: 2, offset: 1 })).toEqual({
      rows: [
        { id: 2, label: 'avocado' },
        { id: 3, label: 'banana' },
      ],
      total: 3,
    });
    expect(await noteList.page(db, a, { pattern: 'a%' }, { limit: 10, offset: 0 })).toEqual({
      rows: [
        { id: 1, label: 'apple' },
        { id: 2, label: 'avocado' },
      ],
      total: 2,
    });
    expect(await noteList.page(db, a, { pattern: 'a%', pinned: true }, { limit: 10, offset: 0 })).toEqual({ rows: [{ id: 2, label: 'avocado' }], total: 1 });
    expect(await noteList.page(db, a, { pinned: false }, { limit: 10, offset: 0 })).toMatchObject({ total: 2 });
    expect(await noteList.page(db, b, { pattern: 'a%' }, { limit: 10, offset: 0 })).toEqual({ rows: [{ id: 5, label: 'almond' }], total: 1 });
    expect(await noteList.rows(db, aLive, { pinned: true }, { limit: 10, offset: 0 })).toEqual([{ id: 4, label: 'apricot' }]);
  });

  it('runs its statements on the pool-wide runner, and on the transaction inside one', async () => {
    const statements: string[] = [];
    const registered = db.withoutPlugins();
    runCompiledQueriesDirectly(registered, async (statement, parameters) => {
      statements.push(statement);
      return (await db.executeQuery(CompiledQuery.raw(statement, [...parameters]))).rows;
    });
    expect(await noteList.page(registered, a, { pinned: true }, { limit: 10, offset: 0 })).toMatchObject({ total: 1 });
    expect(await noteById.first(registered, a, { id: 1 })).toEqual({ id: 1, label: 'apple' });
    expect(statements).toHaveLength(3);
    await registered.transaction().execute(async (trx) => {
      await notes.insert(trx, a, { id: 6, label: 'cherry', pinned: true }).execute();
      expect(await noteList.page(trx, a, { pinned: true }, { limit: 10, offset: 0 })).toMatchObject({ total: 2 });
      expect(await noteById.first(trx, a, { id: 6 })).toEqual({ id: 6, label: 'cherry' });
      await notes.delete(trx, a).where('id', '=', 6).execute();
    });
    expect(statements).toHaveLength(3);
  });

  it('inserts the rows of a query, owned by the owner, in the same statement as a change it reads', async () => {
    const copied = notes.update(db, a).set({ pinned: true }).where('id', '=', 3).returning(['id', 'label']);
    const copy = notes.insertFrom(db, b, ['id', 'label', 'pinned'], sql`select id + 100, label || ' copy', false from copied`);
    const { rows } = await sql<{ id: number }>`with copied as (${copied}), copy as (${copy}) select id from copied`.execute(db);
    expect(rows).toEqual([{ id: 3 }]);
    expect(await notes.select(db, b).select(['id', 'label', 'pinned']).where('id', '=', 103).execute()).toEqual([{ id: 103, label: 'banana copy', pinned: false }]);
    expect(await notes.select(db, a).select('id').where('id', '=', 103).execute()).toEqual([]);
    await notes.delete(db, b).where('id', '=', 103).execute();
    await notes.update(db, a).set({ pinned: false }).where('id', '=', 3).execute();
  });

  it('deletes across owners only when asked to', async () => {
    await notes.insert(db, a, { id: 20, label: 'stale', pinned: false }).execute();
    await notes.insert(db, bLive, { id: 21, label: 'stale', pinned: false }).execute();
    const result = await notes.deleteAcrossOwners(db).where('label', '=', 'stale').executeTakeFirst();
    expect(result.numDeletedRows).toBe(2n);
    expect(await notes.acrossOwners(db).select('id').where('label', '=', 'stale').execute()).toEqual([]);
  });
});
