import * as OTPAuth from 'otpauth';
import { expect } from 'vitest';
import { call, type Response, type TestPlatform } from '../../../test/harness.js';

/** Shared by the customer-auth test files (not a test file itself). */
export const BASE = '/api/v1/services/customer-auth';
export const PASSWORD = 'violet tractor harmonica';
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * A TOTP code computed by the independent `otpauth` package, never by the service's own
 * implementation, at `at` (the platform's clock by default).
 */
export function otp(secret: string, at: Date): string {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: at.getTime() });
}

export interface EndUser {
  id: string;
  email: string;
  status: string;
  mfa_enabled: boolean;
  updated_at: string;
  [field: string]: unknown;
}

export function helpers(getPlatform: () => TestPlatform) {
  const app = () => getPlatform().app;

  async function createUser(key: string, body: Record<string, unknown> = { email: 'ada@example.com' }): Promise<EndUser> {
    const response = await call(app(), 'POST', `${BASE}/users`, { key, body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data;
  }

  function login(key: string, email: string, password: string = PASSWORD): Promise<Response> {
    return call(app(), 'POST', `${BASE}/sessions`, { key, body: { email, password } });
  }

  /** Signs in a user without MFA; returns the session from the 201 reply. */
  async function session(key: string, email: string, password: string = PASSWORD) {
    const response = await login(key, email, password);
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data.session as { token: string; jti: string; issued_at: string; expires_at: string };
  }

  /**
   * Enrols and confirms TOTP (the confirming code is computed at the platform's clock), then
   * moves the clock one step on, so the next code is for a step not yet used.
   */
  async function enableMfa(key: string, userId: string): Promise<{ secret: string; recoveryCodes: string[] }> {
    const platform = getPlatform();
    const enrolment = await call(app(), 'POST', `${BASE}/users/${userId}/mfa/totp`, { key });
    expect(enrolment.statusCode, enrolment.body).toBe(201);
    const secret = enrolment.json().data.secret as string;
    const confirm = await call(app(), 'POST', `${BASE}/users/${userId}/mfa/totp/confirm`, { key, body: { code: otp(secret, platform.clock.now()) } });
    expect(confirm.statusCode, confirm.body).toBe(200);
    platform.clock.advance(30_000);
    return { secret, recoveryCodes: confirm.json().data.recovery_codes };
  }

  /** Password step of a user with MFA on: the challenge token. */
  async function challenge(key: string, email: string, password: string = PASSWORD): Promise<string> {
    const response = await login(key, email, password);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data.challenge_token;
  }

  function completeMfa(key: string, challengeToken: string, code: string): Promise<Response> {
    return call(app(), 'POST', `${BASE}/sessions/mfa`, { key, body: { challenge_token: challengeToken, code } });
  }

  return { createUser, login, session, enableMfa, challenge, completeMfa };
}
