import { DataSource } from 'typeorm';
import { notFound } from '../../runtime/service-error';
import { Feature, Product, Release } from '../entities';
import { newId } from '../rules/ids';
import { INBOX_CHANNEL } from './inbox';
import { enqueueEvent } from '../outbox';
import { ProductTenant } from './signals';

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
      title: input.title, featureIds, publishedBy: input.teammateId, createdAt: new Date() };
    await em.getRepository(Release).insert(release);
    await em.query(`UPDATE features SET state = 'released', updated_at = now() WHERE id = ANY($1)`, [featureIds]);
    const preview = `Shipped: ${features.map((f) => f.title).join(', ')}`;
    // One statement for any number of recipients: the inbox items, and each recipient's notice
    // (delivered by PostgreSQL at commit, to every API process holding their stream).
    const recipients: Array<{ id: string }> = await em.query(
      `WITH items AS (
         INSERT INTO inbox_items (id, organization_id, product_id, end_user_id, release_id, subject, preview)
         SELECT 'inb_' || replace(gen_random_uuid()::text, '-', ''), $2, $3, u.end_user_id, $1, $4, $5
           FROM (SELECT end_user_id FROM feature_votes WHERE feature_id = ANY($6)
                 UNION SELECT end_user_id FROM feature_follows WHERE feature_id = ANY($6)) u
         RETURNING id, end_user_id
       )
       SELECT id, pg_notify($7, json_build_object('productId', $3::text, 'endUserId', end_user_id, 'itemId', id)::text) FROM items`,
      [release.id, input.organizationId, input.productId, input.title, preview.slice(0, 160), featureIds, INBOX_CHANNEL],
    );
    await enqueueEvent(em, {
      organizationId: input.organizationId, productId: input.productId, type: 'release.published',
      data: { releaseId: release.id, title: release.title, featureIds, recipientCount: recipients.length },
    });
    return {
      id: release.id, productId: release.productId, title: release.title, featureIds, recipientCount: recipients.length,
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
