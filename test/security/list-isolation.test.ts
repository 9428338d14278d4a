import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mode } from '../../src/db/types.js';
import { call, startTestPlatform, type TestPlatform } from '../harness.js';
import { buildWorld, type World } from '../world.js';

/**
 * Tenant isolation of every list, read from the OpenAPI document so that every list route of
 * every service (present and future) is covered: four owners (two tenants, each in test and
 * live mode) each get a world of rows tagged with their own name, then every list is called by
 * every owner, with no filter and with each of its filters set to the other owners' values
 * (their tags as search terms, their ids as id filters, every enum value). No reply may hold a
 * row of another owner: none of their ids, and none of their tags anywhere in a row.
 */

interface Owner {
  label: string;
  key: string;
  world: World;
}

interface QueryParameter {
  name: string;
  schema: { type?: string | string[]; enum?: unknown[]; format?: string; anyOf?: unknown[] };
}

interface ListOperation {
  operationId: string;
  template: string;
  filters: QueryParameter[];
}

let platform: TestPlatform;
let owners: Owner[];
let lists: ListOperation[];

beforeAll(async () => {
  platform = await startTestPlatform();
  const tenants = [await platform.newTenant('isolation alpha'), await platform.newTenant('isolation beta')];
  owners = [];
  for (const [index, tenant] of tenants.entries()) {
    for (const mode of ['test', 'live'] as Mode[]) {
      const label = `${index === 0 ? 'alpha' : 'beta'}-${mode}`;
      const key = await tenant.key({ mode });
      owners.push({ label, key, world: await buildWorld(platform.app, key, { tag: `iso-${label}-tag` }) });
    }
  }
  lists = listOperations((await call(platform.app, 'GET', '/api/v1/openapi.json')).json());
}, 180_000);

afterAll(() => platform.close());

/** GET operations under /api/v1 whose 200 reply is a list: `{ data: [...], meta }`. */
function listOperations(document: any): ListOperation[] {
  const found: ListOperation[] = [];
  for (const [template, item] of Object.entries<any>(document.paths)) {
    const operation = item.get;
    if (!template.startsWith('/api/v1/services/') || !operation) continue;
    const schema = resolve(document, operation.responses?.['200']?.content?.['application/json']?.schema);
    if (resolve(document, schema?.properties?.data)?.type !== 'array' || !schema?.properties?.meta) continue;
    const filters = (operation.parameters ?? [])
      .filter((parameter: any) => parameter.in === 'query' && !['limit', 'offset'].includes(parameter.name))
      .map((parameter: any) => ({ name: parameter.name, schema: resolve(document, parameter.schema) ?? {} }));
    found.push({ operationId: operation.operationId, template, filters });
  }
  return found;
}

function resolve(document: any, schema: any): any {
  if (schema?.$ref?.startsWith('#/'))
    return resolve(
      document,
      schema.$ref
        .slice(2)
        .split('/')
        .reduce((node: any, part: string) => node?.[part], document),
    );
  return schema;
}

/** Every id and slug of a world, as text. */
function idsOf(world: World): Set<string> {
  return new Set(
    Object.values(world.ids)
      .filter((value) => value !== undefined)
      .map(String),
  );
}

/** Values to try for a filter: the other owners' tags and ids, each enum value, both booleans. */
function probesFor(filter: QueryParameter, others: Owner[]): string[] {
  const types = [filter.schema.type ?? []].flat();
  if (filter.schema.enum) return filter.schema.enum.map(String);
  if (types.includes('boolean')) return ['true', 'false'];
  if (types.includes('integer') || types.includes('number'))
    return others.flatMap((other) =>
      Object.values(other.world.ids)
        .filter((value) => typeof value === 'number')
        .map(String),
    );
  const ids = others.flatMap((other) => [...idsOf(other.world)]);
  return filter.name.endsWith('_id') ? idsOfKind(filter.name, others) : [...others.map((other) => other.world.tag), ...ids.slice(0, 4)];
}

/**
 * The other owners' ids an id filter could match: those of the kind it names (`contact_id`: the
 * contact; `programme_id`: the affiliate programme; `invoice_id`: both invoices), since an id of
 * another kind selects nothing in any implementation. A filter whose kind the world does not
 * name gets every id.
 */
function idsOfKind(filterName: string, others: Owner[]): string[] {
  const kind = filterName.slice(0, -'_id'.length).replace(/_/g, '').toLowerCase();
  const matching = others.flatMap((other) =>
    Object.entries(other.world.ids)
      .filter(([name, value]) => value !== undefined && name.toLowerCase().endsWith(kind))
      .map(([, value]) => String(value)),
  );
  return matching.length > 0 ? matching : others.flatMap((other) => [...idsOf(other.world)]);
}

describe('list isolation', () => {
  it('finds the list routes of every service in the document', () => {
    const services = new Set(lists.map((list) => list.template.split('/')[4]));
    expect([...services].sort()).toEqual([
      'affiliates',
      'appointments',
      'blogs',
      'catalog',
      'crm',
      'customer-auth',
      'forms',
      'invoicing',
      'outreach',
      'payments',
      'seo',
      'social',
      'tasks',
      'webhooks',
    ]);
    expect(lists.length).toBeGreaterThanOrEqual(20);
  });

  it("never returns another tenant's or mode's row, with or without filters", async () => {
    const leaks: string[] = [];
    let calls = 0;
    for (const owner of owners) {
      const others = owners.filter((other) => other !== owner);
      const foreignIds = new Set(others.flatMap((other) => [...idsOf(other.world)]));
      const ownIds = idsOf(owner.world);
      for (const list of lists) {
        const path = owner.world.fillPath(list.template);
        const queries = ['', ...list.filters.flatMap((filter) => probesFor(filter, others).map((value) => `${encodeURIComponent(filter.name)}=${encodeURIComponent(value)}`))];
        for (const query of queries) {
          // Other owners' values go to every filter whatever its declared format: a refusal is fine.
          const response = await call(platform.app, 'GET', `${path}?limit=200${query ? `&${query}` : ''}`, { key: owner.key, invalid: true });
          calls += 1;
          if (response.statusCode !== 200) {
            // A filter value of the wrong shape may be refused; nothing else may fail.
            if (response.statusCode >= 500 || (query === '' && response.statusCode !== 404)) leaks.push(`${owner.label} ${list.operationId}?${query}: ${response.statusCode}`);
            continue;
          }
          for (const row of response.json().data as Array<Record<string, unknown>>) {
            const text = JSON.stringify(row);
            const id = row.id ?? row.jti;
            if (id !== undefined && foreignIds.has(String(id)) && !ownIds.has(String(id)))
              leaks.push(`${owner.label} ${list.operationId}?${query}: row ${String(id)} of another owner`);
            for (const other of others) {
              if (text.includes(other.world.tag)) leaks.push(`${owner.label} ${list.operationId}?${query}: a row names ${other.label}: ${text.slice(0, 200)}`);
            }
          }
        }
      }
    }
    expect(leaks).toEqual([]);
    expect(calls).toBeGreaterThan(owners.length * lists.length);
  }, 300_000);

  it('shows each owner its own rows (so the check above is not vacuous)', async () => {
    const empty: string[] = [];
    for (const owner of owners) {
      for (const list of lists) {
        const response = await call(platform.app, 'GET', `${owner.world.fillPath(list.template)}?limit=200`, { key: owner.key });
        if (response.statusCode === 200 && response.json().data.length === 0) empty.push(`${owner.label} ${list.operationId}`);
      }
    }
    // Live mode has no payments without Stripe and no social accounts or posts (sandbox accounts
    // connect with test keys only); SEO pages exist only once a crawl has read a real server (the
    // world makes no outbound requests); every other list shows the owner's world.
    expect(empty.filter((entry) => !/-live .*(payments|social)/i.test(entry) && !/ seoListPages$/.test(entry))).toEqual([]);
  });
});
