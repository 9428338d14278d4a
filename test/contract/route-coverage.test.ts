import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isContractPath, OPENAPI_URL } from '../contract.js';
import { call, startTestPlatform, type TestPlatform } from '../harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

/** `/contacts/:id` as OpenAPI writes it: `/contacts/{id}`. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

describe('route coverage', () => {
  it('documents every route under /api/v1 and /admin/v1, /healthz and /readyz, and documents no route that does not exist', async () => {
    const document = (await call(platform.app, 'GET', OPENAPI_URL)).json<{ paths: Record<string, Record<string, unknown>> }>();
    const served = platform.app
      .routeTable()
      .filter((route) => isContractPath(route.url))
      .map((route) => `${route.method} ${openApiPath(route.url)}`);
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => ['get', 'post', 'put', 'patch', 'delete'].includes(key))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(
      served.filter((route) => !documented.includes(route)),
      'served but not documented',
    ).toEqual([]);
    expect(
      documented.filter((operation) => !served.includes(operation)),
      'documented but not served',
    ).toEqual([]);
    expect(served.length).toBeGreaterThan(60);
    for (const probe of ['GET /healthz', 'GET /readyz', 'POST /admin/v1/tenants', 'GET /api/v1/services/crm/contacts']) expect(served).toContain(probe);
  });
});
