import { describe, expect, it } from 'vitest';
import { call, expectError, type TestPlatform } from './harness.js';

export interface SecuredRoute<Fixture> {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  scope: string;
  /** Creates what the route acts on, with a key of the owning tenant (test mode). */
  setup?: (ownerKey: string) => Promise<Fixture>;
  url: (fixture: Fixture) => string;
  body?: (fixture: Fixture) => unknown;
  /** Whether the URL names one row, so another tenant or mode must get 404. */
  addressesOneRow: boolean;
}

/**
 * The checks every public route must pass, shared by all services: no key, a key
 * without the scope, the exact scope alone, and (for routes on one row) another
 * tenant's key and another mode's key, which must see 404 and never 403.
 */
export function describeRouteSecurity<Fixture = undefined>(getPlatform: () => TestPlatform, route: SecuredRoute<Fixture>): void {
  describe(`security of ${route.method} needing ${route.scope}`, () => {
    async function prepare() {
      const platform = getPlatform();
      const tenant = await platform.newTenant();
      const ownerKey = await tenant.key();
      const fixture = (route.setup ? await route.setup(ownerKey) : undefined) as Fixture;
      const request = (key: string | undefined) =>
        call(platform.app, route.method, route.url(fixture), { ...(key ? { key } : {}), ...(route.body ? { body: route.body(fixture) } : {}) });
      return { platform, tenant, request };
    }

    it('refuses a request without a key: 401', async () => {
      const { request } = await prepare();
      expectError(await request(undefined), 401, 'unauthorized');
    });

    it('refuses a key without the scope: 403 naming it', async () => {
      const { tenant, request } = await prepare();
      const unrelated = route.scope.startsWith('service.forms.') ? 'service.blogs.view' : 'service.forms.view';
      const error = expectError(await request(await tenant.key({ scopes: [unrelated] })), 403, 'insufficient_scope');
      expect(error.details[0]).toMatchObject({ scope: route.scope });
    });

    it('lets the exact scope through', async () => {
      const { tenant, request } = await prepare();
      const response = await request(await tenant.key({ scopes: [route.scope] }));
      expect(response.statusCode, response.body).toBeLessThan(400);
    });

    if (route.addressesOneRow) {
      it("answers another tenant's key with 404", async () => {
        const { platform, request } = await prepare();
        const response = await request(await (await platform.newTenant()).key());
        expect(response.statusCode).toBe(404);
        expect(response.json().error.code).toMatch(/not_found$/);
      });

      it("answers the same tenant's live key with 404", async () => {
        const { tenant, request } = await prepare();
        const response = await request(await tenant.key({ mode: 'live' }));
        expect(response.statusCode).toBe(404);
        expect(response.json().error.code).toMatch(/not_found$/);
      });
    }
  });
}
