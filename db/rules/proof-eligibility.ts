/**
 * The one eligibility evaluator: item reads, exports, placements, publish, renders, media and quote
 * cards all ask it, so a use is never eligible in one place and not in another. Pure and
 * deterministic: callers load the rows (a render loads them all in one query) and pass the clock.
 */

export const PROOF_CHANNELS = [
  'website', 'in_app', 'email', 'sales', 'social_organic', 'paid_ads', 'case_study', 'press',
] as const;

export const PLACEMENT_TYPES = ['wall', 'widget', 'slot', 'case_study', 'campaign', 'sales_asset'] as const;

/** Placement types that show a quote (words only), whatever the item was captured as. */
const QUOTE_ONLY_TYPES = new Set(['widget', 'slot']);

export interface EligibilityItem {
  status: string;
  productId?: string;
  type?: string;
  approvedPublicVersionId: string | null;
  renderHold: boolean;
  revokedAt: Date | null;
  /** Paused by the customer (control link): renders stop until they resume. */
  customerPausedAt?: Date | null;
  incentive: { offered: boolean; description?: string };
  verificationState: string;
}

export interface EligibilityVersion {
  id: string;
  approvalState: string;
  locale: string | null;
  /** The original's locale: a version in another language is a translation. */
  originalLocale: string | null;
  rating?: number | null;
}

export interface EligibilityGrant {
  id: string;
  state: string;
  approvedVersionId: string;
  displayMode?: string;
  channels: string[];
  identityFields: string[];
  products?: { all?: boolean; ids?: string[] };
  media?: string[];
  paidUseAllowed: boolean;
  translationAllowed?: boolean;
  geography?: string[];
  validUntil: Date | null;
  customerApprovedWording: boolean;
  createdAt: Date;
}

export interface EligibilityRevocation {
  resolutionState: string;
}

/** A placement's own rules on top of consent; every property optional. */
export interface EligibilityPolicy {
  requireVerified?: boolean;
  excludeIncentivized?: boolean;
  minRating?: number;
  requiredIdentityFields?: string[];
  paidUse?: boolean;
}

export interface EligibilityContext {
  channel: string;
  placementType?: string;
  /** ISO 3166-1 alpha-2 country where the use is shown; null: anywhere. */
  geography?: string | null;
  /** BCP 47 tag of the placement; null: any language. */
  locale?: string | null;
  productId?: string | null;
  policy?: EligibilityPolicy;
  /** The use is paid (besides the paid_ads channel, which always is). */
  paidUse?: boolean;
  /** The media the use shows, when the use itself decides it (a quote card shows words). */
  media?: string;
  now: Date;
}

export interface EligibilityInput {
  item: EligibilityItem;
  /** The version to show: a placement's pinned one, or the public one; null when there is none. */
  version: EligibilityVersion | null;
  grants: EligibilityGrant[];
  revocations?: EligibilityRevocation[];
}

export interface ChannelEligibility {
  channel: string;
  eligible: boolean;
  reasons: string[];
  grantId: string | null;
  identityFields: string[];
  disclosure: string | null;
  labels: string[];
}

const language = (tag: string) => tag.split('-')[0].toLowerCase();

/** What the use shows: a quote shows words; a wall or campaign shows the story as captured. */
export function mediaNeeded(itemType: string | undefined, placementType: string | undefined): string {
  if (placementType && QUOTE_ONLY_TYPES.has(placementType)) return 'text';
  return itemType === 'audio' || itemType === 'video' || itemType === 'image' ? itemType : 'text';
}

function itemReasons({ item, version, revocations = [] }: EligibilityInput, ctx: EligibilityContext): string[] {
  const reasons: string[] = [];
  // Revocation is final and wins over everything, so it is named first.
  if (item.revokedAt || item.status === 'revoked' || revocations.some((r) => r.resolutionState === 'completed')) reasons.push('revoked');
  else if (item.renderHold || revocations.some((r) => r.resolutionState !== 'completed')) reasons.push('revocation_pending');
  if (item.customerPausedAt) reasons.push('paused_by_customer');
  if (item.status === 'deleted') reasons.push('deleted');
  if (!item.approvedPublicVersionId) reasons.push('not_approved');
  if (version && version.approvalState !== 'approved') reasons.push('version_not_approved');
  else if (version && item.approvedPublicVersionId && version.id !== item.approvedPublicVersionId) reasons.push('version_not_public');
  if (version?.locale && ctx.locale && language(version.locale) !== language(ctx.locale)) reasons.push('locale_mismatch');
  const policy = ctx.policy ?? {};
  if (policy.requireVerified && item.verificationState !== 'verified_customer') reasons.push('policy_requires_verified');
  if (policy.excludeIncentivized && item.incentive.offered) reasons.push('policy_excludes_incentivized');
  if (policy.minRating !== undefined && (version?.rating ?? -1) < policy.minRating) reasons.push('policy_rating_below_minimum');
  return reasons;
}

function grantReasons(grant: EligibilityGrant, input: EligibilityInput, ctx: EligibilityContext): string[] {
  const { item, version } = input;
  const reasons: string[] = [];
  const shownVersionId = version?.id ?? item.approvedPublicVersionId;
  if (grant.state !== 'active') reasons.push('consent_revoked');
  if (grant.validUntil && grant.validUntil.getTime() <= ctx.now.getTime()) reasons.push('consent_expired');
  if (!grant.channels.includes(ctx.channel)) reasons.push('channel_not_consented');
  if (ctx.productId && grant.products && !grant.products.all && !(grant.products.ids ?? []).includes(ctx.productId)) {
    reasons.push('product_not_consented');
  }
  if (grant.media && !grant.media.includes(ctx.media ?? mediaNeeded(item.type, ctx.placementType))) reasons.push('media_not_consented');
  const needed = ctx.policy?.requiredIdentityFields ?? [];
  const shown = grant.displayMode === 'anonymous' ? [] : grant.identityFields;
  if (needed.some((field) => !shown.includes(field))) reasons.push('identity_fields_not_consented');
  if ((ctx.channel === 'paid_ads' || ctx.paidUse || ctx.policy?.paidUse) && !grant.paidUseAllowed) reasons.push('paid_use_not_allowed');
  if (version?.locale && version.locale !== version.originalLocale && grant.translationAllowed === false) {
    reasons.push('translation_not_allowed');
  }
  if (grant.geography && !grant.geography.includes('*')
    && !(ctx.geography && grant.geography.map((g) => g.toUpperCase()).includes(ctx.geography.toUpperCase()))) {
    reasons.push('geography_not_consented');
  }
  // The customer approved one exact wording; a different wording needs their approval again.
  if (grant.customerApprovedWording && shownVersionId && grant.approvedVersionId !== shownVersionId) {
    reasons.push('wording_not_customer_approved');
  }
  return reasons;
}

/** The decision for one use; the newest grant that allows it is the one that counts. */
export function decideEligibility(input: EligibilityInput, ctx: EligibilityContext): ChannelEligibility {
  const { item } = input;
  const newestFirst = [...input.grants].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  let chosen: EligibilityGrant | null = null;
  let reasons: string[] = newestFirst.length === 0 ? ['no_consent'] : [];
  for (const grant of newestFirst) {
    const why = grantReasons(grant, input, ctx);
    if (why.length === 0) {
      chosen = grant;
      reasons = [];
      break;
    }
    if (reasons.length === 0) reasons = why;
  }
  const all = [...itemReasons(input, ctx), ...reasons];
  return {
    channel: ctx.channel,
    eligible: all.length === 0,
    reasons: all,
    grantId: chosen?.id ?? null,
    identityFields: chosen && chosen.displayMode !== 'anonymous' ? chosen.identityFields : [],
    disclosure: item.incentive.offered
      ? `Incentivized${item.incentive.description ? `: ${item.incentive.description}` : ''}`
      : null,
    labels: [
      item.verificationState === 'verified_customer' ? 'verified_customer' : 'unverified',
      ...(item.incentive.offered ? ['incentivized'] : []),
    ],
  };
}

/** Per-channel decisions for an item's public version, as an item read shows them. */
export function evaluateEligibility(
  item: EligibilityItem, grants: EligibilityGrant[], now: Date = new Date(), channels: readonly string[] = PROOF_CHANNELS,
): ChannelEligibility[] {
  return channels.map((channel) => decideEligibility({ item, version: null, grants }, { channel, now }));
}

export function eligibleChannels(decisions: ChannelEligibility[]): string[] {
  return decisions.filter((d) => d.eligible).map((d) => d.channel);
}
