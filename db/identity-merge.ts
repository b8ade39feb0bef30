import { DataSource } from 'typeorm';
import { ringMac, ringMacVerifies } from '../runtime/secret-box';
import { forbidden, notFound, validationFailed } from '../runtime/service-error';
import { lockFeatures, recomputeFeature } from './customer-loop/features';
import { moveMergeItemsToEndUser } from './customer-loop/feature-merges';
import { mergeRoomPrincipal } from './rooms/room-identity';
import type { ProductTenant } from './platform/product-tenant';

// Tables whose rows belong to an end user and move with a merge. Votes, follows and receipts are
// unique per end user, so a row the signed user already has wins and the anonymous one is dropped.
const MOVABLE = ['signals', 'threads', 'inbox_items'];
const UNIQUE_PER_USER: Array<[string, string]> = [
  ['feature_votes', 'feature_id'], ['feature_follows', 'feature_id'], ['release_receipts', 'release_id'],
];

const PROOF_PURPOSE = 'anonymous-merge-proof';
const PROOF_PREFIX = 'anp_';
const proofMessage = (productId: string, anonymousId: string) => `${productId}\u0000${anonymousId}`;

/**
 * What a browser holding an anonymous identity keeps to merge it later: an HMAC of the product and
 * the anonymous id under the secret key ring. Only a token of that anonymous end user is answered it
 * (GET /api/v1/identity/anonymous-proof), so knowing an anonymous id is not enough to take its history.
 */
export function anonymousProofOf(productId: string, anonymousId: string): string {
  return `${PROOF_PREFIX}${ringMac(PROOF_PURPOSE, proofMessage(productId, anonymousId))}`;
}

/** Refuses a merge without the proof of holding this anonymous id in this product; asked before any row is read. */
function assertAnonymousProof(productId: string, anonymousId: string, proof: string | undefined): void {
  if (proof === undefined) {
    throw forbidden('a merge needs anonymousProof: GET /api/v1/identity/anonymous-proof with the anonymous end user\'s token');
  }
  if (!proof.startsWith(PROOF_PREFIX) || !ringMacVerifies(PROOF_PURPOSE, proofMessage(productId, anonymousId), proof.slice(PROOF_PREFIX.length))) {
    throw forbidden('anonymousProof does not prove this anonymous id in this product');
  }
}

/**
 * Moves an anonymous end user's history (signals, threads, inbox, votes, follows, receipts, and its rooms:
 * memberships, messages, runs, approvals) onto the signed end user, inside one product; the anonymous end
 * user is removed. The caller must hold the anonymous identity's proof (403 before anything is read, so
 * a refusal says nothing about whether the id exists).
 */
export async function mergeEndUsers(
  ds: DataSource, tenant: ProductTenant, anonymous: { anonymousId: string; anonymousProof?: string }, endUserId: string,
) {
  const { anonymousId } = anonymous;
  if (anonymousId === endUserId) throw validationFailed([{ path: 'anonymousId', message: 'is the signed end user itself' }]);
  assertAnonymousProof(tenant.productId, anonymousId, anonymous.anonymousProof);
  return ds.transaction(async (em) => {
    const [, removed]: [unknown, number] = await em.query(
      'DELETE FROM end_users WHERE product_id = $1 AND end_user_id = $2', [tenant.productId, anonymousId]);
    if (removed === 0) throw notFound('end user');
    await em.query(
      `INSERT INTO end_users (product_id, end_user_id, organization_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [tenant.productId, endUserId, tenant.organizationId],
    );
    const touched: Array<{ feature_id: string }> = await em.query(
      `SELECT feature_id FROM feature_votes WHERE product_id = $1 AND end_user_id = $2
       UNION SELECT feature_id FROM feature_follows WHERE product_id = $1 AND end_user_id = $2
       UNION SELECT l.feature_id FROM feature_signal_links l JOIN signals s ON s.id = l.signal_id
              WHERE s.product_id = $1 AND s.end_user_id = $2`,
      [tenant.productId, anonymousId],
    );
    // Features first, as votes and links do, before the rows that feed their scores.
    const features = await lockFeatures(em, touched.map((t) => t.feature_id));
    const moved: Record<string, number> = {};
    for (const table of MOVABLE) {
      const [, count]: [unknown, number] = await em.query(
        `UPDATE ${table} SET end_user_id = $3 WHERE product_id = $1 AND end_user_id = $2`, [tenant.productId, anonymousId, endUserId]);
      moved[table] = count;
    }
    for (const [table, key] of UNIQUE_PER_USER) {
      const [, count]: [unknown, number] = await em.query(
        `UPDATE ${table} a SET end_user_id = $3 WHERE product_id = $1 AND end_user_id = $2
           AND NOT EXISTS (SELECT 1 FROM ${table} b WHERE b.${key} = a.${key} AND b.end_user_id = $3)`,
        [tenant.productId, anonymousId, endUserId],
      );
      await em.query(`DELETE FROM ${table} WHERE product_id = $1 AND end_user_id = $2`, [tenant.productId, anonymousId]);
      moved[table] = count;
    }
    await moveMergeItemsToEndUser(em, tenant.productId, anonymousId, endUserId);
    for (const feature of features) await recomputeFeature(em, feature);
    Object.assign(moved, await mergeRoomPrincipal(em, tenant.productId, anonymousId, endUserId));
    return { anonymousId, endUserId, moved };
  });
}
