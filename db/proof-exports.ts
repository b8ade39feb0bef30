import { DataSource, In } from 'typeorm';
import { sha256OfCanonical } from './canonical-json';
import { notFound } from '../runtime/service-error';
import { ConsentGrant, Product, ProofItem, ProofPlacement, ProofVersion } from './entities';
import { consentStatus, viewGrant, viewItem, viewVersion } from './proof-items';
import { viewPlacement } from './proof-placements';

export const EXPORT_FORMAT = 'service-proof-export-v1';
export const RAW_EXPORT_FORMAT = 'service-proof-raw-export-v1';

function withDigest(bundle: Record<string, unknown>) {
  return { bundle, digest: { algorithm: 'sha256', canonicalization: 'sorted-keys-json', value: sha256OfCanonical(bundle) } };
}

async function consentsOf(ds: DataSource, items: ProofItem[]) {
  const grants = items.length ? await ds.getRepository(ConsentGrant).find({
    where: { proofItemId: In(items.map((i) => i.id)) }, order: { createdAt: 'ASC', id: 'ASC' },
  }) : [];
  return items.map((item) => {
    const own = grants.filter((g) => g.proofItemId === item.id);
    return { proofItemId: item.id, status: consentStatus(item, own), grants: own.map(viewGrant) };
  });
}

/**
 * Approved-only bundle of a product: items with an approved public version that are not revoked,
 * on hold for a revocation, or deleted; their approved versions, consent summaries and the product's
 * placements.
 */
export async function exportApproved(ds: DataSource, productId: string) {
  const items = await ds.getRepository(ProofItem).createQueryBuilder('i')
    .where('i.product_id = :productId', { productId })
    .andWhere(`i.status = 'approved' AND i.approved_public_version_id IS NOT NULL AND NOT i.render_hold`)
    .orderBy('i.created_at', 'ASC').addOrderBy('i.id', 'ASC')
    .getMany();
  const versions = items.length ? await ds.getRepository(ProofVersion).find({
    where: { proofItemId: In(items.map((i) => i.id)), approvalState: 'approved' },
    order: { proofItemId: 'ASC', versionNumber: 'ASC' },
  }) : [];
  return withDigest({
    format: EXPORT_FORMAT,
    productId,
    generatedAt: new Date().toISOString(),
    items: items.map(viewItem),
    versions: versions.map(viewVersion),
    consents: await consentsOf(ds, items),
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
    consents: await consentsOf(ds, items),
  });
}
