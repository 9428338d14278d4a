import type { Db } from '../../db/database.js';
import type { Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { newId } from '../../lib/ids.js';
import { assertFresh, nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { AppError, invalidField, notFound } from '../../platform/errors/app-error.js';
import type { JobRunner } from '../../platform/jobs/runner.js';
import { AI_ENGINES } from './ai.js';
import * as repository from './repository.js';
import type { QuestionRow, SeoDb } from './repository.js';
import type { AddQuestionsInput, QuestionView, UpdateQuestionInput } from './schemas.js';
import { AI_CHECK_JOB, evaluationOf, loadEvaluationContext, MAX_QUESTIONS_PER_SITE, presentQuestion, type EvaluationContext, type SeoDeps } from './shared.js';
import type { Coverage, QuestionStatus } from './tables.js';
import { normalizeText, questionIntent, questionKind } from './text.js';

export function aiJobKey(questionId: string): string {
  return `${AI_CHECK_JOB}:${questionId}`;
}

/** Turns AI monitoring of a question on (first check due now) or off, in the caller's transaction. */
async function monitoringChanges(jobs: JobRunner, jobsTx: Db, owner: Owner, question: { id: string; site_id: string }, on: boolean, now: Date) {
  if (on) {
    await jobs.schedule(
      {
        kind: AI_CHECK_JOB,
        runAt: now,
        tenantId: owner.tenantId,
        mode: owner.mode,
        payload: { question_id: question.id, site_id: question.site_id },
        dedupeKey: aiJobKey(question.id),
      },
      jobsTx,
    );
    return { ai_monitored: true, ai_models: AI_ENGINES, ai_next_check_at: now };
  }
  await jobs.cancel(aiJobKey(question.id), jobsTx);
  return { ai_monitored: false, ai_models: null, ai_next_check_at: null };
}

/** Tracked questions: adding (deduplicated, ignored ones reopened), listing, reading, status changes, AI monitoring. */
export function createQuestionRules(
  { db, jobs, events, aiMonitorLimit }: SeoDeps,
  requireSite: (tx: SeoDb, ctx: RequestContext, siteId: string, options?: { forUpdate?: boolean }) => Promise<repository.SiteRow>,
) {
  const tables = repository.seoDb(db);

  return {
    async addQuestions(ctx: RequestContext, siteId: string, input: AddQuestionsInput) {
      const items = input.questions.map((item, index) => {
        const normalized = normalizeText(item.question);
        if (!normalized || !/[\p{L}\p{N}]/u.test(normalized)) {
          throw invalidField(`questions[${index}].question`, 'invalid_value', 'A question needs at least one letter or digit.');
        }
        return { question: item.question.trim().replace(/\s+/g, ' '), normalized, monitor: item.monitor_in_ai };
      });
      return db.transaction().execute(async (jobsTx) => {
        const tx = repository.seoDb(jobsTx);
        // The site's row lock serialises additions to one site: the duplicate check and the counts hold.
        const site = await requireSite(tx, ctx, siteId, { forUpdate: true });
        const known = new Map<string, QuestionRow>();
        for (const row of await repository.questionsByNormalized(tx, ctx, siteId, [...new Set(items.map((item) => item.normalized))])) known.set(row.normalized, row);
        const newCount = new Set(items.filter((item) => !known.has(item.normalized)).map((item) => item.normalized)).size;
        if (newCount > 0 && (await repository.countSiteQuestions(tx, ctx, siteId)) + newCount > MAX_QUESTIONS_PER_SITE) {
          throw new AppError('conflict', `A site tracks at most ${MAX_QUESTIONS_PER_SITE} questions.`, [
            { path: 'questions', code: 'limit_reached', message: `A site tracks at most ${MAX_QUESTIONS_PER_SITE} questions.`, limit: MAX_QUESTIONS_PER_SITE },
          ]);
        }
        let monitored = await repository.countMonitored(tx, ctx);
        let notMonitored = 0;
        let context: EvaluationContext | undefined;
        let created = 0;
        const results: QuestionRow[] = [];
        for (const item of items) {
          const current = known.get(item.normalized);
          if (current) {
            const changes: Partial<repository.NewQuestion> = {};
            if (current.status === 'ignored') changes.status = 'open';
            if (item.monitor === true && !current.ai_monitored) {
              if (monitored < aiMonitorLimit) {
                Object.assign(changes, await monitoringChanges(jobs, jobsTx, ctx, current, true, ctx.now));
                monitored += 1;
              } else notMonitored += 1;
            } else if (item.monitor === false && current.ai_monitored) {
              Object.assign(changes, await monitoringChanges(jobs, jobsTx, ctx, current, false, ctx.now));
              monitored -= 1;
            }
            if (Object.keys(changes).length === 0) {
              results.push(current);
              continue;
            }
            const updated = await repository.updateQuestion(tx, ctx, current.id, { ...changes, updated_at: nextUpdatedAt(current.updated_at, ctx.now) });
            await events.record(jobsTx, ctx, 'seo.question.updated', presentQuestion(updated));
            known.set(item.normalized, updated);
            results.push(updated);
            continue;
          }
          context ??= await loadEvaluationContext(tx, ctx, site);
          const id = newId();
          let monitoring: Record<string, unknown> = { ai_monitored: false, ai_models: null, ai_next_check_at: null };
          if (item.monitor === true) {
            if (monitored < aiMonitorLimit) {
              monitoring = await monitoringChanges(jobs, jobsTx, ctx, { id, site_id: siteId }, true, ctx.now);
              monitored += 1;
            } else notMonitored += 1;
          }
          const inserted = await repository.insertQuestion(tx, ctx, {
            id,
            site_id: siteId,
            question: item.question,
            normalized: item.normalized,
            kind: questionKind(item.question),
            intent: questionIntent(item.question),
            sources: ['api'],
            status: 'open',
            ...evaluationOf(item.question, context, ctx.now),
            ai_last_checked_at: null,
            ai_latest: null,
            author_label: null,
            ...(monitoring as { ai_monitored: boolean; ai_models: string[] | null; ai_next_check_at: Date | null }),
            created_at: ctx.now,
            updated_at: ctx.now,
          });
          if (!inserted) throw new AppError('conflict', 'The question was added at the same time by another request; send it again.');
          await events.record(jobsTx, ctx, 'seo.question.created', presentQuestion(inserted));
          known.set(item.normalized, inserted);
          results.push(inserted);
          created += 1;
        }
        return {
          created,
          existing: items.length - created,
          questions: results.map(presentQuestion),
          ai_monitoring: { limit: aiMonitorLimit, monitored, not_monitored: notMonitored },
        };
      });
    },

    async listQuestions(ctx: RequestContext, siteId: string, filters: { status?: QuestionStatus; coverage?: Coverage; topic_id?: string }, page: PageRequest) {
      await requireSite(tables, ctx, siteId);
      const { rows, total } = await repository.listQuestions(
        tables,
        ctx,
        { siteId, status: filters.status, coverage: filters.coverage, topicId: filters.topic_id?.toLowerCase() },
        page,
      );
      return { rows: rows.map(presentQuestion), total };
    },

    async getQuestion(ctx: RequestContext, siteId: string, questionId: string): Promise<QuestionView> {
      const row = await repository.findQuestion(tables, ctx, siteId, questionId);
      if (!row) throw notFound('Question');
      return presentQuestion(row);
    },

    async updateQuestion(ctx: RequestContext, siteId: string, questionId: string, input: UpdateQuestionInput): Promise<QuestionView> {
      return db.transaction().execute(async (jobsTx) => {
        const tx = repository.seoDb(jobsTx);
        const current = await repository.findQuestion(tx, ctx, siteId, questionId, { forUpdate: true });
        if (!current) throw notFound('Question');
        assertFresh(input.expected_updated_at, current.updated_at);
        const changes: Partial<repository.NewQuestion> = {};
        if (input.status !== undefined && input.status !== current.status) changes.status = input.status;
        if (input.ai_monitored !== undefined && input.ai_monitored !== current.ai_monitored) {
          if (input.ai_monitored && (await repository.countMonitored(tx, ctx)) >= aiMonitorLimit) {
            throw new AppError('ai_monitor_limit_reached', `At most ${aiMonitorLimit} questions can be monitored in AI answers.`, [
              { path: 'ai_monitored', code: 'limit_reached', message: `At most ${aiMonitorLimit} questions can be monitored in AI answers.`, limit: aiMonitorLimit },
            ]);
          }
          Object.assign(changes, await monitoringChanges(jobs, jobsTx, ctx, current, input.ai_monitored, ctx.now));
        }
        if (Object.keys(changes).length === 0) return presentQuestion(current);
        const updated = await repository.updateQuestion(tx, ctx, current.id, { ...changes, updated_at: nextUpdatedAt(current.updated_at, ctx.now) });
        const view = presentQuestion(updated);
        await events.record(jobsTx, ctx, 'seo.question.updated', view);
        return view;
      });
    },

    async deleteQuestion(ctx: RequestContext, siteId: string, questionId: string): Promise<{ id: string; deleted: true }> {
      return db.transaction().execute(async (jobsTx) => {
        const tx = repository.seoDb(jobsTx);
        const current = await repository.findQuestion(tx, ctx, siteId, questionId, { forUpdate: true });
        if (!current) throw notFound('Question');
        await repository.deleteQuestion(tx, ctx, current.id);
        await jobs.cancel(aiJobKey(current.id), jobsTx);
        await events.record(jobsTx, ctx, 'seo.question.deleted', presentQuestion(current));
        return { id: current.id, deleted: true as const };
      });
    },
  };
}
