import { CompiledQuery, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from './database.js';
import { runCompiledQueriesDirectly } from './execute-compiled.js';
import { PreparedQuery } from './prepared.js';
import { testDatabaseUrl } from '../../test/database.js';

interface Tables {
  prepared_things: { id: number; owner: string; label: string; hidden: boolean };
}

let database: Database;
let db: Kysely<Tables>;

beforeAll(async () => {
  // The embedded database, or the suite's PostgreSQL schema when the run has DATABASE_URL.
  database = await openDatabase({ databaseUrl: testDatabaseUrl(), dataDir: undefined, poolSize: 3 });
  db = database.db as unknown as Kysely<Tables>;
  await sql`drop table if exists prepared_things`.execute(db);
  await sql`create table prepared_things (id int primary key, owner text not null, label text not null, hidden boolean not null)`.execute(db);
  await db
    .insertInto('prepared_things')
    .values([
      { id: 1, owner: 'a', label: 'apple', hidden: false },
      { id: 2, owner: 'a', label: 'avocado', hidden: true },
      { id: 3, owner: 'a', label: 'banana', hidden: false },
      { id: 4, owner: 'b', label: 'apricot', hidden: false },
    ])
    .execute();
});

afterAll(() => database.close());

type Values = { owner: string; limit: number };

const visibleThings = new PreparedQuery<Tables, Values, { id: number; label: string }>((db, value) =>
  db.selectFrom('prepared_things').select(['id', 'label']).where('owner', '=', value('owner')).where('hidden', '=', false).orderBy('id').limit(value('limit')),
);

/** A second pool-wide instance whose direct runner records each statement, then runs it through Kysely. */
function instanceWithRecordingRunner(): { registered: Kysely<Tables>; statements: string[] } {
  const statements: string[] = [];
  const registered = db.withoutPlugins();
  runCompiledQueriesDirectly(registered, async (statement, parameters) => {
    statements.push(statement);
    return (await db.executeQuery(CompiledQuery.raw(statement, [...parameters]))).rows;
  });
  return { registered, statements };
}

describe('PreparedQuery', () => {
  it("runs the compiled statement with each call's values and keeps constants", async () => {
    expect(await visibleThings.execute(db, { owner: 'a', limit: 10 })).toEqual([
      { id: 1, label: 'apple' },
      { id: 3, label: 'banana' },
    ]);
    expect(await visibleThings.execute(db, { owner: 'b', limit: 10 })).toEqual([{ id: 4, label: 'apricot' }]);
    expect(await visibleThings.execute(db, { owner: 'a', limit: 1 })).toEqual([{ id: 1, label: 'apple' }]);
  });

  it('gives the same rows as the query built afresh', async () => {
    const built = await db.selectFrom('prepared_things').select(['id', 'label']).where('owner', '=', 'a').where('hidden', '=', false).orderBy('id').limit(10).execute();
    expect(await visibleThings.execute(db, { owner: 'a', limit: 10 })).toEqual(built);
  });

  it("runs inside a transaction on the transaction's connection", async () => {
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('prepared_things').values({ id: 5, owner: 'c', label: 'cherry', hidden: false }).execute();
      expect(await visibleThings.execute(trx, { owner: 'c', limit: 10 })).toEqual([{ id: 5, label: 'cherry' }]);
      await trx.deleteFrom('prepared_things').where('id', '=', 5).execute();
    });
  });

  it('hands statements on a registered instance to its runner, but not those of its transactions', async () => {
    const { registered, statements } = instanceWithRecordingRunner();
    expect(await visibleThings.execute(registered, { owner: 'b', limit: 10 })).toEqual([{ id: 4, label: 'apricot' }]);
    expect(statements).toHaveLength(1);
    await registered.transaction().execute(async (trx) => {
      await trx.insertInto('prepared_things').values({ id: 6, owner: 'd', label: 'date', hidden: false }).execute();
      expect(await visibleThings.execute(trx, { owner: 'd', limit: 10 })).toEqual([{ id: 6, label: 'date' }]);
      await trx.deleteFrom('prepared_things').where('id', '=', 6).execute();
    });
    expect(statements).toHaveLength(1);
  });

  it('refuses a named value that the query never binds', async () => {
    const unbound = new PreparedQuery<Tables, { owner: string }, { id: number }>((db, value) => {
      value('owner');
      return db.selectFrom('prepared_things').select('id');
    });
    await expect(unbound.execute(db, { owner: 'a' })).rejects.toThrow(/"owner" is not bound/);
  });
});
