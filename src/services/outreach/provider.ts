import { randomUUID } from 'node:crypto';
import type { TwilioSettings } from '../../config/index.js';
import type { OutboundHttp } from '../../platform/outbound/http.js';

export interface OutgoingMessage {
  to: string;
  body: string;
}

export interface ProviderReceipt {
  providerMessageId: string;
  /** The sender number, when the provider says. */
  from: string | null;
}

/** A refusal or failure of the provider; the scheduler retries it with backoff, then fails the enrollment. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
}

/** Where step messages go: the sandbox in test mode, Twilio in live mode. */
export interface MessagingProvider {
  readonly name: string;
  send(message: OutgoingMessage): Promise<ProviderReceipt>;
}

/** The sandbox's sender number (Twilio's magic test sender). */
export const SANDBOX_FROM = '+15005550006';
/**
 * Numbers the sandbox refuses, as Twilio's test credentials do with their magic numbers:
 * +15005550001 (invalid), +15005550002 (cannot route), +15005550009 (cannot receive SMS).
 */
export const SANDBOX_FAILING_NUMBERS = new Set(['+15005550001', '+15005550002', '+15005550009']);

/**
 * Sends nothing: accepts every message (the messages table is the record, readable at
 * GET /outreach/messages) except to the magic failing numbers above.
 */
export class SandboxProvider implements MessagingProvider {
  readonly name = 'sandbox';

  async send(message: OutgoingMessage): Promise<ProviderReceipt> {
    if (SANDBOX_FAILING_NUMBERS.has(message.to)) throw new ProviderError(`sandbox: ${message.to} cannot receive SMS`);
    return { providerMessageId: `SM${randomUUID().replaceAll('-', '')}`, from: SANDBOX_FROM };
  }
}

/** Live mode without Twilio settings: every send fails, so nothing pretends to reach a phone. */
export class UnconfiguredProvider implements MessagingProvider {
  readonly name = 'twilio';

  async send(): Promise<ProviderReceipt> {
    throw new ProviderError('live messaging is not configured (set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM_NUMBER)');
  }
}

/**
 * Twilio's Messages API (`POST /2010-04-01/Accounts/{sid}/Messages.json`, form-encoded, basic
 * auth), through the platform's outbound HTTP client. `statusCallbackUrl`, when set, is passed
 * as StatusCallback.
 */
export class TwilioProvider implements MessagingProvider {
  readonly name = 'twilio';

  constructor(
    private readonly settings: TwilioSettings,
    private readonly outbound: OutboundHttp,
    private readonly statusCallbackUrl?: string,
  ) {}

  async send(message: OutgoingMessage): Promise<ProviderReceipt> {
    const { accountSid, authToken, fromNumber, messagingServiceSid, apiBase } = this.settings;
    const form = new URLSearchParams({ To: message.to, Body: message.body });
    if (messagingServiceSid) form.set('MessagingServiceSid', messagingServiceSid);
    else if (fromNumber) form.set('From', fromNumber);
    if (this.statusCallbackUrl) form.set('StatusCallback', this.statusCallbackUrl);
    let response;
    try {
      response = await this.outbound.request(`${apiBase}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
        maxRedirects: 0,
        maxResponseBytes: 64 * 1024,
      });
    } catch (error) {
      throw new ProviderError(`twilio: ${error instanceof Error ? error.message : String(error)}`);
    }
    let reply: { sid?: unknown; from?: unknown; code?: unknown; message?: unknown } = {};
    try {
      reply = JSON.parse(response.text()) as typeof reply;
    } catch {
      // An unreadable reply is handled below by its status.
    }
    if (response.status >= 300 || typeof reply.sid !== 'string') {
      const detail = typeof reply.message === 'string' ? reply.message : `HTTP ${response.status}`;
      throw new ProviderError(`twilio: ${typeof reply.code === 'number' ? `${reply.code}: ` : ''}${detail}`.slice(0, 500));
    }
    return { providerMessageId: reply.sid, from: typeof reply.from === 'string' ? reply.from : (fromNumber ?? null) };
  }
}
