/**
 * The one eligibility evaluator: item read, export and (later) placements and renders all ask it, so a
 * channel is never eligible in one place and not in another. Pure: callers load the rows.
 */

export const PROOF_CHANNELS = [
  'website', 'in_app', 'email', 'sales', 'social_organic', 'paid_ads', 'case_study', 'press',
] as const;

export interface EligibilityItem {
  status: string;
  approvedPublicVersionId: string | null;
  renderHold: boolean;
  revokedAt: Date | null;
  incentive: { offered: boolean; description?: string };
  verificationState: string;
}

export interface EligibilityGrant {
  id: string;
  state: string;
  approvedVersionId: string;
  channels: string[];
  identityFields: string[];
  paidUseAllowed: boolean;
  validUntil: Date | null;
  customerApprovedWording: boolean;
  createdAt: Date;
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

function itemReasons(item: EligibilityItem): string[] {
  const reasons: string[] = [];
  if (item.revokedAt || item.status === 'revoked') reasons.push('revoked');
  else if (item.renderHold) reasons.push('revocation_pending');
  if (item.status === 'deleted') reasons.push('deleted');
  if (!item.approvedPublicVersionId) reasons.push('not_approved');
  return reasons;
}

function grantReasons(grant: EligibilityGrant, channel: string, publicVersionId: string | null, now: Date): string[] {
  const reasons: string[] = [];
  if (grant.state !== 'active') reasons.push('consent_revoked');
  if (grant.validUntil && grant.validUntil.getTime() <= now.getTime()) reasons.push('consent_expired');
  if (!grant.channels.includes(channel)) reasons.push('channel_not_consented');
  if (channel === 'paid_ads' && !grant.paidUseAllowed) reasons.push('paid_use_not_allowed');
  // The customer approved one exact wording; a different public wording needs their approval again.
  if (grant.customerApprovedWording && publicVersionId && grant.approvedVersionId !== publicVersionId) {
    reasons.push('wording_not_customer_approved');
  }
  return reasons;
}

/** Per-channel decision for an item; the newest grant that allows a channel is the one that counts. */
export function evaluateEligibility(
  item: EligibilityItem, grants: EligibilityGrant[], now: Date = new Date(), channels: readonly string[] = PROOF_CHANNELS,
): ChannelEligibility[] {
  const base = itemReasons(item);
  const newestFirst = [...grants].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  const disclosure = item.incentive.offered
    ? `Incentivized${item.incentive.description ? `: ${item.incentive.description}` : ''}`
    : null;
  const labels = [
    item.verificationState === 'verified_customer' ? 'verified_customer' : 'unverified',
    ...(item.incentive.offered ? ['incentivized'] : []),
  ];
  return channels.map((channel) => {
    let chosen: EligibilityGrant | null = null;
    let reasons: string[] = newestFirst.length === 0 ? ['no_consent'] : [];
    for (const grant of newestFirst) {
      const why = grantReasons(grant, channel, item.approvedPublicVersionId, now);
      if (why.length === 0) {
        chosen = grant;
        reasons = [];
        break;
      }
      if (chosen === null && reasons.length === 0) reasons = why;
    }
    const all = [...base, ...reasons];
    return {
      channel,
      eligible: all.length === 0,
      reasons: all,
      grantId: chosen?.id ?? null,
      identityFields: chosen?.identityFields ?? [],
      disclosure,
      labels,
    };
  });
}

export function eligibleChannels(decisions: ChannelEligibility[]): string[] {
  return decisions.filter((d) => d.eligible).map((d) => d.channel);
}
