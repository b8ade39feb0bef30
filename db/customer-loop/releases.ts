import { DataSource, EntityManager } from 'typeorm';
import { notFound } from '../../runtime/service-error';
import { Feature, ProofRequest, Product, Release } from '../entities';
import { newId } from '../rules/ids';
import { PREVIEW_LENGTH, fanOutInboxItems } from './inbox';
import { enqueueEvent } from '../outbox';
import type { ProductTenant } from '../platform/product-tenant';
import { databaseNow } from '../clock';
import { draftRequestRow, recipientIssue } from '../collection/requests';

export interface PublishRelease {
  organizationId: string;
  teammateId: string;
  productId: string;
  title: string;
  featureIds: string[];
  /** Days a request sent to someone keeps new asks away (PROOF_ASK_COOLDOWN_DAYS). */
  cooldownDays: number;
}

/**
 * Publishes a release: its features move to released, every voter and follower of them gets one inbox
 * item, those the team may ask get a draft personal request, and release.published is queued, all in one
 * transaction.
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
    await draftReleaseRequests(em, input, release.id, features.map((f) => f.title));
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

const MESSAGE_LIMIT = 2_000;

/**
 * The loop closes (docs/customer-loop.md#the-loop-closes): when the product has a live flow, each voter or
 * follower of the shipped features who has an e-mail on record gets a draft personal request asking how the
 * release landed. Nothing is sent: a person sends it. Skipped, as for every ask: an opted-out recipient
 * (collection suppressions), one sent a request within the cooldown, and one already holding an unsent draft
 * (so publishing again never piles drafts up).
 */
async function draftReleaseRequests(em: EntityManager, input: PublishRelease, releaseId: string, titles: string[]): Promise<void> {
  const [flow]: Array<{ id: string; live_version_id: string }> = await em.query(
    `SELECT id, live_version_id FROM collection_flows WHERE product_id = $1 AND state = 'live' AND live_version_id IS NOT NULL
     ORDER BY updated_at DESC, id LIMIT 1`, [input.productId]);
  if (!flow) return;
  const recipients: Array<{ end_user_id: string; email: string; name: string | null }> = await em.query(
    `SELECT u.end_user_id, u.email, u.name FROM end_users u
      WHERE u.product_id = $1 AND u.email IS NOT NULL AND u.email <> ''
        AND u.end_user_id IN (SELECT end_user_id FROM feature_votes WHERE feature_id = ANY($2)
                              UNION SELECT end_user_id FROM feature_follows WHERE feature_id = ANY($2))
        -- the keys an opt-out writes (recipientKeys in collection/requests.ts)
        AND NOT EXISTS (SELECT 1 FROM collection_suppressions s WHERE s.product_id = $1
              AND s.recipient_key IN ('end_user:' || u.end_user_id, 'email:' || lower(u.email)))
        AND NOT EXISTS (SELECT 1 FROM proof_requests r WHERE r.product_id = $1
              AND (r.recipient->>'endUserId' = u.end_user_id OR lower(r.recipient->>'email') = lower(u.email))
              AND (r.status = 'draft' OR r.sent_at > now() - make_interval(days => $3)))
      ORDER BY u.end_user_id`,
    [input.productId, input.featureIds, input.cooldownDays]);
  const message = `We shipped ${titles.join(', ')} (${input.title}). You asked for it: how did it land for you?`.slice(0, MESSAGE_LIMIT);
  const who = { organizationId: input.organizationId, createdBy: { type: 'release', id: releaseId } };
  const live = { id: flow.id, productId: input.productId, liveVersionId: flow.live_version_id };
  // The query above applied the suppressions; an address the e-mail channel would refuse is skipped, not an error.
  const rows = recipients
    .map((r) => ({ email: r.email, endUserId: r.end_user_id, ...(r.name ? { name: r.name } : {}) }))
    .filter((recipient) => recipientIssue('email', recipient) === null)
    .map((recipient) => draftRequestRow(who, live, { flowId: flow.id, channel: 'email', recipient, message }));
  // One statement for every recipient: a release with thousands of voters stays one short transaction.
  if (rows.length > 0) await em.getRepository(ProofRequest).insert(rows);
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
