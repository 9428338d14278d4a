import { PGlite } from '@electric-sql/pglite';
import { type Generated, Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedSessionBusyError, EmbeddedSessionRevokedError, pgliteDialect, type PGliteDialect } from './pglite-dialect.js';
import { isDatabaseBusy } from './errors.js';

interface Tables {
  notes: { id: Generated<number>; body: string };
}

// Wide enough that a busy CI machine (a GC pause, a slow query) never trips them by accident.
const WAIT_MS = 1_000;
const HOLD_MS = 2_000;

let client: PGlite;
let dialect: PGliteDialect;
let db: Kysely<Tables>;
beforeAll(async () => {
  client = new PGlite();
  await client.waitReady;
  await client.exec('create table notes (id serial primary key, body text not null)');
  dialect = pgliteDialect(client, { waitMs: WAIT_MS, holdMs: HOLD_MS });
  db = new Kysely<Tables>({ dialect });
});
afterAll(async () => {
  await db.destroy();
  await client.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const bodies = async () => (await db.selectFrom('notes').select('body').orderBy('id').execute()).map((row) => row.body);

describe('the embedded session', () => {
  it('is handed to waiters in turn', async () => {
    const order: number[] = [];
    await Promise.all(
      [1, 2, 3].map((n) =>
        db.transaction().execute(async (trx) => {
          await sql`select 1`.execute(trx);
          await sleep(10);
          order.push(n);
        }),
      ),
    );
    expect(order).toEqual([1, 2, 3]);
  });

  it('makes a caller wait a bounded time: past the wait it fails with a busy error (503 to clients)', async () => {
    let release = () => {};
    const holding = db.connection().execute(() => new Promise<void>((resolve) => (release = resolve)));
    await sleep(10);
    const waited = await sql`select 1`.execute(db).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(waited).toBeInstanceOf(EmbeddedSessionBusyError);
    expect(isDatabaseBusy(waited)).toBe(true);
    release();
    await holding;
    expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows).toEqual([{ one: 1 }]);
  });

  it('takes the session back from a transaction held too long: rolled back, its handle refused, the next caller served', async () => {
    let stuckError: unknown;
    let wroteInside = () => {};
    const wrote = new Promise<void>((resolve) => (wroteInside = resolve));
    const stuck = db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('notes').values({ body: 'never committed' }).execute();
        wroteInside();
        await sleep(HOLD_MS + WAIT_MS + 200); // a request awaiting something else with its transaction open
        await trx.insertInto('notes').values({ body: 'after revocation' }).execute();
      })
      .catch((error: unknown) => (stuckError = error));

    await wrote;
    // Waits, with retries inside its own wait bound, until the holder's lease is revoked.
    let served: string[] | undefined;
    for (let attempt = 0; attempt < 10 && served === undefined; attempt += 1) {
      served = await bodies().catch((error: unknown) => {
        if (!(error instanceof EmbeddedSessionBusyError)) throw error;
        return undefined;
      });
    }
    expect(served).toEqual([]);

    await stuck;
    expect(stuckError).toBeInstanceOf(EmbeddedSessionRevokedError);
    expect(isDatabaseBusy(stuckError)).toBe(true);
    expect(await bodies()).toEqual([]);
    expect(client.isInTransaction()).toBe(false);

    await db.insertInto('notes').values({ body: 'later work' }).execute();
    expect(await bodies()).toEqual(['later work']);
    await db.deleteFrom('notes').execute();
  });

  it('lets a transaction that finishes in time commit as usual', async () => {
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('notes').values({ body: 'in time' }).execute();
      await sleep(HOLD_MS / 3);
    });
    expect(await bodies()).toEqual(['in time']);
    await db.deleteFrom('notes').execute();
  });

  it('gives scripts (migrations) the session without the limits', async () => {
    const result = await dialect.withExclusiveSession(async () => {
      await sleep(HOLD_MS + 100);
      await client.exec("insert into notes (body) values ('migration')");
      return 'done';
    });
    expect(result).toBe('done');
    expect(await bodies()).toEqual(['migration']);
    await db.deleteFrom('notes').execute();
  });
});
