import { randomBytes, randomUUID } from 'node:crypto';
import { DAY_MS } from '../../lib/clock.js';

/**
 * What the service needs of a social platform. Real platforms (Facebook, Instagram, LinkedIn,
 * X, ...) connect through OAuth 2: the authorise URL sends a person to the platform, the code
 * it returns is exchanged for tokens, tokens are refreshed before they expire, validated by a
 * cheap read, and used to publish. Connectors call other servers only through `deps.outbound`.
 */
export interface SocialConnector {
  readonly platform: string;
  /** Where to send a person to grant access; `state` comes back with the code. */
  authoriseUrl(input: { state: string; redirectUri: string; scopes: readonly string[] }): string;
  exchangeCode(input: { code: string; redirectUri: string }, now: Date): Promise<ConnectorGrant>;
  refresh(tokens: ConnectorTokens, now: Date): Promise<ConnectorGrant>;
  /** A cheap authenticated read: is the token still accepted, and by which account. */
  validate(tokens: ConnectorTokens, now: Date): Promise<{ ok: true } | { ok: false; error: string; reconnect: boolean }>;
  /** Publishes once per `idempotencyKey` (a retry after a crash gets the first post back). */
  publish(tokens: ConnectorTokens, input: PublishInput, now: Date): Promise<PublishOutcome>;
}

export interface ConnectorTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
  externalId: string;
}

export interface ConnectorGrant {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
  scopes: string[];
  externalId: string;
  displayName: string | null;
  avatarUrl: string | null;
}

export interface PublishInput {
  idempotencyKey: string;
  text: string;
  media: Array<{ fileId: string; kind: string | null; mime: string | null; altText: string | null }>;
}

export type PublishOutcome = { ok: true; platformPostId: string; url: string } | { ok: false; error: string };

export class ConnectorError extends Error {}

/** Text that makes the sandbox refuse a post, to try failure paths. */
export const SANDBOX_FAIL_MARKER = '[sandbox:fail]';
export const SANDBOX_SCOPES = ['profile.read', 'posts.write'];
const SANDBOX_TOKEN_LIFE_MS = 60 * DAY_MS;

/**
 * The sandbox platform of test mode: no outside world. Tokens are random and live 60 days;
 * refreshing always works; publishing succeeds (the same post per idempotency key) unless
 * the text contains `[sandbox:fail]`.
 */
export class SandboxConnector implements SocialConnector {
  readonly platform = 'sandbox';
  readonly #published = new Map<string, { platformPostId: string; url: string }>();

  authoriseUrl({ state }: { state: string }): string {
    return `https://sandbox.social.invalid/oauth/authorize?state=${encodeURIComponent(state)}`;
  }

  async exchangeCode(_input: { code: string }, now: Date): Promise<ConnectorGrant> {
    return this.grant(`sandbox_${randomBytes(8).toString('hex')}`, now);
  }

  grant(externalId: string, now: Date, displayName: string | null = null): ConnectorGrant {
    return {
      accessToken: `sbx_at_${randomBytes(24).toString('base64url')}`,
      refreshToken: `sbx_rt_${randomBytes(24).toString('base64url')}`,
      expiresAt: new Date(now.getTime() + SANDBOX_TOKEN_LIFE_MS),
      scopes: [...SANDBOX_SCOPES],
      externalId,
      displayName,
      avatarUrl: null,
    };
  }

  async refresh(tokens: ConnectorTokens, now: Date): Promise<ConnectorGrant> {
    if (!tokens.refreshToken) throw new ConnectorError('The sandbox account has no refresh token; connect it again.');
    return this.grant(tokens.externalId, now);
  }

  async validate(tokens: ConnectorTokens, now: Date) {
    if (tokens.expiresAt && tokens.expiresAt.getTime() <= now.getTime()) return { ok: false as const, error: 'The access token has expired.', reconnect: false };
    return { ok: true as const };
  }

  async publish(tokens: ConnectorTokens, input: PublishInput, now: Date): Promise<PublishOutcome> {
    const validation = await this.validate(tokens, now);
    if (!validation.ok) return { ok: false, error: validation.error };
    if (input.text.includes(SANDBOX_FAIL_MARKER)) return { ok: false, error: 'The sandbox platform refused the post (the text contains [sandbox:fail]).' };
    let post = this.#published.get(input.idempotencyKey);
    if (!post) {
      const id = randomUUID();
      post = { platformPostId: `sbx_post_${id}`, url: `https://sandbox.social.invalid/${tokens.externalId}/posts/${id}` };
      this.#published.set(input.idempotencyKey, post);
      if (this.#published.size > 10_000) this.#published.delete(this.#published.keys().next().value!);
    }
    return { ok: true, ...post };
  }
}
