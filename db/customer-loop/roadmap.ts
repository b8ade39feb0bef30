import { DataSource } from 'typeorm';
import { notFound } from '../../runtime/service-error';
import type { ProductTenant } from '../platform/product-tenant';

/** What the public board shows: never who voted or followed, never scores or evidence. */
export interface PublicFeature {
  id: string;
  title: string;
  problem: string;
  state: string;
  voteCount: number;
  releases: Array<{ id: string; title: string; publishedAt: string }>;
}

export interface PublicRelease {
  id: string;
  title: string;
  publishedAt: string;
  features: Array<{ id: string; title: string; problem: string }>;
}

export interface PublicRoadmap {
  product: { id: string; name: string };
  features: PublicFeature[];
  releases: PublicRelease[];
}

const FEATURE_LIMIT = 500;
const RELEASE_LIMIT = 100;

/**
 * The public feature a feature id stands for: itself, or the one it was merged into. A merged feature is
 * folded into its survivor, so both must be on the board (a private feature never had a public address,
 * and a public one merged into a private one has nothing left to show). Alias m is the id asked for, s the answer.
 */
const STANDS_FOR = `features m JOIN features s ON s.id = COALESCE(m.merged_into, m.id) AND s.product_id = m.product_id
  AND m.public_board AND s.public_board`;

/**
 * An active product's public board: features with `publicBoard` by votes (never a merged one: it lives on in
 * its survivor), and the newest releases with the public features they shipped, a merged one shown as its
 * survivor (a release that shipped none of them is not shown). Unknown or inactive: null.
 */
export async function publicRoadmap(ds: DataSource, productId: string): Promise<PublicRoadmap | null> {
  const [product]: Array<{ id: string; name: string }> = await ds.query(
    'SELECT id, name FROM products WHERE id = $1 AND active', [productId]);
  if (!product) return null;
  const features: Array<{ id: string; title: string; problem: string; state: string; vote_count: number }> = await ds.query(
    `SELECT id, title, problem, state, vote_count FROM features WHERE product_id = $1 AND public_board AND merged_into IS NULL
     ORDER BY vote_count DESC, created_at, id LIMIT ${FEATURE_LIMIT}`, [productId]);
  const merged: Array<{ id: string; merged_into: string }> = await ds.query(
    'SELECT id, merged_into FROM features WHERE product_id = $1 AND public_board AND merged_into IS NOT NULL', [productId]);
  const releases: Array<{ id: string; title: string; created_at: Date; feature_ids: string[] }> = await ds.query(
    `SELECT r.id, r.title, r.created_at, r.feature_ids FROM releases r WHERE r.product_id = $1
       AND EXISTS (SELECT 1 FROM ${STANDS_FOR} WHERE m.id = ANY(r.feature_ids))
     ORDER BY r.created_at DESC, r.id DESC LIMIT ${RELEASE_LIMIT}`, [productId]);
  const byId = new Map(features.map((f) => [f.id, f]));
  const survivorOf = new Map(merged.map((m) => [m.id, m.merged_into]));
  const shipped = releases.map((r) => ({ ...r, feature_ids: [...new Set(r.feature_ids.map((id) => survivorOf.get(id) ?? id))] }));
  return {
    product,
    features: features.map((f) => ({
      id: f.id, title: f.title, problem: f.problem, state: f.state, voteCount: f.vote_count,
      releases: shipped.filter((r) => r.feature_ids.includes(f.id))
        .map((r) => ({ id: r.id, title: r.title, publishedAt: r.created_at.toISOString() })),
    })),
    releases: shipped.map((r) => ({
      id: r.id, title: r.title, publishedAt: r.created_at.toISOString(),
      features: r.feature_ids.flatMap((id) => {
        const f = byId.get(id);
        return f ? [{ id: f.id, title: f.title, problem: f.problem }] : [];
      }),
    })),
  };
}

/**
 * One feature as the board shows it, read by any id it had: a merged feature answers its survivor, with
 * `mergedFrom` the id asked for (null when the feature is itself on the board). Null when the product is
 * unknown or inactive, or the id stands for nothing on its board.
 */
export async function publicFeature(ds: DataSource, productId: string, featureId: string): Promise<(PublicFeature & { mergedFrom: string | null }) | null> {
  const [f]: Array<{ id: string; title: string; problem: string; state: string; vote_count: number; merged: boolean }> = await ds.query(
    `SELECT s.id, s.title, s.problem, s.state, s.vote_count, m.merged_into IS NOT NULL AS merged
       FROM ${STANDS_FOR} JOIN products p ON p.id = m.product_id AND p.active
      WHERE m.id = $1 AND m.product_id = $2`, [featureId, productId]);
  if (!f) return null;
  const releases: Array<{ id: string; title: string; created_at: Date }> = await ds.query(
    `SELECT r.id, r.title, r.created_at FROM releases r WHERE r.product_id = $1
       AND EXISTS (SELECT 1 FROM ${STANDS_FOR} WHERE m.id = ANY(r.feature_ids) AND s.id = $2)
     ORDER BY r.created_at DESC, r.id DESC LIMIT ${RELEASE_LIMIT}`, [productId, f.id]);
  return {
    id: f.id, title: f.title, problem: f.problem, state: f.state, voteCount: f.vote_count,
    releases: releases.map((r) => ({ id: r.id, title: r.title, publishedAt: r.created_at.toISOString() })),
    mergedFrom: f.merged ? featureId : null,
  };
}

/**
 * A feature an end user may vote on or follow from the public board: the token's product, standing for a
 * feature on the board (a vote on a merged one counts on its survivor); else 404.
 */
export async function assertPublicFeature(ds: DataSource, tenant: ProductTenant, productId: string, featureId: string): Promise<void> {
  const rows: unknown[] = productId === tenant.productId
    ? await ds.query(`SELECT 1 FROM ${STANDS_FOR} WHERE m.id = $1 AND m.product_id = $2`, [featureId, productId])
    : [];
  if (rows.length === 0) throw notFound('feature');
}

/** The end user's own votes and follows on the board (what their page shows as pressed). */
export async function voterState(ds: DataSource, productId: string, endUserId: string) {
  const [row]: Array<{ voted: string[]; followed: string[] }> = await ds.query(
    `SELECT
       ARRAY(SELECT v.feature_id FROM feature_votes v JOIN features f ON f.id = v.feature_id
              WHERE v.product_id = $1 AND v.end_user_id = $2 AND f.public_board ORDER BY v.feature_id) AS voted,
       ARRAY(SELECT w.feature_id FROM feature_follows w JOIN features f ON f.id = w.feature_id
              WHERE w.product_id = $1 AND w.end_user_id = $2 AND f.public_board ORDER BY w.feature_id) AS followed`,
    [productId, endUserId]);
  return { endUserId, votedFeatureIds: row.voted, followedFeatureIds: row.followed };
}
