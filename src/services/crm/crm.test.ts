import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, startTestPlatform, type TestPlatform } from '../../../test/harness.js';
import { describeRouteSecurity } from '../../../test/security-suite.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(() => platform.close());

const BASE = '/api/v1/services/crm';

async function createContact(key: string, body: Record<string, unknown> = { name: 'Ada Lovelace' }) {
  const response = await call(platform.app, 'POST', `${BASE}/contacts`, { key, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

async function createCompany(key: string, body: Record<string, unknown> = { name: 'Analytical Engines' }) {
  const response = await call(platform.app, 'POST', `${BASE}/companies`, { key, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

describe('contacts', () => {
  it('creates a contact with a trimmed name and lower-cased email', async () => {
    const key = await (await platform.newTenant()).key();
    const contact = await createContact(key, { name: '  Ada Lovelace ', email: 'Ada@Example.COM', phone: '+44 20 7946 0958' });
    expect(contact).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      phone: '+44 20 7946 0958',
      company_id: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: contact.created_at,
    });
    expect((await call(platform.app, 'GET', `${BASE}/contacts/${contact.id}`, { key })).json().data).toEqual(contact);
  });

  it('links a contact to a company of the same tenant only', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const company = await createCompany(key);
    expect((await createContact(key, { name: 'Ada', company_id: company.id })).company_id).toBe(company.id);

    const strangerCompany = await createCompany(await (await platform.newTenant()).key());
    const error = expectError(await call(platform.app, 'POST', `${BASE}/contacts`, { key, body: { name: 'Ada', company_id: strangerCompany.id } }), 400, 'validation_failed');
    expect(error.details[0]).toMatchObject({ path: 'company_id', code: 'not_found' });
    expectError(await call(platform.app, 'POST', `${BASE}/contacts`, { key, body: { name: 'Ada', company_id: 'nope' } }), 400, 'validation_failed');
  });

  it('filters the list by search and company', async () => {
    const key = await (await platform.newTenant()).key();
    const company = await createCompany(key);
    await createContact(key, { name: 'Ada Lovelace', email: 'ada@example.com', company_id: company.id });
    await createContact(key, { name: 'Grace Hopper', email: 'grace@navy.example' });
    const names = async (query: string) => (await call(platform.app, 'GET', `${BASE}/contacts?${query}`, { key })).json().data.map((row: { name: string }) => row.name);
    expect(await names('search=LOVE')).toEqual(['Ada Lovelace']);
    expect(await names('search=navy')).toEqual(['Grace Hopper']);
    expect(await names('search=%25')).toEqual([]);
    expect(await names(`company_id=${company.id}`)).toEqual(['Ada Lovelace']);
    expectError(await call(platform.app, 'GET', `${BASE}/contacts?company_id=nope`, { key }), 400, 'validation_failed');
  });

  it('updates only the fields sent, and null clears a field', async () => {
    const key = await (await platform.newTenant()).key();
    const contact = await createContact(key, { name: 'Ada', email: 'ada@example.com', phone: '123 456' });
    platform.clock.advance(10);
    const response = await call(platform.app, 'PATCH', `${BASE}/contacts/${contact.id}`, { key, body: { email: null, name: 'Ada L.' } });
    expect(response.statusCode).toBe(200);
    const updated = response.json().data;
    expect(updated).toMatchObject({ name: 'Ada L.', email: null, phone: '123 456' });
    expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(contact.updated_at));
  });

  it('refuses a stale expected_updated_at with 409 stale_update and the current value', async () => {
    const key = await (await platform.newTenant()).key();
    const contact = await createContact(key);
    const first = await call(platform.app, 'PATCH', `${BASE}/contacts/${contact.id}`, { key, body: { name: 'One', expected_updated_at: contact.updated_at } });
    expect(first.statusCode).toBe(200);
    const current = first.json().data.updated_at;
    expect(current).not.toBe(contact.updated_at); // even within the same millisecond

    const stale = await call(platform.app, 'PATCH', `${BASE}/contacts/${contact.id}`, { key, body: { name: 'Two', expected_updated_at: contact.updated_at } });
    const error = expectError(stale, 409, 'stale_update');
    expect(error.details[0]).toMatchObject({ path: 'expected_updated_at', current_updated_at: current });
    expect((await call(platform.app, 'GET', `${BASE}/contacts/${contact.id}`, { key })).json().data.name).toBe('One');
  });

  it('refuses bad input with validation_failed', async () => {
    const key = await (await platform.newTenant()).key();
    const contact = await createContact(key);
    for (const body of [{ name: '   ' }, { name: 'x'.repeat(201) }, { name: 'Ada', phone: 'call me' }, { name: 'Ada', email: 'nope' }]) {
      expectError(await call(platform.app, 'POST', `${BASE}/contacts`, { key, body }), 400, 'validation_failed');
    }
    for (const body of [{ name: null }, { id: 'x' }, { expected_updated_at: 'yesterday' }]) {
      expectError(await call(platform.app, 'PATCH', `${BASE}/contacts/${contact.id}`, { key, body }), 400, 'validation_failed');
    }
  });
});

describe('companies', () => {
  it('creates, reads, lists and updates a company with a lower-cased domain', async () => {
    const key = await (await platform.newTenant()).key();
    const company = await createCompany(key, { name: 'Acme', domain: 'Acme.Example' });
    expect(company).toMatchObject({ name: 'Acme', domain: 'acme.example' });
    expect((await call(platform.app, 'GET', `${BASE}/companies/${company.id}`, { key })).json().data).toEqual(company);
    expect((await call(platform.app, 'GET', `${BASE}/companies?search=acme`, { key })).json().meta.total).toBe(1);
    const updated = await call(platform.app, 'PATCH', `${BASE}/companies/${company.id}`, { key, body: { domain: null, expected_updated_at: company.updated_at } });
    expect(updated.json().data.domain).toBeNull();
    expectError(await call(platform.app, 'POST', `${BASE}/companies`, { key, body: { name: 'Acme', domain: 'not a domain' } }), 400, 'validation_failed');
  });
});

describe('exported interface for other services', () => {
  it('finds contacts and companies by id within the caller tenant and mode only', async () => {
    const tenant = await platform.newTenant();
    const key = await tenant.key();
    const contact = await createContact(key);
    const { crmModule } = await import('./index.js');
    const crm = crmModule.create(platform.serviceDeps());
    const ctx = { tenantId: tenant.id, mode: 'test' as const, keyId: 'k', scopes: ['*'], requestId: 'r', now: new Date() };
    expect([...(await crm.contactsById(ctx, [contact.id, 'not-a-uuid'])).keys()]).toEqual([contact.id]);
    expect((await crm.contactsById({ ...ctx, mode: 'live' }, [contact.id])).size).toBe(0);
  });
});

const contactRoutes = [
  { method: 'POST', scope: 'service.crm.manage', url: () => `${BASE}/contacts`, body: () => ({ name: 'Ada' }), addressesOneRow: false },
  { method: 'GET', scope: 'service.crm.view', url: () => `${BASE}/contacts`, addressesOneRow: false },
  { method: 'POST', scope: 'service.crm.manage', url: () => `${BASE}/companies`, body: () => ({ name: 'Acme' }), addressesOneRow: false },
  { method: 'GET', scope: 'service.crm.view', url: () => `${BASE}/companies`, addressesOneRow: false },
] as const;
for (const route of contactRoutes) describeRouteSecurity(() => platform, route);

describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.crm.view',
  setup: (key) => createContact(key),
  url: (contact: { id: string }) => `${BASE}/contacts/${contact.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.crm.manage',
  setup: (key) => createContact(key),
  url: (contact: { id: string }) => `${BASE}/contacts/${contact.id}`,
  body: () => ({ name: 'Renamed' }),
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'GET',
  scope: 'service.crm.view',
  setup: (key) => createCompany(key),
  url: (company: { id: string }) => `${BASE}/companies/${company.id}`,
  addressesOneRow: true,
});
describeRouteSecurity(() => platform, {
  method: 'PATCH',
  scope: 'service.crm.manage',
  setup: (key) => createCompany(key),
  url: (company: { id: string }) => `${BASE}/companies/${company.id}`,
  body: () => ({ name: 'Renamed' }),
  addressesOneRow: true,
});
