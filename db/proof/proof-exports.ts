import { DataSource, In } from 'typeorm';
import { CANONICALIZATION, sha256OfCanonical } from '../rules/canonical-json';
import { notFound } from '../../runtime/service-error';
import { ConsentGrant, Product, ProofItem, ProofPlacement, ProofVersion } from '../entities';
import { eligibleChannels, evaluateEligibility } from '../rules/proof-eligibility';
import { viewGrant, viewItem, viewVersion } from './proof-items';
import { consentStatus } from '../rules/proof-status';
import { viewPlacement } from './proof-placements';

export const EXPORT_FORMAT = 'service-proof-export-v1';
export const RAW_EXPORT_FORMAT = 'service-proof-raw-export-v1';

function withDigest(bundle: Record<string, unknown>) {
  return { bundle, digest: { algorithm: 'sha256', canonicalization: CANONICALIZATION, value: sha256OfCanonical(bundle) } };
}

async function grantsByItem(ds: DataSource, items: ProofItem[]): Promise<Map<string, ConsentGrant[]>> {
  const grants = items.length ? await ds.getRepository(ConsentGrant).find({
    where: { proofItemId: In(items.map((i) => i.id)) }, order: { createdAt: 'ASC', id: 'ASC' },
  }) : [];
  const byItem = new Map<string, ConsentGrant[]>(items.map((i) => [i.id, []]));
  for (const grant of grants) byItem.get(grant.proofItemId)!.push(grant);
  return byItem;
}

function consentsOf(items: ProofItem[], grants: Map<string, ConsentGrant[]>) {
  return items.map((item) => {
    const own = grants.get(item.id) ?? [];
    return { proofItemId: item.id, status: consentStatus(item, own), grants: own.map(viewGrant) };
  });
}

/**
 * Approved-only bundle of a product: items whose approved public version the shared evaluator finds
 * usable on at least one channel now (consent active and unexpired, the customer's wording, not
 * revoked, held or deleted), with only that version, the consent summaries and the product's placements.
 */
export async function exportApproved(ds: DataSource, productId: string) {
  const candidates = await ds.getRepository(ProofItem).createQueryBuilder('i')
    .where('i.product_id = :productId', { productId })
    .andWhere(`i.status = 'approved' AND i.approved_public_version_id IS NOT NULL AND NOT i.render_hold`)
    .orderBy('i.created_at', 'ASC').addOrderBy('i.id', 'ASC')
    .getMany();
  const grants = await grantsByItem(ds, candidates);
  const now = new Date();
  const items = candidates.filter((item) => eligibleChannels(evaluateEligibility(item, grants.get(item.id) ?? [], now)).length > 0);
  const versions = items.length ? await ds.getRepository(ProofVersion).find({
    where: { id: In(items.map((i) => i.approvedPublicVersionId!)) },
    order: { proofItemId: 'ASC', versionNumber: 'ASC' },
  }) : [];
  return withDigest({
    format: EXPORT_FORMAT,
    productId,
    generatedAt: now.toISOString(),
    items: items.map(viewItem),
    versions: versions.map(viewVersion),
    consents: consentsOf(items, grants),
    placements: (await ds.getRepository(ProofPlacement).find({ where: { productId }, order: { createdAt: 'ASC', id: 'ASC' } })).map(viewPlacement),
  });
}

/** The owner's raw export: every live item's immutable original, whatever its approval. Never revoked ones. */
export async function exportRaw(ds: DataSource, organizationId: string, productId: string) {
  if (!(await ds.getRepository(Product).existsBy({ id: productId, organizationId }))) throw notFound('product');
  const items = await ds.getRepository(ProofItem).createQueryBuilder('i')
    .where('i.organization_id = :organizationId AND i.product_id = :productId', { organizationId, productId })
    .andWhere(`i.status NOT IN ('revoked', 'deleted')`)
    .orderBy('i.created_at', 'ASC').addOrderBy('i.id', 'ASC')
    .getMany();
  const originals = items.length ? await ds.getRepository(ProofVersion).find({
    where: { proofItemId: In(items.map((i) => i.id)), isOriginal: true }, order: { proofItemId: 'ASC' },
  }) : [];
  return withDigest({
    format: RAW_EXPORT_FORMAT,
    productId,
    generatedAt: new Date().toISOString(),
    items: items.map(viewItem),
    originals: originals.map(viewVersion),
    consents: consentsOf(items, await grantsByItem(ds, items)),
  });
}
