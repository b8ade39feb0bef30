import { DataSource } from 'typeorm';
import { notFound } from '../../runtime/service-error';
import { Feature, Product, Release } from '../entities';
import { newId } from '../rules/ids';
import { PREVIEW_LENGTH, fanOutInboxItems } from './inbox';
import { enqueueEvent } from '../outbox';
import type { ProductTenant } from '../platform/product-tenant';
import { databaseNow } from '../clock';

export interface PublishRelease {
  organizationId: string;
  teammateId: string;
  productId: string;
  title: string;
  featureIds: string[];
}

/**
 * Publishes a release: its features move to released, every voter and follower of them gets one inbox
 * item, and release.published is queued, all in one transaction.
 */
export async function publishRelease(ds: DataSource, input: PublishRelease) {
  if (!(await ds.getRepository(Product).existsBy({ id: input.productId, organizationId: input.organizationId }))) {
    throw notFound('product');
  }
  const featureIds = [...new Set(input.featureIds)];
  return ds.transaction(async (em) => {
    const features = await em.getRepository(Feature).createQueryBuilder('f')
      .where('f.id IN (:...ids) AND f.product_id = :productId', { ids: featureIds, productId: input.productId })
      .setLock('pessimistic_write').getMany();
    if (features.length !== featureIds.length) throw notFound('feature');
    const release = { id: newId('rel'), organizationId: input.organizationId, productId: input.productId,
      title: input.title, featureIds, publishedBy: input.teammateId, createdAt: await databaseNow(em) };
    await em.getRepository(Release).insert(release);
    await em.query(`UPDATE features SET state = 'released', updated_at = now() WHERE id = ANY($1)`, [featureIds]);
    const preview = `Shipped: ${features.map((f) => f.title).join(', ')}`;
    const recipientCount = await fanOutInboxItems(em, {
      organizationId: input.organizationId, productId: input.productId, releaseId: release.id, roomId: null,
      subject: input.title, preview: preview.slice(0, PREVIEW_LENGTH),
    }, 'SELECT end_user_id FROM feature_votes WHERE feature_id = ANY($8) UNION SELECT end_user_id FROM feature_follows WHERE feature_id = ANY($8)',
    [featureIds]);
    await enqueueEvent(em, {
      organizationId: input.organizationId, productId: input.productId, type: 'release.published',
      data: { releaseId: release.id, title: release.title, featureIds, recipientCount },
    });
    return {
      id: release.id, productId: release.productId, title: release.title, featureIds, recipientCount,
      createdAt: release.createdAt.toISOString(),
    };
  });
}

/** The end user's answer to "did this release fix it?"; a later answer replaces the earlier one. */
export async function recordReceipt(
  ds: DataSource, who: ProductTenant & { endUserId: string }, releaseId: string, input: { fixed: boolean; comment?: string },
) {
  return ds.transaction(async (em) => {
    if (!(await em.getRepository(Release).existsBy({ id: releaseId, productId: who.productId }))) throw notFound('release');
    const rows: Array<{ created_at: Date; updated_at: Date }> = await em.query(
      `INSERT INTO release_receipts (release_id, product_id, end_user_id, fixed, comment) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (release_id, end_user_id) DO UPDATE SET fixed = EXCLUDED.fixed, comment = EXCLUDED.comment, updated_at = now()
       RETURNING created_at, updated_at`,
      [releaseId, who.productId, who.endUserId, input.fixed, input.comment ?? null],
    );
    await enqueueEvent(em, {
      organizationId: who.organizationId, productId: who.productId, type: 'release.receipt_recorded',
      data: { releaseId, endUserId: who.endUserId, fixed: input.fixed },
    });
    return { releaseId, endUserId: who.endUserId, fixed: input.fixed, comment: input.comment ?? null, recordedAt: rows[0].updated_at.toISOString() };
  });
}
