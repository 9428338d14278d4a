import { CompiledQuery, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from './database.js';
import { isUniqueViolation } from './errors.js';
import { executeCompiled, runCompiledQueriesDirectly } from './execute-compiled.js';
import { beginRequestTransaction, currentRequestTransaction } from './request-transaction.js';
import { testDatabaseUrl } from '../../test/database.js';

interface Tables {
  request_things: { id: number; label: string };
}

let database: Database;
let db: Kysely<Tables>;

beforeAll(async () => {
  // The embedded database, or the suite's PostgreSQL schema when the run has DATABASE_URL.
  database = await openDatabase({ databaseUrl: testDatabaseUrl(), dataDir: undefined, poolSize: 3 });
  db = database.db as unknown as Kysely<Tables>;
  await sql`drop table if exists request_things`.execute(db);
  await sql`create table request_things (id int primary key, label text not null)`.execute(db);
});

afterAll(async () => {
  await sql`drop table if exists request_things`.execute(db);
  await database.close();
});

beforeEach(async () => {
  await db.deleteFrom('request_things').execute();
});

const insert = (id: number, label = `thing ${id}`, into: Kysely<Tables> = db) => into.insertInto('request_things').values({ id, label }).execute();
const ids = async () => (await db.selectFrom('request_things').select('id').orderBy('id').execute()).map((row) => row.id);

describe('request transaction', () => {
  it('keeps the writes of the work inside it only when committed', async () => {
    const rolledBack = await beginRequestTransaction(db);
    await rolledBack.run(() => insert(1));
    await rolledBack.rollback();
    await expect(rolledBack.commit()).rejects.toThrow(/already finished/);
    expect(await ids()).toEqual([]);

    const committed = await beginRequestTransaction(db);
    await committed.run(() => insert(2));
    await committed.commit();
    expect(await ids()).toEqual([2]);
  });

  it('turns a transaction of the work into a savepoint: its failure undoes its own writes only', async () => {
    const transaction = await beginRequestTransaction(db);
    await transaction.run(async () => {
      await db.transaction().execute((tx) => insert(1, 'kept', tx));
      await expect(
        db.transaction().execute(async (tx) => {
          await insert(2, 'undone', tx);
          throw new Error('refused by a business rule');
        }),
      ).rejects.toThrow('refused by a business rule');
      await insert(3, 'after the failure');
    });
    await transaction.commit();
    expect(await ids()).toEqual([1, 3]);
  });

  it('undoes a failing statement alone, so the work can catch it and go on', async () => {
    await insert(1);
    const transaction = await beginRequestTransaction(db);
    await transaction.run(async () => {
      const error = await insert(1).catch((caught: unknown) => caught);
      expect(isUniqueViolation(error, 'request_things_pkey')).toBe(true);
      await insert(2);
    });
    await transaction.commit();
    expect(await ids()).toEqual([1, 2]);
  });

  it('runs transactions started side by side one after the other on its connection', async () => {
    const transaction = await beginRequestTransaction(db);
    await transaction.run(() =>
      Promise.all(
        [1, 2, 3].map((id) =>
          db.transaction().execute(async (tx) => {
            await insert(id, 'first', tx);
            await tx.updateTable('request_things').set({ label: 'second' }).where('id', '=', id).execute();
          }),
        ),
      ),
    );
    await transaction.commit();
    expect(await db.selectFrom('request_things').select(['id', 'label']).orderBy('id').execute()).toEqual([
      { id: 1, label: 'second' },
      { id: 2, label: 'second' },
      { id: 3, label: 'second' },
    ]);
  });

  it('sends statements of the pool-wide instance through it instead of the direct pool path', async () => {
    const registered = db.withoutPlugins();
    const direct: string[] = [];
    runCompiledQueriesDirectly(registered, async (statement, parameters) => {
      direct.push(statement);
      return (await db.executeQuery(CompiledQuery.raw(statement, [...parameters]))).rows;
    });
    const insertOne = db.insertInto('request_things').values({ id: 1, label: 'one' }).compile();

    const transaction = await beginRequestTransaction(db);
    await transaction.run(() => executeCompiled(registered, insertOne, insertOne.parameters));
    await transaction.rollback();
    expect(direct).toEqual([]);
    expect(await ids()).toEqual([]);

    await executeCompiled(registered, insertOne, insertOne.parameters);
    expect(direct).toEqual([insertOne.sql]);
  });

  it('lets work that outlives the transaction use the pool again', async () => {
    const transaction = await beginRequestTransaction(db);
    let later: Promise<void> | undefined;
    let startLater: () => void = () => {};
    const started = new Promise<void>((resolve) => (startLater = resolve));
    transaction.run(() => {
      later = started.then(async () => {
        await insert(2);
      });
    });
    await transaction.run(() => insert(1));
    await transaction.rollback();
    startLater();
    await later;
    expect(await ids()).toEqual([2]);
  });

  it('is visible only to the work inside it, and to none once finished', async () => {
    expect(currentRequestTransaction()).toBeUndefined();
    const transaction = await beginRequestTransaction(db);
    let seenInside: unknown;
    const seenLater = await transaction.run(async () => {
      seenInside = currentRequestTransaction();
      await transaction.commit();
      return currentRequestTransaction();
    });
    expect(seenInside).toBe(transaction);
    expect(seenLater).toBeUndefined();
  });

  it('refuses a transaction that asks for an isolation level inside it', async () => {
    const transaction = await beginRequestTransaction(db);
    await expect(
      transaction.run(() =>
        db
          .transaction()
          .setIsolationLevel('serializable')
          .execute(() => insert(1)),
      ),
    ).rejects.toThrow(/isolation level/);
    await transaction.rollback();
  });

  it('hides its writes from queries outside it until it commits (on the embedded database they wait for it)', async () => {
    const transaction = await beginRequestTransaction(db);
    await transaction.run(() => insert(1));
    const outside = ids();
    const seenWhileOpen = database.backend === 'postgres' ? await outside : undefined;
    await transaction.commit();
    if (database.backend === 'postgres') expect(seenWhileOpen).toEqual([]);
    else expect(await outside).toEqual([1]);
    expect(await ids()).toEqual([1]);
  });

  it.runIf(testDatabaseUrl())('keeps concurrent request transactions apart (PostgreSQL)', async () => {
    const one = await beginRequestTransaction(db);
    const two = await beginRequestTransaction(db);
    await Promise.all([one.run(() => insert(1)), two.run(() => insert(2))]);
    await one.commit();
    await two.rollback();
    expect(await ids()).toEqual([1]);
  });
});
