import { EntityManager, In } from 'typeorm';
import { ServiceError } from '../../runtime/service-error';
import { ConsentGrant, ProofItem, ProofRevocation, ProofVersion } from '../entities';
import { assertChangeable, findItem, grantsOf } from '../proof/proof-items';
import { ConsentFacts, SourceFacts } from '../rules/ai-validator';
import { decideEligibility } from '../rules/proof-eligibility';

type Scope = { organizationId: string; productId: string };

export const notEligible = (message: string, details: unknown) => new ServiceError('NOT_ELIGIBLE', message, details);

/** The newest active grant that has not expired: what the customer allows now (none: nothing). */
export function currentGrant(grants: ConsentGrant[], now = new Date()): ConsentFacts | null {
  const grant = grants
    .filter((g) => g.state === 'active' && (!g.validUntil || g.validUntil.getTime() > now.getTime()))
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (b.id < a.id ? -1 : 1))[0];
  if (!grant) return null;
  return {
    displayMode: grant.displayMode,
    identityFields: grant.identityFields,
    channels: grant.channels,
    paidUseAllowed: grant.paidUseAllowed,
    translationAllowed: grant.translationAllowed,
    validUntil: grant.validUntil ? grant.validUntil.toISOString().slice(0, 10) : null,
  };
}

export function sourceFacts(item: ProofItem, version: ProofVersion, grants: ConsentGrant[]): SourceFacts {
  const c = version.content;
  return {
    itemType: item.type,
    version: { id: version.id, text: c.text, title: c.title, rating: c.rating, answers: c.answers, attribution: c.attribution },
    customerName: item.customerName,
    incentive: item.incentive,
    verificationState: item.verificationState,
    grant: currentGrant(grants),
  };
}

/** What the model is shown of a source: its words and the facts its caveats must state, no contact data. */
export function sourceForModel(s: SourceFacts) {
  return {
    sourceVersionId: s.version.id,
    type: s.itemType,
    text: s.version.text ?? null,
    title: s.version.title ?? null,
    rating: s.version.rating ?? null,
    answers: s.version.answers ?? {},
    incentive: s.incentive,
    verification: s.verificationState,
    consent: s.grant,
  };
}

const latestVersion = (em: EntityManager, itemId: string) =>
  em.getRepository(ProofVersion).findOne({ where: { proofItemId: itemId }, order: { versionNumber: 'DESC' } });

const hasText = (v: ProofVersion) => {
  const c = v.content;
  return !!(c.text?.trim() || c.title?.trim() || (c.answers && Object.keys(c.answers).length > 0));
};

async function pendingRevocation(em: EntityManager, item: ProofItem): Promise<boolean> {
  if (item.renderHold) return true;
  const open = await em.getRepository(ProofRevocation).count({ where: [
    { proofItemId: item.id, resolutionState: 'pending' }, { proofItemId: item.id, resolutionState: 'escalated' },
  ] });
  return open > 0;
}

/**
 * The source of a summary (docs/ai.md#summarize): the latest version with proof:read_private, else the approved
 * public one. Unknown 404, deleted 409 (410 past the window), revoked 409 REVOKED_FINAL, then 422.
 */
export async function summarySource(em: EntityManager, scope: Scope, itemId: string, readPrivate: boolean): Promise<SourceFacts> {
  const item = await findItem(em, scope, itemId);
  assertChangeable(item);
  const reasons: string[] = [];
  const version = readPrivate
    ? await latestVersion(em, item.id)
    : item.approvedPublicVersionId ? await em.getRepository(ProofVersion).findOneBy({ id: item.approvedPublicVersionId }) : null;
  if (!version) reasons.push('not_approved');
  if (await pendingRevocation(em, item)) reasons.push('revocation_pending');
  if (version && !hasText(version)) reasons.push('no_text');
  if (reasons.length > 0) throw notEligible('this proof item cannot be summarized now', { reasons });
  return sourceFacts(item, version!, await grantsOf(em, item.id));
}

/** The story an ask draft may draw on (version as for a summary); revoked items refuse. */
export async function askSource(em: EntityManager, scope: Scope, itemId: string, readPrivate: boolean): Promise<SourceFacts | null> {
  const item = await findItem(em, scope, itemId);
  assertChangeable(item);
  const version = readPrivate
    ? await latestVersion(em, item.id)
    : item.approvedPublicVersionId ? await em.getRepository(ProofVersion).findOneBy({ id: item.approvedPublicVersionId }) : null;
  return version ? sourceFacts(item, version, await grantsOf(em, item.id)) : null;
}

/**
 * Sources of a case study (docs/ai.md#case-studies): each item's approved public version, eligible for the
 * case_study channel as the evaluator decides; unknown ids 404 together, ineligible ones 422 together.
 */
export async function caseStudySources(em: EntityManager, scope: Scope, itemIds: string[]): Promise<SourceFacts[]> {
  const items = await em.getRepository(ProofItem).findBy(itemIds.map((id) => ({ id, organizationId: scope.organizationId, productId: scope.productId })));
  const unknown = itemIds.filter((id) => !items.some((i) => i.id === id));
  if (unknown.length > 0) throw new ServiceError('NOT_FOUND', 'proof item not found', { proofItemIds: unknown });
  // One read each of versions, grants and revocations for all items, not three per item.
  const versionIds = items.map((i) => i.approvedPublicVersionId).filter((v): v is string => v !== null);
  const versions = versionIds.length ? await em.getRepository(ProofVersion).findBy({ id: In(versionIds) }) : [];
  const allGrants = await em.getRepository(ConsentGrant).find({ where: { proofItemId: In(itemIds) }, order: { createdAt: 'DESC', id: 'DESC' } });
  const allRevocations = await em.getRepository(ProofRevocation).findBy({ proofItemId: In(itemIds) });
  const now = new Date();
  const out: SourceFacts[] = [];
  const refused: Array<{ proofItemId: string; reasons: string[] }> = [];
  for (const id of itemIds) {
    const item = items.find((i) => i.id === id)!;
    const version = versions.find((v) => v.id === item.approvedPublicVersionId) ?? null;
    const grants = allGrants.filter((g) => g.proofItemId === id);
    const decision = decideEligibility({
      item,
      version: version && { id: version.id, approvalState: version.approvalState, locale: version.locale, originalLocale: version.locale,
        rating: version.content.rating ?? null },
      grants,
      revocations: allRevocations.filter((r) => r.proofItemId === id),
    }, { channel: 'case_study', placementType: 'case_study', media: 'text', productId: scope.productId, now });
    if (!decision.eligible || !version) refused.push({ proofItemId: id, reasons: decision.reasons.length ? decision.reasons : ['not_approved'] });
    else out.push(sourceFacts(item, version, grants));
  }
  if (refused.length > 0) throw notEligible('some sources may not be used for a case study', { items: refused });
  return out;
}
