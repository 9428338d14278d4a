import { invalidField } from '../../platform/errors/app-error.js';
import type { PartnerRow, ProgrammeRow, Rate, TierRow } from './repository.js';
import type { CommissionType } from './tables.js';

/** Days a click credits its partner when neither partner nor programme says otherwise. */
export const DEFAULT_COOKIE_DAYS = 30;
/** Billing periods that earn when neither partner nor programme says otherwise: every payment for life. */
export const DEFAULT_RECURRING_MONTHS = -1;
export const DEFAULT_CURRENCY = 'USD';

export type RateSource = 'partner' | 'tier' | 'programme';

/** The rate a partner earns now: its own, else its tier's, else its programme's. */
export function effectiveRate(partner: PartnerRow, programme: ProgrammeRow | undefined, tier: TierRow | undefined): Rate & { source: RateSource } {
  if (partner.commission_type !== null) {
    return {
      commission_type: partner.commission_type,
      commission_percent: partner.commission_percent,
      commission_amount_cents: partner.commission_amount_cents,
      source: 'partner',
    };
  }
  if (tier) return { ...pickRate(tier), source: 'tier' };
  if (programme) return { ...pickRate(programme), source: 'programme' };
  // Unreachable: a partner without its own rate always has a programme (a foreign key keeps it).
  return { commission_type: 'percent', commission_percent: 0, commission_amount_cents: null, source: 'partner' };
}

function pickRate(rate: Rate): Rate {
  return { commission_type: rate.commission_type, commission_percent: rate.commission_percent, commission_amount_cents: rate.commission_amount_cents };
}

export function sameRate(a: Rate, b: Rate): boolean {
  return (
    a.commission_type === b.commission_type &&
    (a.commission_type === 'percent' ? a.commission_percent === b.commission_percent : a.commission_amount_cents === b.commission_amount_cents)
  );
}

/** Commission of a sale: a percentage rounded half up to the cent, or the fixed amount. */
export function commissionOf(rate: Rate, amountCents: number): number {
  if (rate.commission_type === 'amount') return rate.commission_amount_cents ?? 0;
  const hundredths = Math.round((rate.commission_percent ?? 0) * 100);
  // amount <= 1e11 and hundredths <= 1e4: the product stays below 2^53.
  return Math.floor((amountCents * hundredths + 5000) / 10000);
}

/** Whether billing period `period` (from 1) of a subscription earns under `recurringMonths`. */
export function periodEarns(recurringMonths: number, period: number): boolean {
  if (recurringMonths < 0) return true;
  return period <= Math.max(1, recurringMonths);
}

/**
 * A rate as sent (type plus the value its type uses), checked: the value of the type is
 * required, the other must be absent or null, a percentage has at most 2 decimals.
 */
export function readRate(input: { commission_type?: CommissionType | null; commission_percent?: number | null; commission_amount_cents?: number | null }, current?: Rate): Rate {
  const type = input.commission_type ?? current?.commission_type;
  if (!type) throw invalidField('commission_type', 'required', 'commission_type is required (percent or amount).');
  const sameType = current?.commission_type === type;
  const percent = input.commission_percent !== undefined ? input.commission_percent : sameType ? (current?.commission_percent ?? null) : null;
  const amount = input.commission_amount_cents !== undefined ? input.commission_amount_cents : sameType ? (current?.commission_amount_cents ?? null) : null;
  if (type === 'percent') {
    if (percent === null) throw invalidField('commission_percent', 'required', 'commission_percent is required when commission_type is percent.');
    if (Math.abs(Math.round(percent * 100) - percent * 100) > 1e-6) throw invalidField('commission_percent', 'too_precise', 'At most 2 decimals.');
    if (input.commission_amount_cents !== undefined && input.commission_amount_cents !== null) {
      throw invalidField('commission_amount_cents', 'not_allowed', 'commission_amount_cents is used only when commission_type is amount.');
    }
    return { commission_type: 'percent', commission_percent: Math.round(percent * 100) / 100, commission_amount_cents: null };
  }
  if (amount === null) throw invalidField('commission_amount_cents', 'required', 'commission_amount_cents is required when commission_type is amount.');
  if (input.commission_percent !== undefined && input.commission_percent !== null) {
    throw invalidField('commission_percent', 'not_allowed', 'commission_percent is used only when commission_type is percent.');
  }
  return { commission_type: 'amount', commission_percent: null, commission_amount_cents: amount };
}

/** recurring_months as sent: any negative number means every payment for life, and is kept as sent. */
export function normalizeRecurring(value: number | null | undefined): number | null | undefined {
  return value;
}
