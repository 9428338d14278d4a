import type { Mode } from '../../db/types.js';

export const USER_STATUSES = ['active', 'disabled'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

interface Owned {
  tenant_id: string;
  mode: Mode;
}

export interface CustomerAuthUsersTable extends Owned {
  id: string;
  email: string;
  name: string | null;
  profile_picture_url: string | null;
  status: UserStatus;
  email_verified_at: Date | null;
  password_hash: string | null;
  mfa_enabled: boolean;
  mfa_enabled_at: Date | null;
  totp_secret: string | null;
  totp_pending_secret: string | null;
  totp_last_step: number | null;
  last_login_at: Date | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export interface CustomerAuthSessionsTable extends Owned {
  jti: string;
  user_id: string;
  token_hash: string;
  issued_at: Date;
  expires_at: Date;
  last_used_at: Date | null;
}

export interface CustomerAuthChallengesTable extends Owned {
  id: string;
  user_id: string;
  token_hash: string;
  failed_attempts: number;
  expires_at: Date;
  used_at: Date | null;
  created_at: Date;
}

export interface CustomerAuthEmailVerificationsTable extends Owned {
  id: string;
  user_id: string;
  email: string;
  token_hash: string;
  expires_at: Date;
  used_at: Date | null;
  created_at: Date;
}

export interface CustomerAuthRecoveryCodesTable extends Owned {
  id: string;
  user_id: string;
  code_hash: string;
  used_at: Date | null;
  created_at: Date;
}

export interface CustomerAuthLoginFailuresTable extends Owned {
  id: string;
  email_key: string;
  failed_at: Date;
}

export interface CustomerAuthTables {
  customer_auth_users: CustomerAuthUsersTable;
  customer_auth_sessions: CustomerAuthSessionsTable;
  customer_auth_challenges: CustomerAuthChallengesTable;
  customer_auth_email_verifications: CustomerAuthEmailVerificationsTable;
  customer_auth_recovery_codes: CustomerAuthRecoveryCodesTable;
  customer_auth_login_failures: CustomerAuthLoginFailuresTable;
}
