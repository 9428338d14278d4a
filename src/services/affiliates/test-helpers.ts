import { expect } from 'vitest';
import { call, type TestPlatform } from '../../../test/harness.js';

export const BASE = '/api/v1/services/affiliates';
export const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Calls of the affiliates API with one key, answering the reply's data after checking its status. */
export function affiliatesClient(platform: TestPlatform, key: string) {
  async function send(method: string, path: string, body: unknown, status: number, headers?: Record<string, string>) {
    const response = await call(platform.app, method, `${BASE}${path}`, { key, ...(body !== undefined ? { body } : {}), ...(headers ? { headers } : {}) });
    expect(response.statusCode, response.body).toBe(status);
    return response.json().data;
  }
  return {
    post: (path: string, body?: unknown, status = 201, headers?: Record<string, string>) => send('POST', path, body, status, headers),
    patch: (path: string, body: unknown, status = 200) => send('PATCH', path, body, status),
    get: (path: string, status = 200) => send('GET', path, undefined, status),
    programme: (body: Record<string, unknown> = {}) =>
      send('POST', '/programmes', { name: 'Partners', commission_type: 'percent', commission_percent: 20, landing_url: 'https://shop.example.com/welcome?x=1', ...body }, 201),
    partner: (body: Record<string, unknown>) => send('POST', '/affiliates', { name: 'Ada Lovelace', ...body }, 201),
    conversion: (body: Record<string, unknown>, status = 201) => send('POST', '/conversions', body, status),
  };
}
