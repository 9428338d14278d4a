import { randomBytes } from 'node:crypto';
import type { Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import { DAY_MS, HOUR_MS } from '../../lib/clock.js';
import { nextUpdatedAt } from '../../platform/concurrency.js';
import type { RequestContext } from '../../platform/context.js';
import { invalidField, notFound } from '../../platform/errors/app-error.js';
import { SandboxConnector } from './connector.js';
import { presentAccount } from './present.js';
import * as repository from './repository.js';
import type { AccountRow, SocialDb } from './repository.js';
import type { CreateAccountInput, SocialAccountReply } from './schemas.js';
import { inTransaction, openTokens, sealTokens, type SocialDeps } from './shared.js';
import type { AccountStatus } from './tables.js';

/** Tokens expiring within this are refreshed by the health check. */
export const REFRESH_AHEAD_MS = DAY_MS;
/** Accounts are checked again once their last check is this old. */
export const VALIDATE_EVERY_MS = 6 * HOUR_MS;
export const HEALTH_JOB = 'social.accounts.health';

export function createAccountRules(deps: SocialDeps) {
  const { db, events, jobs, connectors, secretsKey } = deps;
  const tables = repository.socialDb(db);

  async function requireAccount(tx: SocialDb, owner: Owner, id: string, forUpdate = false): Promise<AccountRow> {
    const row = forUpdate ? await repository.findAccountForUpdate(tx, owner, id) : await repository.findAccount(tx, owner, id);
    if (!row) throw notFound('Social account');
    return row;
  }

  /**
   * The health check of one account: refreshes a token that expires within a day, then asks the
   * platform whether the token works. Sets status, last_validated_at, last_error and
   * token_expires_at; a status change is an event.
   */
  async function validate(owner: Owner, id: string, now: Date): Promise<SocialAccountReply> {
    return inTransaction(db, async (tx) => {
      const row = await requireAccount(tx, owner, id, true);
      const connector = connectors.get(row.platform);
      let status: AccountStatus = 'connected';
      let error: string | null = null;
      let tokens = openTokens(secretsKey, owner, row);
      const changes: Partial<repository.NewAccount> = {};
      if (!connector || !tokens) {
        status = 'error';
        error = connector ? 'The account has no access token; connect it again.' : `No connector is configured for ${row.platform}.`;
      } else {
        if (tokens.expiresAt && tokens.expiresAt.getTime() - now.getTime() < REFRESH_AHEAD_MS) {
          try {
            const grant = await connector.refresh(tokens, now);
            Object.assign(changes, sealTokens(secretsKey, owner, row.external_id, grant), { token_expires_at: grant.expiresAt, scopes: grant.scopes });
            tokens = { ...tokens, accessToken: grant.accessToken, refreshToken: grant.refreshToken, expiresAt: grant.expiresAt };
          } catch (refreshError) {
            status = 'expired';
            error = `The token could not be refreshed: ${(refreshError as Error).message}`.slice(0, 1000);
          }
        }
        if (status === 'connected') {
          const result = await connector.validate(tokens, now);
          if (!result.ok) {
            status = result.reconnect || (tokens.expiresAt && tokens.expiresAt <= now) ? 'expired' : 'error';
            error = result.error.slice(0, 1000);
          }
        }
      }
      const updated = await repository.updateAccount(tx, owner, id, {
        ...changes,
        status,
        last_error: error,
        last_validated_at: now,
        updated_at: nextUpdatedAt(row.updated_at, now),
      });
      const view = presentAccount(owner, updated);
      if (updated.status !== row.status) await events.record(tx, owner, 'social.account.status_changed', view);
      return view;
    });
  }

  return {
    validate,

    /** Connects a sandbox account (test mode only): real platforms connect through OAuth in the dashboard. */
    async createAccount(ctx: RequestContext, input: CreateAccountInput): Promise<SocialAccountReply> {
      if (ctx.mode !== 'test') {
        throw invalidField('platform', 'invalid_value', 'The sandbox platform is for test-mode keys (sk_test_...); live accounts connect through OAuth in the dashboard.');
      }
      const sandbox = connectors.get('sandbox') as SandboxConnector;
      const displayName = input.display_name.trim();
      const grant = sandbox.grant(`sandbox_${randomBytes(8).toString('hex')}`, ctx.now, displayName);
      return inTransaction(db, async (tx, jobsDb) => {
        const row = await repository.insertAccount(tx, ctx, {
          platform: 'sandbox',
          account_kind: input.account_kind ?? 'profile',
          external_id: grant.externalId,
          display_name: displayName,
          avatar_url: grant.avatarUrl,
          ...sealTokens(secretsKey, ctx, grant.externalId, grant),
          token_expires_at: grant.expiresAt,
          scopes: grant.scopes,
          status: 'connected',
          last_validated_at: ctx.now,
          last_error: null,
          environment: ctx.mode === 'test' ? 'sandbox' : 'live',
          connected_by: null,
          connected_by_name: null,
          visibility: input.visibility ?? 'private',
          created_at: ctx.now,
          updated_at: ctx.now,
        });
        const view = presentAccount(ctx, row);
        await events.record(tx, ctx, 'social.account.connected', view);
        await jobs.enqueue({ kind: HEALTH_JOB, runAt: new Date(ctx.now.getTime() + HOUR_MS), dedupeKey: `recurring:${HEALTH_JOB}` }, jobsDb);
        return view;
      });
    },

    async getAccount(ctx: RequestContext, id: string): Promise<SocialAccountReply> {
      return presentAccount(ctx, await requireAccount(tables, ctx, id));
    },

    async listAccounts(ctx: RequestContext, filters: { platform?: string; status?: AccountStatus }, page: PageRequest) {
      const { rows, total } = await repository.listAccounts(tables, ctx, filters, page);
      return { rows: rows.map((row) => presentAccount(ctx, row)), total };
    },

    /** Disconnects: the tokens and the row are deleted; the reply is the account as it was. */
    async deleteAccount(ctx: RequestContext, id: string): Promise<SocialAccountReply> {
      return inTransaction(db, async (tx) => {
        const row = await requireAccount(tx, ctx, id, true);
        await repository.deleteAccount(tx, ctx, id);
        const view = presentAccount(ctx, row);
        await events.record(tx, ctx, 'social.account.disconnected', view);
        return view;
      });
    },

    async validateAccount(ctx: RequestContext, id: string): Promise<SocialAccountReply> {
      return validate(ctx, id, ctx.now);
    },
  };
}

export type AccountRules = ReturnType<typeof createAccountRules>;
