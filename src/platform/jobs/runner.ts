import { hostname } from 'node:os';
import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/database.js';
import type { Mode } from '../../db/types.js';
import { addMilliseconds, type Clock, HOUR_MS, MINUTE_MS, SECOND_MS } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';

export interface ClaimedJob {
  id: string;
  kind: string;
  tenantId: string | null;
  mode: Mode | null;
  payload: Record<string, unknown>;
  attempts: number;
  maxAttempts: number;
  runAt: Date;
}

/** Return `{ rescheduleAt }` to run the same job again later (recurring work). */
export type JobHandler = (job: ClaimedJob, now: Date) => Promise<void | { rescheduleAt: Date }>;

export interface EnqueueInput {
  kind: string;
  runAt: Date;
  payload?: Record<string, unknown>;
  tenantId?: string;
  mode?: Mode;
  /** At most one queued or running job per dedupe key; a second enqueue is ignored. */
  dedupeKey?: string;
  maxAttempts?: number;
}

/**
 * Background work with a loop of its own (webhook deliveries, which wait on other servers and
 * must not hold up the jobs queue): started, stopped and run together with the jobs.
 */
export interface BackgroundWorker {
  start(): void;
  /** Stops taking work and waits for the work in hand. */
  stop(): Promise<void>;
  /** Does all due work now and waits for it (tests call this through `JobRunner.runDue()`). */
  runDue(): Promise<void>;
}

interface JobRunnerOptions {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  pollIntervalMs?: number;
  batchSize?: number;
}

/** How long a claimed job belongs to its worker before another may presume it crashed. */
const CLAIM_MS = 5 * MINUTE_MS;

/**
 * Durable background jobs in the `jobs` table. Any number of processes may run a
 * runner: each claims due rows with FOR UPDATE SKIP LOCKED, so every job runs on one
 * process at a time, and a crashed worker's jobs are picked up once its claim lapses.
 */
export class JobRunner {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #log: FastifyBaseLogger;
  readonly #handlers = new Map<string, JobHandler>();
  readonly #workers: BackgroundWorker[] = [];
  readonly #workerId = `${hostname()}:${process.pid}:${newId().slice(0, 8)}`;
  readonly #pollIntervalMs: number;
  readonly #batchSize: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;
  /** The job whose handler is running now, if any. */
  #current: ClaimedJob | undefined;
  #stopped = true;
  /** Set by stop(): claimed jobs not yet started are handed back instead of run. */
  #stopping = false;

  constructor(options: JobRunnerOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#log = options.log;
    this.#pollIntervalMs = options.pollIntervalMs ?? SECOND_MS;
    this.#batchSize = options.batchSize ?? 20;
  }

  register(kind: string, handler: JobHandler): void {
    this.#handlers.set(kind, handler);
  }

  /** Logs a failure of background work that has no caller to report to. */
  reportError(error: unknown, what: string): void {
    this.#log.error({ err: error }, `${what} failed`);
  }

  /** Adds a worker that starts, stops and runs with the jobs. */
  addWorker(worker: BackgroundWorker): void {
    this.#workers.push(worker);
    if (!this.#stopped) worker.start();
  }

  /** Adds a job; pass a transaction as `db` to enqueue atomically with other writes. */
  async enqueue(input: EnqueueInput, db: Db = this.#db): Promise<void> {
    const now = this.#clock.now();
    await db
      .insertInto('jobs')
      .values({
        kind: input.kind,
        run_at: input.runAt,
        payload: JSON.stringify(input.payload ?? {}),
        tenant_id: input.tenantId ?? null,
        mode: input.mode ?? null,
        dedupe_key: input.dedupeKey ?? null,
        max_attempts: input.maxAttempts ?? 5,
        locked_by: null,
        locked_until: null,
        last_error: null,
        created_at: now,
        updated_at: now,
        finished_at: null,
      })
      .onConflict((conflict) => conflict.column('dedupe_key').doNothing())
      .execute();
  }

  /**
   * Adds the job for `dedupeKey`, or moves the queued one to the new time and payload
   * (a post rescheduled earlier must not wait for its old time). A job already running
   * is left alone: its handler should re-check the state it acts on.
   */
  async schedule(input: EnqueueInput & { dedupeKey: string }, db: Db = this.#db): Promise<void> {
    const now = this.#clock.now();
    await db
      .insertInto('jobs')
      .values({
        kind: input.kind,
        run_at: input.runAt,
        payload: JSON.stringify(input.payload ?? {}),
        tenant_id: input.tenantId ?? null,
        mode: input.mode ?? null,
        dedupe_key: input.dedupeKey,
        max_attempts: input.maxAttempts ?? 5,
        locked_by: null,
        locked_until: null,
        last_error: null,
        created_at: now,
        updated_at: now,
        finished_at: null,
      })
      .onConflict((conflict) =>
        conflict
          .column('dedupe_key')
          .doUpdateSet((eb) => ({ run_at: eb.ref('excluded.run_at'), payload: eb.ref('excluded.payload'), updated_at: eb.ref('excluded.updated_at') }))
          .where('jobs.status', '=', 'queued'),
      )
      .execute();
  }

  /** Removes the queued job for `dedupeKey`, if any (a running one finishes and re-checks). */
  async cancel(dedupeKey: string, db: Db = this.#db): Promise<void> {
    await db.deleteFrom('jobs').where('dedupe_key', '=', dedupeKey).where('status', '=', 'queued').execute();
  }

  /** Makes sure one instance of a recurring job exists (its handler reschedules it). */
  ensureRecurring(kind: string, firstRunAt: Date = this.#clock.now()): Promise<void> {
    return this.enqueue({ kind, runAt: firstRunAt, dedupeKey: `recurring:${kind}` });
  }

  start(): void {
    this.#stopped = false;
    this.#stopping = false;
    const loop = async () => {
      if (this.#stopped) return;
      try {
        await this.runDue();
      } catch (error) {
        this.#log.error({ err: error }, 'job poll failed');
      }
      if (!this.#stopped) this.#timer = setTimeout(() => void loop(), this.#pollIntervalMs).unref();
    };
    // loop catches and logs its own errors, so its promise is not awaited.
    this.#timer = setTimeout(() => void loop(), 0).unref();
    for (const worker of this.#workers) worker.start();
  }

  /**
   * Stops claiming jobs. The job running now may finish; jobs claimed with it but not started
   * are released at once (back to queued, the attempt not counted), so another process takes
   * them without waiting for the claim to lapse. With `releaseAfterMs`, a job still running
   * after that long has its claim released too (it will run again elsewhere: handlers are
   * written to be retried) and stop() returns without waiting for it.
   */
  async stop({ releaseAfterMs }: { releaseAfterMs?: number } = {}): Promise<void> {
    this.#stopped = true;
    this.#stopping = true;
    clearTimeout(this.#timer);
    const workers = Promise.all(this.#workers.map((worker) => worker.stop()));
    const running = this.#running?.catch(() => 0);
    if (!running) return void (await workers);
    if (releaseAfterMs === undefined) {
      await Promise.all([running, workers]);
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timed out'>((resolve) => (timer = setTimeout(() => resolve('timed out'), releaseAfterMs)));
    const outcome = await Promise.race([running, timedOut]);
    clearTimeout(timer);
    await workers;
    const current = this.#current;
    if (outcome === 'timed out' && current) {
      this.#log.warn({ job_id: current.id, job_kind: current.kind }, 'job still running at shutdown: releasing its claim');
      await this.#release(current);
    }
  }

  /** Claims and runs every due job (in batches); returns how many ran. Tests call this directly. */
  async runDue(): Promise<number> {
    if (this.#running) return this.#running;
    this.#running = (async () => {
      let ran = 0;
      for (;;) {
        const batch = await this.#claim();
        for (const job of batch) {
          if (this.#stopping) {
            await this.#release(job);
            continue;
          }
          this.#current = job;
          await this.#run(job).finally(() => (this.#current = undefined));
          ran += 1;
        }
        if (batch.length < this.#batchSize || this.#stopping) break;
      }
      for (const worker of this.#workers) await worker.runDue();
      return ran;
    })().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #claim(): Promise<ClaimedJob[]> {
    const kinds = [...this.#handlers.keys()];
    if (kinds.length === 0) return [];
    const now = this.#clock.now();
    const result = await sql<{
      id: string;
      kind: string;
      tenant_id: string | null;
      mode: Mode | null;
      payload: Record<string, unknown>;
      attempts: number;
      max_attempts: number;
      run_at: Date;
    }>`
      update jobs
         set status = 'running', attempts = attempts + 1, locked_by = ${this.#workerId},
             locked_until = ${addMilliseconds(now, CLAIM_MS)}, updated_at = ${now}
       where id in (
         select id from jobs
          where kind = any(${kinds}::text[])
            and ((status = 'queued' and run_at <= ${now}) or (status = 'running' and locked_until < ${now}))
          order by run_at, id
          limit ${this.#batchSize}
          for update skip locked)
      returning id, kind, tenant_id, mode, payload, attempts, max_attempts, run_at`.execute(this.#db);
    return result.rows.map((row) => ({
      id: String(row.id),
      kind: row.kind,
      tenantId: row.tenant_id,
      mode: row.mode,
      payload: row.payload,
      attempts: row.attempts,
      maxAttempts: row.max_attempts,
      runAt: row.run_at,
    }));
  }

  /** Hands a claimed job back: queued, due now, this attempt not counted. */
  async #release(job: ClaimedJob): Promise<void> {
    await this.#db
      .updateTable('jobs')
      .where('id', '=', job.id)
      .where('locked_by', '=', this.#workerId)
      .set((eb) => ({ status: 'queued', attempts: eb('attempts', '-', 1), locked_by: null, locked_until: null, updated_at: this.#clock.now() }))
      .execute();
  }

  async #run(job: ClaimedJob): Promise<void> {
    const handler = this.#handlers.get(job.kind)!;
    const mine = () => this.#db.updateTable('jobs').where('id', '=', job.id).where('locked_by', '=', this.#workerId);
    try {
      const outcome = await handler(job, this.#clock.now());
      const now = this.#clock.now();
      if (outcome?.rescheduleAt) {
        await mine().set({ status: 'queued', run_at: outcome.rescheduleAt, attempts: 0, locked_by: null, locked_until: null, updated_at: now }).execute();
      } else {
        await mine().set({ status: 'succeeded', locked_by: null, locked_until: null, dedupe_key: null, updated_at: now, finished_at: now }).execute();
      }
    } catch (error) {
      const now = this.#clock.now();
      const message = error instanceof Error ? error.message : String(error);
      this.#log.warn({ err: error, job_id: job.id, job_kind: job.kind, attempt: job.attempts }, 'job failed');
      if (job.attempts >= job.maxAttempts) {
        await mine().set({ status: 'failed', last_error: message, locked_by: null, locked_until: null, dedupe_key: null, updated_at: now, finished_at: now }).execute();
      } else {
        const backoffMs = Math.min(HOUR_MS, 10 * SECOND_MS * 2 ** (job.attempts - 1));
        await mine()
          .set({ status: 'queued', last_error: message, run_at: addMilliseconds(now, backoffMs), locked_by: null, locked_until: null, updated_at: now })
          .execute();
      }
    }
  }
}

/** Deletes succeeded and failed jobs that finished before `finishedBefore`; returns how many. */
export async function deleteFinishedJobs(db: Db, finishedBefore: Date): Promise<number> {
  const result = await db.deleteFrom('jobs').where('status', 'in', ['succeeded', 'failed']).where('finished_at', '<', finishedBefore).executeTakeFirst();
  return Number(result.numDeletedRows);
}
