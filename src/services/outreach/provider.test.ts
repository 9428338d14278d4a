import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/index.js';
import { OutboundRequestError, type OutboundHttp, type OutboundRequestInit } from '../../platform/outbound/http.js';
import { ProviderError, SandboxProvider, TwilioProvider, UnconfiguredProvider } from './provider.js';

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const SETTINGS = { accountSid: SID, authToken: 'token', fromNumber: '+14155550100', messagingServiceSid: undefined, apiBase: 'https://api.twilio.test' };

/** An outbound client that records requests and answers with `status` and `body`. */
function fakeOutbound(status: number, body: unknown, seen: Array<{ url: string; init: OutboundRequestInit }> = []): OutboundHttp {
  return {
    async request(url, init = {}) {
      seen.push({ url: String(url), init });
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      return { status, headers: {}, url: String(url), body: Buffer.from(text), text: () => text };
    },
    async close() {},
  };
}

describe('the Twilio adapter', () => {
  it('posts To, From and Body form-encoded with basic auth to the Messages API and returns the sid', async () => {
    const seen: Array<{ url: string; init: OutboundRequestInit }> = [];
    const provider = new TwilioProvider(SETTINGS, fakeOutbound(201, { sid: 'SM123', from: '+14155550100', status: 'queued' }, seen));
    expect(await provider.send({ to: '+14155550123', body: 'Hi & bye' })).toEqual({ providerMessageId: 'SM123', from: '+14155550100' });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toBe(`https://api.twilio.test/2010-04-01/Accounts/${SID}/Messages.json`);
    expect(seen[0]!.init.method).toBe('POST');
    expect(seen[0]!.init.headers).toMatchObject({
      authorization: `Basic ${Buffer.from(`${SID}:token`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(Object.fromEntries(new URLSearchParams(String(seen[0]!.init.body)))).toEqual({ To: '+14155550123', Body: 'Hi & bye', From: '+14155550100' });
  });

  it('uses the messaging service instead of a number when configured', async () => {
    const seen: Array<{ url: string; init: OutboundRequestInit }> = [];
    const service = `MG${'0123456789abcdef'.repeat(2)}`;
    await new TwilioProvider({ ...SETTINGS, fromNumber: undefined, messagingServiceSid: service }, fakeOutbound(201, { sid: 'SM1' }, seen)).send({ to: '+14155550123', body: 'x' });
    expect(new URLSearchParams(String(seen[0]!.init.body)).get('MessagingServiceSid')).toBe(service);
  });

  it('turns refusals, unreadable replies and network failures into ProviderError', async () => {
    await expect(new TwilioProvider(SETTINGS, fakeOutbound(400, { code: 21211, message: "The 'To' number is not valid." })).send({ to: '+1', body: 'x' })).rejects.toThrow(
      new ProviderError("twilio: 21211: The 'To' number is not valid."),
    );
    await expect(new TwilioProvider(SETTINGS, fakeOutbound(502, '<html>')).send({ to: '+1', body: 'x' })).rejects.toThrow(/HTTP 502/);
    const failing: OutboundHttp = {
      request: async () => {
        throw new OutboundRequestError('timeout', 'timed out');
      },
      close: async () => {},
    };
    await expect(new TwilioProvider(SETTINGS, failing).send({ to: '+1', body: 'x' })).rejects.toBeInstanceOf(ProviderError);
  });
});

describe('the sandbox and the unconfigured live provider', () => {
  it('accepts every number but the magic failing ones; live without settings always fails', async () => {
    const sandbox = new SandboxProvider();
    expect((await sandbox.send({ to: '+14155550123', body: 'x' })).providerMessageId).toMatch(/^SM[0-9a-f]{32}$/);
    await expect(sandbox.send({ to: '+15005550009', body: 'x' })).rejects.toBeInstanceOf(ProviderError);
    await expect(new UnconfiguredProvider().send()).rejects.toThrow(/not configured/);
  });
});

describe('Twilio settings', () => {
  it('reads TWILIO_* and refuses incomplete or malformed settings', () => {
    expect(loadConfig({}).twilio).toBeUndefined();
    expect(loadConfig({ TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 't', TWILIO_FROM_NUMBER: '+14155550100' }).twilio).toEqual({
      ...SETTINGS,
      authToken: 't',
      apiBase: 'https://api.twilio.com',
    });
    expect(() => loadConfig({ TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: 't' })).toThrow(/TWILIO_FROM_NUMBER/);
    expect(() => loadConfig({ TWILIO_ACCOUNT_SID: 'nope', TWILIO_AUTH_TOKEN: 't', TWILIO_FROM_NUMBER: '+14155550100' })).toThrow(/TWILIO_ACCOUNT_SID/);
    expect(() => loadConfig({ TWILIO_ACCOUNT_SID: SID, TWILIO_FROM_NUMBER: '+14155550100' })).toThrow(/TWILIO_AUTH_TOKEN/);
  });
});
