import { sql, type Kysely } from 'kysely';
import { serviceDb, type Db } from '../../db/database.js';
import { ownedTables, type Owner } from '../../db/owned.js';
import type { PageRequest } from '../../db/paging.js';
import type { Mode } from '../../db/types.js';
import { containsPattern } from '../../lib/search.js';
import type { AffiliatesTables, CommissionStatus, CommissionType, ConversionSource, PartnerStatus, ReferralSource } from './tables.js';

export type AffiliatesDb = Kysely<AffiliatesTables>;

export function affiliatesDb(db: Db): AffiliatesDb {
  return serviceDb(db);
}

const owned = ownedTables<AffiliatesTables>();
const programmes = owned('affiliates_programmes');
const tiers = owned('affiliates_tiers');
const partners = owned('affiliates_partners');
const referrals = owned('affiliates_referrals');
const conversions = owned('affiliates_conversions');

type Raw = string | number | bigint;
const int = (value: Raw): number => Number(value);
const maybeInt = (value: Raw | null): number | null => (value === null ? null : Number(value));
const maybeNumber = (value: string | number | null): number | null => (value === null ? null : Number(value));

/** A rate: the type and the value its type uses (percent with up to 2 decimals, or cents). */
export interface Rate {
  commission_type: CommissionType;
  commission_percent: number | null;
  commission_amount_cents: number | null;
}

// Programmes

const PROGRAMME_COLUMNS = [
  'id',
  'name',
  'commission_type',
  'commission_percent',
  'commission_amount_cents',
  'currency',
  'cookie_days',
  'recurring_months',
  'landing_url',
  'created_at',
  'updated_at',
] as const;

export interface ProgrammeRow extends Rate {
  id: string;
  name: string;
  currency: string;
  cookie_days: number;
  recurring_months: number;
  landing_url: string | null;
  created_at: Date;
  updated_at: Date;
}

type RawRate = { commission_type: CommissionType; commission_percent: string | number | null; commission_amount_cents: Raw | null };

function toRate<T extends RawRate>(row: T): Omit<T, 'commission_percent' | 'commission_amount_cents'> & Rate {
  return { ...row, commission_percent: maybeNumber(row.commission_percent), commission_amount_cents: maybeInt(row.commission_amount_cents) };
}

/** A rate as written: the percentage as numeric text. */
function rateValues<T extends Partial<Rate>>(row: T) {
  const { commission_percent, ...rest } = row;
  return { ...rest, ...(commission_percent !== undefined ? { commission_percent: commission_percent === null ? null : commission_percent.toFixed(2) } : {}) };
}

export type NewProgramme = Omit<ProgrammeRow, 'id'> & { id: string };

export async function insertProgramme(db: AffiliatesDb, owner: Owner, row: NewProgramme): Promise<ProgrammeRow> {
  return toRate(
    await programmes
      .insert(db, owner, rateValues(row) as never)
      .returning(PROGRAMME_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}

const programmeById = programmes.statement((from, values: { id: string }) => from.select(PROGRAMME_COLUMNS).where('id', '=', values.id));
const programmeByIdForUpdate = programmes.statement((from, values: { id: string }) => from.select(PROGRAMME_COLUMNS).where('id', '=', values.id).forUpdate());

export async function findProgramme(db: AffiliatesDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<ProgrammeRow | undefined> {
  const row = await (options.forUpdate ? programmeByIdForUpdate : programmeById).first(db, owner, { id });
  return row && toRate(row);
}

const programmesById = programmes.statement((from, values: { ids: string[] }) => from.select(PROGRAMME_COLUMNS).where((eb) => eb('id', '=', eb.fn.any(eb.val(values.ids)))));

export async function programmesByIds(db: AffiliatesDb, owner: Owner, ids: string[]): Promise<Map<string, ProgrammeRow>> {
  if (ids.length === 0) return new Map();
  const rows = await programmesById.all(db, owner, { ids });
  return new Map(rows.map((row) => [row.id, toRate(row)]));
}

const programmeList = programmes.list<Record<string, never>, ProgrammeRow>({
  filters: {},
  select: (from) => from.select(PROGRAMME_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc') as never,
});

export async function listProgrammes(db: AffiliatesDb, owner: Owner, page: PageRequest) {
  const { rows, total } = await programmeList.page(db, owner, {}, page);
  return { rows: rows.map((row) => toRate(row as unknown as RawRate & ProgrammeRow)), total };
}

export async function updateProgramme(db: AffiliatesDb, owner: Owner, id: string, changes: Partial<NewProgramme>): Promise<ProgrammeRow> {
  return toRate(
    await programmes
      .update(db, owner)
      .set(rateValues(changes) as never)
      .where('id', '=', id)
      .returning(PROGRAMME_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}

// Tiers

const TIER_COLUMNS = ['id', 'programme_id', 'name', 'commission_type', 'commission_percent', 'commission_amount_cents', 'created_at', 'updated_at'] as const;

export interface TierRow extends Rate {
  id: string;
  programme_id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

export async function insertTier(db: AffiliatesDb, owner: Owner, row: TierRow): Promise<TierRow> {
  return toRate(
    await tiers
      .insert(db, owner, rateValues(row) as never)
      .returning(TIER_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}

const tierById = tiers.statement((from, values: { id: string; programmeId: string }) =>
  from.select(TIER_COLUMNS).where('id', '=', values.id).where('programme_id', '=', values.programmeId),
);

export async function findTier(db: AffiliatesDb, owner: Owner, programmeId: string, id: string): Promise<TierRow | undefined> {
  const row = await tierById.first(db, owner, { id, programmeId });
  return row && toRate(row);
}

const tiersById = tiers.statement((from, values: { ids: string[] }) => from.select(TIER_COLUMNS).where((eb) => eb('id', '=', eb.fn.any(eb.val(values.ids)))));

export async function tiersByIds(db: AffiliatesDb, owner: Owner, ids: string[]): Promise<Map<string, TierRow>> {
  if (ids.length === 0) return new Map();
  const rows = await tiersById.all(db, owner, { ids });
  return new Map(rows.map((row) => [row.id, toRate(row)]));
}

export async function tierNamed(db: AffiliatesDb, owner: Owner, programmeId: string, name: string): Promise<string | undefined> {
  const row = await tiers
    .select(db, owner)
    .select('id')
    .where('programme_id', '=', programmeId)
    .where(sql<string>`lower(name)`, '=', name.toLowerCase())
    .executeTakeFirst();
  return row?.id;
}

const tierList = tiers.list<{ programmeId: string }, TierRow>({
  filters: { programmeId: (eb, programmeId) => eb('programme_id', '=', programmeId) },
  select: (from) => from.select(TIER_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc') as never,
});

export async function listTiers(db: AffiliatesDb, owner: Owner, programmeId: string, page: PageRequest) {
  const { rows, total } = await tierList.page(db, owner, { programmeId }, page);
  return { rows: rows.map((row) => toRate(row as unknown as RawRate & TierRow)), total };
}

export async function updateTier(db: AffiliatesDb, owner: Owner, id: string, changes: Partial<TierRow>): Promise<TierRow> {
  return toRate(
    await tiers
      .update(db, owner)
      .set(rateValues(changes) as never)
      .where('id', '=', id)
      .returning(TIER_COLUMNS)
      .executeTakeFirstOrThrow(),
  );
}

// Partners

const PARTNER_COLUMNS = [
  'id',
  'contact_id',
  'name',
  'email',
  'code',
  'commission_type',
  'commission_percent',
  'commission_amount_cents',
  'currency',
  'status',
  'programme_id',
  'tier_id',
  'cookie_days',
  'recurring_months',
  'portal_enabled',
  'notes',
  'lifetime_revenue_cents',
  'lifetime_commission_cents',
  'click_count',
  'conversion_count',
  'earned_pending_cents',
  'earned_approved_cents',
  'earned_paid_cents',
  'created_at',
  'updated_at',
] as const;

export interface PartnerRow {
  id: string;
  contact_id: string | null;
  name: string;
  email: string | null;
  code: string;
  /** The partner's own rate, or null when it follows its tier or programme. */
  commission_type: CommissionType | null;
  commission_percent: number | null;
  commission_amount_cents: number | null;
  currency: string;
  status: PartnerStatus;
  programme_id: string | null;
  tier_id: string | null;
  cookie_days: number | null;
  recurring_months: number | null;
  portal_enabled: boolean;
  notes: string | null;
  lifetime_revenue_cents: number;
  lifetime_commission_cents: number;
  click_count: number;
  conversion_count: number;
  earned_pending_cents: number;
  earned_approved_cents: number;
  earned_paid_cents: number;
  created_at: Date;
  updated_at: Date;
}

type RawPartner = Omit<
  PartnerRow,
  | 'commission_percent'
  | 'commission_amount_cents'
  | 'lifetime_revenue_cents'
  | 'lifetime_commission_cents'
  | 'click_count'
  | 'conversion_count'
  | 'earned_pending_cents'
  | 'earned_approved_cents'
  | 'earned_paid_cents'
> & {
  commission_percent: string | number | null;
  commission_amount_cents: Raw | null;
  lifetime_revenue_cents: Raw;
  lifetime_commission_cents: Raw;
  click_count: Raw;
  conversion_count: Raw;
  earned_pending_cents: Raw;
  earned_approved_cents: Raw;
  earned_paid_cents: Raw;
};

function toPartner(row: RawPartner): PartnerRow {
  return {
    ...row,
    commission_percent: maybeNumber(row.commission_percent),
    commission_amount_cents: maybeInt(row.commission_amount_cents),
    lifetime_revenue_cents: int(row.lifetime_revenue_cents),
    lifetime_commission_cents: int(row.lifetime_commission_cents),
    click_count: int(row.click_count),
    conversion_count: int(row.conversion_count),
    earned_pending_cents: int(row.earned_pending_cents),
    earned_approved_cents: int(row.earned_approved_cents),
    earned_paid_cents: int(row.earned_paid_cents),
  };
}

export type NewPartner = Omit<
  PartnerRow,
  | 'lifetime_revenue_cents'
  | 'lifetime_commission_cents'
  | 'click_count'
  | 'conversion_count'
  | 'earned_pending_cents'
  | 'earned_approved_cents'
  | 'earned_paid_cents'
  | 'commission_type'
> & { commission_type: CommissionType | null };

export const PARTNER_CODE_INDEX = 'affiliates_partners_code';

/** Inserts a partner; undefined when its code is taken in the tenant and mode. */
export async function insertPartner(db: AffiliatesDb, owner: Owner, row: NewPartner): Promise<PartnerRow | undefined> {
  const inserted = await partners
    .insert(db, owner, rateValues(row as never) as never)
    .onConflict((conflict) => conflict.constraint(PARTNER_CODE_INDEX).doNothing())
    .returning(PARTNER_COLUMNS)
    .executeTakeFirst();
  return inserted && toPartner(inserted);
}

const partnerById = partners.statement((from, values: { id: string }) => from.select(PARTNER_COLUMNS).where('id', '=', values.id));
const partnerByIdForUpdate = partners.statement((from, values: { id: string }) => from.select(PARTNER_COLUMNS).where('id', '=', values.id).forUpdate());
const partnerByCode = partners.statement((from, values: { code: string }) => from.select(PARTNER_COLUMNS).where('code', '=', values.code));

export async function findPartner(db: AffiliatesDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<PartnerRow | undefined> {
  const row = await (options.forUpdate ? partnerByIdForUpdate : partnerById).first(db, owner, { id });
  return row && toPartner(row);
}

export async function findPartnerByCode(db: AffiliatesDb, owner: Owner, code: string): Promise<PartnerRow | undefined> {
  const row = await partnerByCode.first(db, owner, { code });
  return row && toPartner(row);
}

/** Partners of any owner with this code (the public referral link names no tenant). */
export async function partnersWithCode(
  db: AffiliatesDb,
  code: string,
): Promise<Array<{ id: string; tenant_id: string; mode: Mode; programme_id: string | null; status: PartnerStatus }>> {
  return partners.acrossOwners(db).select(['id', 'programme_id', 'status']).where('code', '=', code).limit(20).execute();
}

const partnerList = partners.list<{ status?: PartnerStatus; programmeId?: string; pattern?: string }, RawPartner>({
  filters: {
    status: (eb, status) => eb('status', '=', status),
    programmeId: (eb, programmeId) => eb('programme_id', '=', programmeId),
    pattern: (eb, pattern) => eb.or([eb('name', 'ilike', pattern), eb('email', 'ilike', pattern), eb('code', 'ilike', pattern)]),
  },
  select: (from) => from.select(PARTNER_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listPartners(db: AffiliatesDb, owner: Owner, filters: { status?: PartnerStatus; programmeId?: string; search?: string }, page: PageRequest) {
  const { rows, total } = await partnerList.page(
    db,
    owner,
    { status: filters.status, programmeId: filters.programmeId, pattern: filters.search ? containsPattern(filters.search) : undefined },
    page,
  );
  return { rows: rows.map(toPartner), total };
}

/** Updates a partner; undefined when the new code is taken. */
export async function updatePartner(db: AffiliatesDb, owner: Owner, id: string, changes: Partial<NewPartner>): Promise<PartnerRow> {
  const row = await partners
    .update(db, owner)
    .set(rateValues(changes as never) as never)
    .where('id', '=', id)
    .returning(PARTNER_COLUMNS)
    .executeTakeFirstOrThrow();
  return toPartner(row);
}

export async function codeTaken(db: AffiliatesDb, owner: Owner, code: string, exceptId?: string): Promise<boolean> {
  let query = partners.select(db, owner).select('id').where('code', '=', code);
  if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
  return (await query.executeTakeFirst()) !== undefined;
}

/** Changes to a partner's running totals, applied as `x = x + n` in one statement. */
export interface TotalsDelta {
  revenue?: number;
  commission?: number;
  clicks?: number;
  conversions?: number;
  pending?: number;
  approved?: number;
  paid?: number;
}

export async function addToTotals(db: AffiliatesDb, owner: Owner, id: string, delta: TotalsDelta): Promise<void> {
  const add = (column: string, by: number | undefined) => (by ? { [column]: sql`${sql.ref(column)} + ${by}` } : {});
  const set = {
    ...add('lifetime_revenue_cents', delta.revenue),
    ...add('lifetime_commission_cents', delta.commission),
    ...add('click_count', delta.clicks),
    ...add('conversion_count', delta.conversions),
    ...add('earned_pending_cents', delta.pending),
    ...add('earned_approved_cents', delta.approved),
    ...add('earned_paid_cents', delta.paid),
  };
  if (Object.keys(set).length === 0) return;
  await partners
    .update(db, owner)
    .set(set as never)
    .where('id', '=', id)
    .execute();
}

// Referrals

const REFERRAL_COLUMNS = [
  'id',
  'affiliate_id',
  'source',
  'visitor_id',
  'contact_id',
  'email',
  'customer_ref',
  'clicked_at',
  'expires_at',
  'attributed_at',
  'created_at',
  'updated_at',
] as const;

export interface ReferralRow {
  id: string;
  affiliate_id: string;
  source: ReferralSource;
  visitor_id: string | null;
  contact_id: string | null;
  email: string | null;
  customer_ref: string | null;
  clicked_at: Date | null;
  expires_at: Date | null;
  attributed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertReferral(db: AffiliatesDb, owner: Owner, row: ReferralRow): Promise<ReferralRow> {
  return await referrals.insert(db, owner, row).returning(REFERRAL_COLUMNS).executeTakeFirstOrThrow();
}

const referralById = referrals.statement((from, values: { id: string }) => from.select(REFERRAL_COLUMNS).where('id', '=', values.id));
const referralByIdForUpdate = referrals.statement((from, values: { id: string }) => from.select(REFERRAL_COLUMNS).where('id', '=', values.id).forUpdate());

export async function findReferral(db: AffiliatesDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<ReferralRow | undefined> {
  return await (options.forUpdate ? referralByIdForUpdate : referralById).first(db, owner, { id });
}

/** The latest attributed referral of a CRM contact. */
export async function latestReferralOfContact(db: AffiliatesDb, owner: Owner, contactId: string): Promise<ReferralRow | undefined> {
  return await referrals
    .select(db, owner)
    .select(REFERRAL_COLUMNS)
    .where('contact_id', '=', contactId)
    .orderBy('attributed_at', 'desc')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function updateReferral(db: AffiliatesDb, owner: Owner, id: string, changes: Partial<ReferralRow>): Promise<ReferralRow> {
  return await referrals
    .update(db, owner)
    .set(changes as never)
    .where('id', '=', id)
    .returning(REFERRAL_COLUMNS)
    .executeTakeFirstOrThrow();
}

const referralList = referrals.list<{ affiliateId?: string }, ReferralRow>({
  filters: { affiliateId: (eb, affiliateId) => eb('affiliate_id', '=', affiliateId) },
  select: (from) => from.select(REFERRAL_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export function listReferrals(db: AffiliatesDb, owner: Owner, filters: { affiliateId?: string }, page: PageRequest) {
  return referralList.page(db, owner, filters, page);
}

// Conversions

const CONVERSION_COLUMNS = [
  'id',
  'affiliate_id',
  'referral_id',
  'source',
  'external_id',
  'subscription_id',
  'period',
  'amount_cents',
  'currency',
  'commission_cents',
  'status',
  'void_reason',
  'approved_at',
  'paid_at',
  'voided_at',
  'created_at',
  'updated_at',
] as const;

export interface ConversionRow {
  id: string;
  affiliate_id: string;
  referral_id: string | null;
  source: ConversionSource;
  external_id: string | null;
  subscription_id: string | null;
  period: number | null;
  amount_cents: number;
  currency: string;
  commission_cents: number;
  status: CommissionStatus;
  void_reason: string | null;
  approved_at: Date | null;
  paid_at: Date | null;
  voided_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

type RawConversion = Omit<ConversionRow, 'amount_cents' | 'commission_cents'> & { amount_cents: Raw; commission_cents: Raw };

function toConversion(row: RawConversion): ConversionRow {
  return { ...row, amount_cents: int(row.amount_cents), commission_cents: int(row.commission_cents) };
}

/** Inserts a conversion; undefined when its external id (per source) or subscription period is already recorded. */
export async function insertConversion(db: AffiliatesDb, owner: Owner, row: ConversionRow): Promise<ConversionRow | undefined> {
  const inserted = await conversions
    .insert(db, owner, row)
    .onConflict((conflict) => conflict.doNothing())
    .returning(CONVERSION_COLUMNS)
    .executeTakeFirst();
  return inserted && toConversion(inserted);
}

const conversionById = conversions.statement((from, values: { id: string }) => from.select(CONVERSION_COLUMNS).where('id', '=', values.id));
const conversionByIdForUpdate = conversions.statement((from, values: { id: string }) => from.select(CONVERSION_COLUMNS).where('id', '=', values.id).forUpdate());

export async function findConversion(db: AffiliatesDb, owner: Owner, id: string, options: { forUpdate?: boolean } = {}): Promise<ConversionRow | undefined> {
  const row = await (options.forUpdate ? conversionByIdForUpdate : conversionById).first(db, owner, { id });
  return row && toConversion(row);
}

export async function findConversionByExternal(db: AffiliatesDb, owner: Owner, source: ConversionSource, externalId: string): Promise<ConversionRow | undefined> {
  const row = await conversions.select(db, owner).select(CONVERSION_COLUMNS).where('source', '=', source).where('external_id', '=', externalId).executeTakeFirst();
  return row && toConversion(row);
}

/** The highest period recorded for a subscription (0 when none). */
export async function lastPeriod(db: AffiliatesDb, owner: Owner, subscriptionId: string): Promise<number> {
  const row = await conversions
    .select(db, owner)
    .select(sql<number | null>`max(period)`.as('period'))
    .where('subscription_id', '=', subscriptionId)
    .executeTakeFirst();
  return row?.period === null || row?.period === undefined ? 0 : Number(row.period);
}

const conversionList = conversions.list<{ affiliateId?: string; status?: CommissionStatus; subscriptionId?: string }, RawConversion>({
  filters: {
    affiliateId: (eb, affiliateId) => eb('affiliate_id', '=', affiliateId),
    status: (eb, status) => eb('status', '=', status),
    subscriptionId: (eb, subscriptionId) => eb('subscription_id', '=', subscriptionId),
  },
  select: (from) => from.select(CONVERSION_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'),
});

export async function listConversions(db: AffiliatesDb, owner: Owner, filters: { affiliateId?: string; status?: CommissionStatus; subscriptionId?: string }, page: PageRequest) {
  const { rows, total } = await conversionList.page(db, owner, filters, page);
  return { rows: rows.map(toConversion), total };
}

export async function updateConversion(db: AffiliatesDb, owner: Owner, id: string, changes: Partial<ConversionRow>): Promise<ConversionRow> {
  const row = await conversions
    .update(db, owner)
    .set(changes as never)
    .where('id', '=', id)
    .returning(CONVERSION_COLUMNS)
    .executeTakeFirstOrThrow();
  return toConversion(row);
}

// Platform events the sales reader has handled, owned by the event's tenant and mode.

const seenEvents = owned('affiliates_seen_events');
const seenById = seenEvents.statement((from, values: { id: string }) => from.select('event_id').where('event_id', '=', values.id));

/** Where the reader got to: the newest event it handled, of any owner. */
export async function lastSeenEventAt(db: AffiliatesDb): Promise<Date | undefined> {
  const row = await seenEvents
    .acrossOwners(db)
    .clearSelect()
    .select((eb) => eb.fn.max('event_created_at').as('newest'))
    .executeTakeFirst();
  const newest = (row as { newest: Date | string | null } | undefined)?.newest;
  return newest === null || newest === undefined ? undefined : new Date(newest);
}

export async function wasSeen(db: AffiliatesDb, owner: Owner, eventId: string): Promise<boolean> {
  return (await seenById.first(db, owner, { id: eventId })) !== undefined;
}

/** Marks an event handled; false when another process (or an earlier run) already did. */
export async function markSeen(db: AffiliatesDb, owner: Owner, eventId: string, eventCreatedAt: Date, at: Date): Promise<boolean> {
  const row = await seenEvents
    .insert(db, owner, { event_id: eventId, event_created_at: eventCreatedAt, seen_at: at })
    .onConflict((conflict) => conflict.column('event_id').doNothing())
    .returning('event_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Forgets handled events recorded before `before` (older than the reader ever reads again). */
export async function forgetSeenBefore(db: AffiliatesDb, before: Date): Promise<void> {
  await seenEvents.deleteAcrossOwners(db).where('event_created_at', '<', before).execute();
}
