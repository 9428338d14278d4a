import { createHash } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { JobHandler } from '../../platform/jobs/runner.js';
import * as repository from './repository.js';
import { presentQuestion } from './shared.js';

/**
 * Checks of AI answers: an answer-engine interface and a deterministic sandbox engine. A
 * monitored question has one durable job (dedupe key per question) that asks each engine,
 * records what it said in `ai_latest` and reschedules itself a week on. Monitoring spends
 * no AI credits: the platform's own engines are asked, never the tenant's credit balance.
 */

export interface EngineAnswer {
  answer: string;
  citedUrls: string[];
}

export interface AnswerEngine {
  readonly name: string;
  readonly model: string;
  ask(question: string, about: { domain: string; siteName: string; bestPageUrl: string | null }): Promise<EngineAnswer>;
}

/**
 * Deterministic answers for tests and test mode: the same question and site always give the
 * same answer. The site is cited (first) when a hash of the question and domain says so, or
 * whenever the question has a best page.
 */
export class SandboxAnswerEngine implements AnswerEngine {
  readonly name = 'sandbox';
  readonly model = 'sandbox-1';

  async ask(question: string, about: { domain: string; siteName: string; bestPageUrl: string | null }): Promise<EngineAnswer> {
    const digest = createHash('sha256').update(`${question}\u0000${about.domain}`).digest();
    const cites = about.bestPageUrl !== null || digest[0]! % 2 === 0;
    const own = about.bestPageUrl ?? `https://${about.domain}/`;
    const others = [`https://answers.example/${digest.toString('hex').slice(0, 8)}`];
    const citedUrls = cites ? (digest[1]! % 2 === 0 ? [own, ...others] : [...others, own]) : others;
    const answer = cites ? `According to ${about.siteName} (${about.domain}), here is what is known about: ${question}` : `Several sources discuss this question: ${question}`;
    return { answer, citedUrls };
  }
}

/** Engines asked for every monitored question (names shown in `ai_models`). */
export const AI_ENGINES = ['sandbox'];
/** Time between two checks of one question. */
export const AI_CHECK_INTERVAL_MS = 7 * 24 * 60 * 60 * 1000;

export interface AiJobDeps {
  db: Db;
  clock: Clock;
  events: EventLog;
  engine: AnswerEngine;
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

/** Checks one question's AI answers if it is monitored and due; reschedules its own job a week on. Safe to run twice. */
export function createAiCheckHandler({ db, clock, events, engine }: AiJobDeps): JobHandler {
  const tables = repository.seoDb(db);
  return async (job) => {
    const questionId = job.payload.question_id;
    const siteId = job.payload.site_id;
    if (typeof questionId !== 'string' || typeof siteId !== 'string' || !isUuid(questionId) || !isUuid(siteId) || job.tenantId === null || job.mode === null) return;
    const owner: Owner = { tenantId: job.tenantId, mode: job.mode };
    const before = await repository.findQuestion(tables, owner, siteId, questionId);
    const site = before && (await repository.findSite(tables, owner, siteId));
    if (!before || !site || !before.ai_monitored || before.ai_next_check_at === null) return;
    const now = clock.now();
    if (before.ai_next_check_at.getTime() > now.getTime()) return { rescheduleAt: before.ai_next_check_at };
    // Ask outside any transaction: an engine may be slow.
    const answer = await engine.ask(before.question, { domain: site.domain, siteName: site.name, bestPageUrl: before.best_page_url });
    const cited = answer.citedUrls.slice(0, 20).map((url) => url.slice(0, 2100));
    const rank = cited.findIndex((url) => hostOf(url) === site.domain);
    const text = answer.answer.toLowerCase();
    const latest = {
      engine: engine.name,
      model: engine.model,
      mentioned: rank !== -1 || text.includes(site.domain.toLowerCase()) || text.includes(site.name.toLowerCase()),
      cited_urls: cited,
      position: rank === -1 ? null : rank + 1,
      answer_excerpt: answer.answer.slice(0, 500),
      checked_at: now.toISOString(),
    };
    const next = new Date(now.getTime() + AI_CHECK_INTERVAL_MS);
    const done = await tables.transaction().execute(async (tx) => {
      const current = await repository.findQuestion(tx, owner, siteId, questionId, { forUpdate: true });
      if (!current || !current.ai_monitored || current.ai_next_check_at === null || current.ai_next_check_at.getTime() > now.getTime()) return false;
      const updated = await repository.updateQuestion(tx, owner, current.id, { ai_latest: latest, ai_last_checked_at: now, ai_next_check_at: next });
      await events.record(tx, owner, 'seo.question.ai_checked', presentQuestion(updated));
      return true;
    });
    return done ? { rescheduleAt: next } : undefined;
  };
}
