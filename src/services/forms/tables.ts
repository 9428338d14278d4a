import type { ColumnType, Generated } from 'kysely';
import type { Mode } from '../../db/types.js';
import type { FieldDefinition } from './fields.js';

export type FormStatus = 'draft' | 'published' | 'closed';

/** JSON columns are written as JSON text and read back parsed, on both database backends. */
type Json<T> = ColumnType<T, string, string>;

export interface FormsFormsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  name: string;
  slug: string;
  description: string | null;
  status: FormStatus;
  fields: Json<FieldDefinition[]>;
  success_message: string | null;
  redirect_url: string | null;
  submission_count: Generated<number>;
  unread_count: Generated<number>;
  created_at: Date;
  updated_at: Date;
}

export interface FormsSubmissionsTable {
  id: string;
  tenant_id: string;
  mode: Mode;
  form_id: string;
  data: Json<Record<string, unknown>>;
  metadata: Json<Record<string, unknown>>;
  read: boolean;
  read_at: Date | null;
  submitted_at: Date;
}

export interface FormsTables {
  forms_forms: FormsFormsTable;
  forms_submissions: FormsSubmissionsTable;
}
