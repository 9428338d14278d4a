import fs from 'node:fs';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_URL } from '../contract.js';
import { call, startTestPlatform, type TestPlatform } from '../harness.js';

/**
 * What a client generated from the document must be able to do: types from openapi-typescript,
 * calls through openapi-fetch. The usage file below must type-check with no query on a list
 * call and no body on a no-body action; then it runs against this server.
 */

const GENERATED = path.join(import.meta.dirname, '.generated');

const USAGE = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export async function listThenRetire(baseUrl: string, key: string, couponId: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } });
  const contacts = await client.GET('/api/v1/services/crm/contacts');
  const retired = await client.POST('/api/v1/services/catalog/catalog/coupons/{id}/retire', { params: { path: { id: couponId } } });
  const total: number | undefined = contacts.data?.meta.total;
  const active: boolean | undefined = retired.data?.data.active;
  return { listStatus: contacts.response.status, total, retireStatus: retired.response.status, active };
}
`;

let platform: TestPlatform;
let baseUrl: string;
beforeAll(async () => {
  platform = await startTestPlatform();
  baseUrl = await platform.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => platform.close());

describe('a client generated from the document', () => {
  it('type-checks a list call without a query and an action call without a body, and both work against the server', async () => {
    const document = (await call(platform.app, 'GET', OPENAPI_URL)).json();
    fs.mkdirSync(GENERATED, { recursive: true });
    fs.writeFileSync(path.join(GENERATED, 'api.d.ts'), astToString(await openapiTS(document)));
    const usageFile = path.join(GENERATED, 'usage.ts');
    fs.writeFileSync(usageFile, USAGE);

    const program = ts.createProgram([usageFile], {
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: true,
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    expect(diagnostics).toEqual([]);

    const key = await (await platform.newTenant()).key();
    await call(platform.app, 'POST', '/api/v1/services/crm/contacts', { key, body: { name: 'Ada' } });
    const coupon = (
      await call(platform.app, 'POST', '/api/v1/services/catalog/catalog/coupons', { key, body: { code: 'RETIREME', discount_type: 'percent', percent_off: 10 } })
    ).json().data;
    const { listThenRetire } = (await import(usageFile)) as { listThenRetire: (baseUrl: string, key: string, couponId: string) => Promise<Record<string, unknown>> };
    expect(await listThenRetire(baseUrl, key, coupon.id)).toEqual({ listStatus: 200, total: 1, retireStatus: 200, active: false });
  });
});
