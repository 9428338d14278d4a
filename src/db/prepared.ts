import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import { executeCompiled } from './execute-compiled.js';

/** Stands for a value in a prepared query; replaced by the real value on every run. */
class Placeholder {
  constructor(readonly name: string) {}
}

type Slot = { placeholder: string } | { constant: unknown };

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
export class PreparedQuery<DB, Values extends Record<string, unknown>, Row> {
  #compiled: CompiledQuery<Row> | undefined;
  #slots: Slot[] = [];

  constructor(private readonly build: (db: Kysely<DB>, value: <K extends keyof Values & string>(name: K) => Values[K]) => Compilable<Row>) {}

  execute(db: Kysely<DB>, values: Values): Promise<Row[]> {
    let compiled: CompiledQuery<Row>;
    try {
      compiled = this.#compiled ??= this.#compile(db);
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on whatever building or compiling threw, unchanged, as a rejection (this method is not async on purpose)
      return Promise.reject(error);
    }
    const parameters = this.#slots.map((slot) => ('placeholder' in slot ? values[slot.placeholder] : slot.constant));
    return executeCompiled(db, compiled, parameters);
  }

  #compile(db: Kysely<DB>): CompiledQuery<Row> {
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
