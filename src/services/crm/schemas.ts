import { Type, type Static } from 'typebox';
import { ExpectedUpdatedAt } from '../../platform/concurrency.js';
import { ListQuery } from '../../platform/pagination/index.js';
import { Nullable, Timestamp, Uuid } from '../../platform/http/schemas.js';

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name; trimmed.' });
const Email = Type.String({ format: 'email', maxLength: 320, description: 'Stored lower-cased.', examples: ['ada@example.com'] });
const Phone = Type.String({
  minLength: 3,
  maxLength: 40,
  pattern: '^\\+?[0-9 ()./-]+$',
  description: 'Digits with optional +, spaces, dots, dashes and brackets.',
  examples: ['+44 20 7946 0958'],
});
const Domain = Type.String({ format: 'hostname', maxLength: 253, description: 'Stored lower-cased.', examples: ['example.com'] });

export const Company = Type.Object(
  {
    id: Uuid,
    name: Type.String({ maxLength: 200 }),
    domain: Nullable(Type.String({ maxLength: 253 })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Company', additionalProperties: false },
);

export const Contact = Type.Object(
  {
    id: Uuid,
    name: Type.String({ maxLength: 200 }),
    email: Nullable(Type.String({ maxLength: 320 })),
    phone: Nullable(Type.String({ maxLength: 40 })),
    company_id: Nullable(Uuid),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Contact', additionalProperties: false },
);

export const CreateCompanyBody = Type.Object(
  { name: Name, domain: Type.Optional(Nullable(Domain)) },
  { additionalProperties: false, examples: [{ name: 'Acme Ltd', domain: 'acme.example' }] },
);

export const UpdateCompanyBody = Type.Object(
  { name: Type.Optional(Name), domain: Type.Optional(Nullable(Domain)), expected_updated_at: ExpectedUpdatedAt },
  { additionalProperties: false },
);

export const CreateContactBody = Type.Object(
  {
    name: Name,
    email: Type.Optional(Nullable(Email)),
    phone: Type.Optional(Nullable(Phone)),
    company_id: Type.Optional(Nullable(Type.String({ ...Uuid, description: 'A company of the same tenant and mode.' }))),
  },
  { additionalProperties: false, examples: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] },
);

export const UpdateContactBody = Type.Object(
  {
    name: Type.Optional(Name),
    email: Type.Optional(Nullable(Email)),
    phone: Type.Optional(Nullable(Phone)),
    company_id: Type.Optional(Nullable(Uuid)),
    expected_updated_at: ExpectedUpdatedAt,
  },
  { additionalProperties: false },
);

const Search = Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive match anywhere in name or email/domain.' }));

export const ListCompaniesQuery = ListQuery({ search: Search });
export const ListContactsQuery = ListQuery({ search: Search, company_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36 })) });

export type CompanyView = Static<typeof Company>;
export type ContactView = Static<typeof Contact>;
export type CreateCompanyInput = Static<typeof CreateCompanyBody>;
export type UpdateCompanyInput = Static<typeof UpdateCompanyBody>;
export type CreateContactInput = Static<typeof CreateContactBody>;
export type UpdateContactInput = Static<typeof UpdateContactBody>;
