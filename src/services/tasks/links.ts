import type { Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import type { RequestContext } from '../../platform/context.js';
import { invalidField, notFound } from '../../platform/errors/app-error.js';
import type { EventLog } from '../../platform/events/event-log.js';
import type { ServiceRegistry } from '../registry.js';
import * as repository from './repository.js';
import type { LinkRow, TasksDb } from './repository.js';
import type { LinkView } from './schemas.js';
import type { LinkSource } from './tables.js';

type Resolved = { label: string; url: string } | null;

/**
 * Links from a task to records of other services. The label and URL come from the owning
 * service's interface, looked up again on every read (a renamed or deleted record shows as it
 * is now); services this platform does not have (my-leads, smart-chat) give null for both.
 */
export function createLinkRules({ tables, events, services }: { tables: TasksDb; events: EventLog; services: ServiceRegistry }) {
  /** The record's label and URL; `undefined` when the owning service is not installed here. */
  async function resolve(owner: Owner, source: LinkSource, sourceId: string): Promise<Resolved | undefined> {
    try {
      if (source === 'invoicing') return await services.get('invoicing').describeRecord(owner, sourceId);
      if (source === 'forms') return await services.get('forms').describeRecord(owner, sourceId);
      if (source === 'appointments') return await services.get('appointments').describeRecord(owner, sourceId);
    } catch (error) {
      if (error instanceof Error && /is not installed/.test(error.message)) return undefined;
      throw error;
    }
    return undefined;
  }

  /** The link with its label and URL as the owning service shows them now; a changed value is stored. */
  async function refresh(owner: Owner, link: LinkRow): Promise<LinkView> {
    const resolved = await resolve(owner, link.source, link.source_id);
    const label = resolved?.label ?? null;
    const url = resolved?.url ?? null;
    if (label !== link.label || url !== link.url) await repository.updateLinkLabel(tables, owner, link.id, label, url);
    return { ...link, label, url };
  }

  async function requireTask(ctx: RequestContext, taskId: string): Promise<void> {
    if (!(await repository.findTask(tables, ctx, taskId))) throw notFound('Task');
  }

  return {
    async createLink(ctx: RequestContext, taskId: string, input: { source: LinkSource; source_id: string }): Promise<LinkView> {
      await requireTask(ctx, taskId);
      const resolved = await resolve(ctx, input.source, input.source_id);
      if (resolved === null) throw invalidField('source_id', 'not_found', `No ${input.source} record with this id.`);
      return tables.transaction().execute(async (tx) => {
        const task = await repository.findTask(tx, ctx, taskId, { forUpdate: true });
        if (!task) throw notFound('Task');
        const inserted = await repository.insertLink(tx, ctx, {
          task_id: task.id,
          source: input.source,
          source_id: input.source_id,
          label: resolved?.label ?? null,
          url: resolved?.url ?? null,
          created_at: ctx.now,
        });
        // Linking the same record again answers with the existing link.
        if (!inserted) return (await repository.findLinkBySource(tx, ctx, taskId, input.source, input.source_id)) as LinkView;
        const view = inserted;
        await events.record(tx, ctx, 'tasks.link.created', view);
        return view;
      });
    },

    async listLinks(ctx: RequestContext, taskId: string, page: PageRequest) {
      await requireTask(ctx, taskId);
      const { rows, total } = await repository.listLinks(tables, ctx, taskId, page);
      return { rows: await Promise.all(rows.map((row) => refresh(ctx, row))), total };
    },

    async deleteLink(ctx: RequestContext, taskId: string, linkId: string): Promise<{ id: number; deleted: true }> {
      return tables.transaction().execute(async (tx) => {
        const link = await repository.findLink(tx, ctx, taskId, linkId);
        if (!link) throw notFound('Link');
        await repository.deleteLink(tx, ctx, linkId);
        await events.record(tx, ctx, 'tasks.link.deleted', link);
        return { id: link.id, deleted: true as const };
      });
    },
  };
}
