import { DataSource, EntityManager } from 'typeorm';
import { notFound } from '../../runtime/service-error';
import { sha256OfCanonical } from '../rules/canonical-json';
import { ConsentGrant, ProofItem, ProofVersion } from '../entities';
import { newId } from '../rules/ids';
import { consentStatus } from '../rules/proof-status';
import { assertChangeable, findItem, grantsOf, viewGrant } from './proof-items';
import { Actor, appendProofEvent } from './proof-ledger';
import { issueReceipt } from './proof-receipts';
import { databaseNow } from '../clock';

/** The terms a customer consents to for one exact version. */
export interface ConsentTerms {
  displayMode: string;
  identityFields: string[];
  channels: string[];
  products: { all?: boolean; ids?: string[] };
  media: string[];
  paidUseAllowed: boolean;
  translationAllowed: boolean;
  geography: string[];
  validUntil?: string | null;
  customerApprovedWording: boolean;
}

/**
 * Records a consent grant for one exact version: the grant, its signed receipt and the ledger's
 * proof.consent.granted, in the caller's transaction. The receipt hash binds the terms to the wording.
 */
export async function recordGrant(
  ds: DataSource, em: EntityManager,
  g: {
    item: ProofItem; versionId: string; contentHash: string; terms: ConsentTerms; evidence: Record<string, string>; actor: Actor;
    /** The exact consent wording the customer saw (collection flows). */
    wording?: { consentTemplateVersionId: string; wordingHash: string };
  },
): Promise<string> {
  const grantId = newId('cns');
  const terms = { ...g.terms, validUntil: g.terms.validUntil ?? null };
  await em.getRepository(ConsentGrant).insert({
    id: grantId,
    proofItemId: g.item.id,
    approvedVersionId: g.versionId,
    state: 'active',
    displayMode: terms.displayMode,
    identityFields: terms.identityFields,
    channels: terms.channels,
    products: terms.products,
    media: terms.media,
    paidUseAllowed: terms.paidUseAllowed,
    translationAllowed: terms.translationAllowed,
    geography: terms.geography,
    validUntil: terms.validUntil ? new Date(terms.validUntil) : null,
    customerApprovedWording: terms.customerApprovedWording,
    receiptHash: `sha256:${sha256OfCanonical({ terms, proofItemId: g.item.id, versionId: g.versionId, contentHash: g.contentHash })}`,
    evidence: g.evidence,
    revokedAt: null,
    consentTemplateVersionId: g.wording?.consentTemplateVersionId ?? null,
    wordingHash: g.wording?.wordingHash ?? null,
  });
  await issueReceipt(ds, em, await em.getRepository(ConsentGrant).findOneByOrFail({ id: grantId }), g.item, g.contentHash);
  await appendProofEvent(em, {
    organizationId: g.item.organizationId, productId: g.item.productId, proofItemId: g.item.id, actor: g.actor,
    eventType: 'proof.consent.granted',
    properties: { consentGrantId: grantId, versionId: g.versionId, channels: terms.channels, byCustomer: g.actor.type === 'customer' },
  });
  return grantId;
}

/**
 * A person records the customer's consent for an exact version (granted, or changed: the new terms
 * supersede every active grant of the item at once). Never by a key; never for a revoked item.
 */
export async function grantConsent(
  ds: DataSource, organizationId: string, itemId: string, input: { versionId: string; consent: ConsentTerms }, teammateId: string,
) {
  return ds.transaction(async (em) => {
    const item = await findItem(em, { organizationId }, itemId, true);
    assertChangeable(item);
    const version = await em.getRepository(ProofVersion).findOneBy({ id: input.versionId, proofItemId: itemId });
    if (!version) throw notFound('version');
    await em.getRepository(ConsentGrant).update({ proofItemId: itemId, state: 'active' }, { state: 'superseded' });
    const grantId = await recordGrant(ds, em, {
      item, versionId: version.id, contentHash: version.contentHash, terms: input.consent,
      actor: { type: 'teammate', id: teammateId },
      evidence: { capturedVia: 'workspace', teammateId, at: (await databaseNow(em)).toISOString() },
    });
    return viewGrant(await em.getRepository(ConsentGrant).findOneByOrFail({ id: grantId }));
  });
}

export async function getConsent(ds: DataSource, scope: { organizationId: string; productId: string }, id: string) {
  const item = await findItem(ds.manager, scope, id);
  const grants = await grantsOf(ds.manager, id);
  return { proofItemId: item.id, status: consentStatus(item, grants), grants: grants.map(viewGrant) };
}
