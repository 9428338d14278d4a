import { createQueryId, type Compilable, type CompiledQuery, type Kysely } from 'kysely';

/** Stands for a value in a prepared query; replaced by the real value on every run. */
class Placeholder {
  constructor(readonly name: string) {}
}

type Slot = { placeholder: string } | { constant: unknown };

/** Runs one statement on any free pooled connection and resolves with its rows. */
export type StatementRunner = (sql: string, parameters: readonly unknown[]) => Promise<unknown[]>;

const directRunners = new WeakMap<Kysely<any>, StatementRunner>();

/**
 * Lets compiled statements on `db` (the pool-wide instance, never a transaction, which is
 * another object) skip Kysely's executor and run on the pool directly: prepared queries and
 * list pages (`selectPage`) go through `executeCompiled`.
 *
 * Kysely's executor keeps several async frames of its own suspended while a statement waits
 * for a pooled connection and for its result. Under load that wait spans young-generation
 * collections, V8 moves the frames to the old generation, and the rows that later pass
 * through them stay reachable from old objects until the next full collection. GC traces of
 * the list benchmark showed about 28 KB of rows a request promoted and a full collection
 * every half second, with a pool of 10 or of 60 alike; through pg-pool's callback API almost
 * nothing was promoted and server CPU per request fell from 0.8-0.9 ms to 0.5-0.6 ms.
 */
export function runCompiledQueriesDirectly(db: Kysely<any>, runner: StatementRunner): void {
  directRunners.set(db, runner);
}

/** Runs a compiled statement on `db` (a transaction's connection if `db` is one) and resolves with its rows. */
export async function executeCompiled<Row>(db: Kysely<any>, compiled: CompiledQuery<Row>): Promise<Row[]> {
  const direct = directRunners.get(db);
  if (direct) return direct(compiled.sql, compiled.parameters) as Promise<Row[]>;
  return (await db.executeQuery(compiled)).rows;
}

/**
 * A query built and compiled by Kysely once, then run many times with new values.
 *
 * Building a query (immutable operation nodes, then SQL compilation) costs more than the
 * rest of the request on hot list endpoints, so those prepare their statements once, as
 * Drizzle's `.prepare()` does. Only the text is reused: nothing is prepared on the server,
 * so the same statement runs on PostgreSQL and embedded PGlite, inside a transaction or not.
 *
 * `build` receives a placeholder for every named value; it must not branch on them (their
 * values are unknown when it runs), and each must appear where Kysely binds a parameter.
 */
export class PreparedQuery<Values extends Record<string, unknown>, Row> {
  #compiled: CompiledQuery<Row> | undefined;
  #slots: Slot[] = [];

  constructor(private readonly build: (db: Kysely<any>, value: <K extends keyof Values & string>(name: K) => Values[K]) => Compilable<Row>) {}

  async execute(db: Kysely<any>, values: Values): Promise<Row[]> {
    const compiled = (this.#compiled ??= this.#compile(db));
    const parameters = this.#slots.map((slot) => ('placeholder' in slot ? values[slot.placeholder] : slot.constant));
    return executeCompiled(db, { sql: compiled.sql, query: compiled.query, queryId: createQueryId(), parameters });
  }

  #compile(db: Kysely<any>): CompiledQuery<Row> {
    const named = new Set<string>();
    const compiled = this.build(db, (name) => {
      named.add(name);
      return new Placeholder(name) as never;
    }).compile();
    this.#slots = compiled.parameters.map((parameter) => (parameter instanceof Placeholder ? { placeholder: parameter.name } : { constant: parameter }));
    const bound = new Set(this.#slots.flatMap((slot) => ('placeholder' in slot ? [slot.placeholder] : [])));
    for (const name of named) {
      if (!bound.has(name)) throw new Error(`Prepared query value "${name}" is not bound as a parameter.`);
    }
    return compiled;
  }
}

/** One prepared query per shape, for queries whose clauses depend on which filters are set. */
export class PreparedQueryVariants<Shape extends string, Values extends Record<string, unknown>, Row> {
  readonly #byShape = new Map<Shape, PreparedQuery<Values, Row>>();

  constructor(private readonly build: (shape: Shape) => PreparedQuery<Values, Row>) {}

  for(shape: Shape): PreparedQuery<Values, Row> {
    let query = this.#byShape.get(shape);
    if (!query) this.#byShape.set(shape, (query = this.build(shape)));
    return query;
  }
}
