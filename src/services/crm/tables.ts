import type { Mode } from '../../db/types.js';

export interface CrmCompaniesTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  name: string;
  domain: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface CrmContactsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  name: string;
  email: string | null;
  phone: string | null;
  company_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface CrmTables {
  crm_companies: CrmCompaniesTable;
  crm_contacts: CrmContactsTable;
}
