import {
  sql,
  type DeleteQueryBuilder,
  type DeleteResult,
  type Expression,
  type ExpressionBuilder,
  type Insertable,
  type InsertQueryBuilder,
  type InsertResult,
  type Kysely,
  type Selectable,
  type SelectQueryBuilder,
  type SqlBool,
  type UpdateQueryBuilder,
  type UpdateResult,
} from 'kysely';
import { pageWithTotal, type PageRequest } from './paging.js';
import { PreparedQuery } from './prepared.js';
import type { Mode } from './types.js';

/** The tenant and mode every row of a service belongs to, and every query is confined to. */
export interface Owner {
  tenantId: string;
  mode: Mode;
}

/** Names of the tables of `DB` whose rows belong to one tenant and mode. */
export type OwnedTableName<DB> = {
  [T in keyof DB & string]: DB[T] extends { tenant_id: string; mode: Mode } ? T : never;
}[keyof DB & string];

/** A row as a service sees it: without the owner columns, which every query has fixed. */
export type OwnedRow<Table> = Omit<Selectable<Table>, 'tenant_id' | 'mode'>;

/** A row to insert, without the owner columns: the table adds them. */
export type OwnedInsert<Row> = Omit<Insertable<Row>, 'tenant_id' | 'mode'>;

type OwnerValues = { tenantId: string; mode: Mode };
type PageValues = OwnerValues & PageRequest;

/**
 * The tables of a database as the queries of this module see them: any table, any column. A
 * service's own table and column names are checked where it writes its queries; the owner
 * conditions added here are the same for every owned table.
 */
type UntypedTables = Record<string, Record<string, unknown>>;
type UntypedSelect = SelectQueryBuilder<UntypedTables, string, object>;

/** `db` with its table names erased, to build the queries every owned table shares. */
function untyped<DB>(db: Kysely<DB>): Kysely<UntypedTables> {
  return db as unknown as Kysely<UntypedTables>;
}

/** What adding the owner conditions needs of a builder: `where(column, '=', value)`, giving the same kind of builder. */
interface Filterable<Q> {
  where(column: string, operator: '=', value: unknown): Q;
}

/** One filter of a list: the condition it adds, given (a placeholder for) its value. */
export type ListFilter<DB, T extends keyof DB, Value> = (eb: ExpressionBuilder<DB, T>, value: Value) => Expression<SqlBool>;

export interface ListSpec<DB, T extends keyof DB, Filters extends Record<string, unknown>, Row> {
  /** The conditions of each optional filter; a filter whose value is undefined adds nothing. */
  filters: { [K in keyof Filters]-?: ListFilter<DB, T, Exclude<Filters[K], undefined>> };
  /** The columns and the stable order of a page (the owner's conditions and the filters are already on it). */
  select: (from: SelectQueryBuilder<DB, T, object>) => SelectQueryBuilder<DB, T, Row>;
}

/**
 * The one way a service queries a table of its own: every statement starts from the owner's
 * tenant and mode, so a query that forgets them cannot be written with it.
 *
 * Reads that serve requests take the fast path by default: `statement` and `list` build and
 * compile their SQL once (per filter combination), then run it with each call's values, and
 * on PostgreSQL outside a transaction they skip Kysely's executor (see execute-compiled.ts).
 * The builders (`select`, `update`, `delete`, `insert`) are for writes and one-off reads.
 */
export class OwnedTable<DB, T extends OwnedTableName<DB>> {
  /** The name as a plain string: Kysely resolves a generic `T` to conditional types the untyped builders cannot use. */
  readonly #table: string;

  constructor(readonly name: T) {
    this.#table = name;
  }

  /** `select … from <table> where tenant_id = … and mode = …`, to add columns and conditions to. */
  select(db: Kysely<DB>, owner: Owner): SelectQueryBuilder<DB, T, object> {
    return this.#owned(untyped(db).selectFrom(this.#table), owner.tenantId, owner.mode);
  }

  update(db: Kysely<DB>, owner: Owner): UpdateQueryBuilder<DB, T, T, UpdateResult> {
    return this.#owned(untyped(db).updateTable(this.#table), owner.tenantId, owner.mode) as never;
  }

  delete(db: Kysely<DB>, owner: Owner): DeleteQueryBuilder<DB, T, DeleteResult> {
    return this.#owned(untyped(db).deleteFrom(this.#table), owner.tenantId, owner.mode) as never;
  }

  /**
   * A read across every owner, with each row's owner: only for ids that are capabilities in
   * themselves (a hosted page's URL names no tenant) and for cross-tenant maintenance.
   */
  acrossOwners(db: Kysely<DB>): SelectQueryBuilder<DB, T, { tenant_id: string; mode: Mode }> {
    return untyped(db).selectFrom(this.#table).select(['tenant_id', 'mode']) as never;
  }

  /** A delete across every owner: only for maintenance that spans tenants, such as sweeping expired rows. */
  deleteAcrossOwners(db: Kysely<DB>): DeleteQueryBuilder<DB, T, DeleteResult> {
    return untyped(db).deleteFrom(this.#table) as never;
  }

  /** Inserts rows owned by `owner`: the table sets tenant_id and mode. */
  insert(db: Kysely<DB>, owner: Owner, rows: OwnedInsert<DB[T]> | ReadonlyArray<OwnedInsert<DB[T]>>): InsertQueryBuilder<DB, T, InsertResult> {
    const owned = (row: OwnedInsert<DB[T]>) => ({ ...row, tenant_id: owner.tenantId, mode: owner.mode });
    const values = Array.isArray(rows) ? rows.map(owned) : owned(rows as OwnedInsert<DB[T]>);
    return untyped(db).insertInto(this.#table).values(values) as never;
  }

  /**
   * Inserts the rows a query yields, owned by `owner` (`insert … select`): `rows` selects the
   * values of `columns` in that order, for instance from a data-modifying CTE of the same
   * statement; the table adds tenant_id and mode.
   */
  insertFrom(db: Kysely<DB>, owner: Owner, columns: ReadonlyArray<keyof OwnedInsert<DB[T]> & string>, rows: Expression<unknown>): InsertQueryBuilder<DB, T, InsertResult> {
    return untyped(db)
      .insertInto(this.#table)
      .columns([...columns, 'tenant_id', 'mode'])
      .expression(sql`select rows.*, ${owner.tenantId}, ${owner.mode} from (${rows}) as rows`) as never;
  }

  /**
   * A read prepared once: `build` gets the owner-scoped select and, in `values`, a placeholder
   * for each value the statement takes. It must use them only where Kysely binds a parameter
   * and never branch on them: they are unknown when it runs.
   */
  statement<Values extends Record<string, unknown>, Row>(
    build: (from: SelectQueryBuilder<DB, T, object>, values: Values) => SelectQueryBuilder<DB, T, Row>,
  ): OwnedStatement<DB, Values, Row> {
    const prepared = new PreparedQuery<DB, Values & OwnerValues, Row>((db, value) => {
      const placeholders = new Proxy({} as Values, { get: (_target, name) => value(name as keyof Values & string) });
      return build(this.#owned(untyped(db).selectFrom(this.#table), value('tenantId'), value('mode')), placeholders);
    });
    return new OwnedStatement(prepared);
  }

  /**
   * A list endpoint's query: one page in the spec's order plus the count over all pages,
   * prepared once per combination of filters in use.
   */
  list<Filters extends Record<string, unknown>, Row>(spec: ListSpec<DB, T, Filters, Row>): OwnedList<DB, Filters, Row> {
    return new OwnedList<DB, Filters, Row>(this.#table, spec as unknown as UntypedListSpec<Row>, (query, tenantId, mode) => this.#owned(query, tenantId, mode));
  }

  #owned<Q extends Filterable<Q>>(query: Q, tenantId: unknown, mode: unknown): Q {
    return query.where(`${this.#table}.tenant_id`, '=', tenantId).where(`${this.#table}.mode`, '=', mode);
  }
}

/** Declares the owned tables of a service's schema: `const forms = ownedTables<FormsTables>()('forms_forms')`. */
export function ownedTables<DB>() {
  return <T extends OwnedTableName<DB>>(name: T) => new OwnedTable<DB, T>(name);
}

/** A prepared read of one owner's rows. */
export class OwnedStatement<DB, Values extends Record<string, unknown>, Row> {
  constructor(private readonly prepared: PreparedQuery<DB, Values & OwnerValues, Row>) {}

  all(db: Kysely<DB>, owner: Owner, values: Values): Promise<Row[]> {
    return this.prepared.execute(db, { ...values, tenantId: owner.tenantId, mode: owner.mode });
  }

  async first(db: Kysely<DB>, owner: Owner, values: Values): Promise<Row | undefined> {
    return (await this.all(db, owner, values))[0];
  }
}

type CountRow = { total: string };

/** A list's spec on untyped tables: the filters looked up by name, whatever the table. */
type UntypedListSpec<Row> = ListSpec<UntypedTables, string, Record<string, unknown>, Row>;

/** A list query prepared per filter combination: pages with their total, or pages alone. */
export class OwnedList<DB, Filters extends Record<string, unknown>, Row> {
  readonly #pages = new Map<string, PreparedQuery<DB, PageValues & Record<string, unknown>, Row>>();
  readonly #counts = new Map<string, PreparedQuery<DB, OwnerValues & Record<string, unknown>, CountRow>>();

  constructor(
    private readonly table: string,
    private readonly spec: UntypedListSpec<Row>,
    private readonly owned: (query: UntypedSelect, tenantId: unknown, mode: unknown) => UntypedSelect,
  ) {}

  /** One page and the number of rows on all pages, queried side by side. */
  page(db: Kysely<DB>, owner: Owner, filters: Filters, page: PageRequest): Promise<{ rows: Row[]; total: number }> {
    const { shape, values } = this.#bind(owner, filters, page);
    return pageWithTotal(this.#pageQuery(shape).execute(db, values), this.#countQuery(shape).execute(db, values));
  }

  /** One page only, for lists whose total is known otherwise. */
  rows(db: Kysely<DB>, owner: Owner, filters: Filters, page: PageRequest): Promise<Row[]> {
    const { shape, values } = this.#bind(owner, filters, page);
    return this.#pageQuery(shape).execute(db, values);
  }

  #bind(owner: Owner, filters: Filters, page: PageRequest) {
    const values: PageValues & Record<string, unknown> = { tenantId: owner.tenantId, mode: owner.mode, limit: page.limit, offset: page.offset };
    let shape = '';
    for (const name in this.spec.filters) {
      const value = filters[name];
      if (value === undefined) continue;
      shape += `${name};`;
      values[`filter:${name}`] = value;
    }
    return { shape, values };
  }

  #filtered(db: Kysely<DB>, shape: string, value: (name: string) => unknown): UntypedSelect {
    let query = this.owned(untyped(db).selectFrom(this.table), value('tenantId'), value('mode'));
    for (const name of shape.split(';')) {
      if (!name) continue;
      const condition = this.spec.filters[name]!; // shape names only filters of the spec
      query = query.where((eb) => condition(eb, value(`filter:${name}`)));
    }
    return query;
  }

  #pageQuery(shape: string) {
    let query = this.#pages.get(shape);
    if (!query) {
      query = new PreparedQuery<DB, PageValues & Record<string, unknown>, Row>((db, value) =>
        this.spec
          .select(this.#filtered(db, shape, value))
          .limit(value('limit'))
          .offset(value('offset')),
      );
      this.#pages.set(shape, query);
    }
    return query;
  }

  #countQuery(shape: string) {
    let query = this.#counts.get(shape);
    if (!query) {
      query = new PreparedQuery<DB, OwnerValues & Record<string, unknown>, CountRow>((db, value) => this.#filtered(db, shape, value).select(sql<string>`count(*)`.as('total')));
      this.#counts.set(shape, query);
    }
    return query;
  }
}
