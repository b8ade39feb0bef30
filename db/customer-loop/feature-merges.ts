import { DataSource, EntityManager } from 'typeorm';
import { conflict, notFound, validationFailed } from '../../runtime/service-error';
import { Feature } from '../entities';
import { enqueueEvent } from '../outbox';
import { databaseNow } from '../clock';
import { FeatureView, lockFeatures, recomputeFeature, viewFeature } from './features';

export interface MergeResult {
  feature: FeatureView;
  into: FeatureView;
  moved: { votes: number; followers: number; signals: number };
}

/** Both features of the workspace, in one product (else 404), locked in id order. */
async function lockPair(em: EntityManager, organizationId: string, id: string, otherId: string): Promise<[Feature, Feature]> {
  const feature = await em.getRepository(Feature).findOneBy({ id, organizationId });
  if (!feature) throw notFound('feature');
  if (!(await em.getRepository(Feature).existsBy({ id: otherId, organizationId, productId: feature.productId }))) throw notFound('feature');
  const locked = await lockFeatures(em, [id, otherId]);
  const byId = new Map(locked.map((f) => [f.id, f]));
  return [byId.get(id)!, byId.get(otherId)!];
}

/**
 * Moves one kind of row from the merged feature to the surviving one and journals each as it was: an
 * end user or signal the survivor already had stays once (votes are one per end user) and is journalled
 * with added_to_target false, so that the unmerge leaves the survivor's own row alone.
 */
const MOVES = {
  vote: { table: 'feature_votes', key: 'end_user_id', columns: 'product_id, end_user_id, created_at', linkedBy: 'NULL' },
  follow: { table: 'feature_follows', key: 'end_user_id', columns: 'product_id, end_user_id, created_at', linkedBy: 'NULL' },
  link: { table: 'feature_signal_links', key: 'signal_id', columns: 'signal_id, linked_by, created_at', linkedBy: 'src.linked_by' },
} as const;

async function moveRows(em: EntityManager, kind: keyof typeof MOVES, from: string, to: string): Promise<number> {
  const m = MOVES[kind];
  const rows: Array<{ added_to_target: boolean }> = await em.query(
    `WITH src AS (DELETE FROM ${m.table} WHERE feature_id = $1 RETURNING ${m.columns}),
          ins AS (INSERT INTO ${m.table} (feature_id, ${m.columns}) SELECT $2, ${m.columns} FROM src ON CONFLICT DO NOTHING RETURNING ${m.key})
     INSERT INTO feature_merge_items (feature_id, kind, ref, linked_by, created_at, added_to_target)
     SELECT $1, $3, src.${m.key}, ${m.linkedBy}, src.created_at, ins.${m.key} IS NOT NULL FROM src LEFT JOIN ins USING (${m.key})
     RETURNING added_to_target`,
    [from, to, kind],
  );
  return rows.filter((r) => r.added_to_target).length;
}

/** Puts back one kind of row as the merge found it, and takes from the survivor only what the merge gave it. */
async function restoreRows(em: EntityManager, kind: keyof typeof MOVES, feature: Feature, from: string): Promise<void> {
  const m = MOVES[kind];
  await em.query(
    `DELETE FROM ${m.table} t USING feature_merge_items i
      WHERE i.feature_id = $1 AND i.kind = $3 AND i.added_to_target AND t.feature_id = $2 AND t.${m.key} = i.ref`,
    [feature.id, from, kind],
  );
  const values = kind === 'link' ? 'ref, linked_by, created_at' : '$3, ref, created_at';
  await em.query(
    `INSERT INTO ${m.table} (feature_id, ${m.columns}) SELECT $1, ${values} FROM feature_merge_items
      WHERE feature_id = $1 AND kind = $2 ON CONFLICT DO NOTHING`,
    kind === 'link' ? [feature.id, kind] : [feature.id, kind, feature.productId],
  );
}

export async function mergeFeature(ds: DataSource, organizationId: string, featureId: string, intoFeatureId: string, teammateId: string): Promise<MergeResult> {
  if (featureId === intoFeatureId) throw validationFailed([{ path: 'intoFeatureId', message: 'must be another feature' }]);
  return ds.transaction(async (em) => {
    const [feature, into] = await lockPair(em, organizationId, featureId, intoFeatureId);
    if (feature.mergedInto !== null) throw conflict(`the feature is already merged into ${feature.mergedInto}`);
    if (into.mergedInto !== null) throw conflict(`${into.id} is itself merged into ${into.mergedInto}: merge into that one`);
    // One level only, so that every unmerge restores exactly what its merge moved.
    const [merged]: Array<{ id: string }> = await em.query('SELECT id FROM features WHERE merged_into = $1 LIMIT 1', [feature.id]);
    if (merged) throw conflict(`${merged.id} is merged into this feature: unmerge it first, or merge it into ${into.id}`);
    const moved = {
      votes: await moveRows(em, 'vote', feature.id, into.id),
      followers: await moveRows(em, 'follow', feature.id, into.id),
      signals: await moveRows(em, 'link', feature.id, into.id),
    };
    const now = await databaseNow(em);
    Object.assign(feature, { mergedInto: into.id, mergedAt: now, mergedBy: teammateId });
    await em.getRepository(Feature).update(feature.id, { mergedInto: into.id, mergedAt: now, mergedBy: teammateId });
    const survivor = await recomputeFeature(em, into, now);
    const emptied = await recomputeFeature(em, feature, now);
    await enqueueEvent(em, {
      organizationId, productId: feature.productId, type: 'feature.merged',
      data: {
        featureId: feature.id, intoFeatureId: into.id, score: survivor.score, voteCount: survivor.voteCount,
        followerCount: survivor.followerCount, signalCount: survivor.signalCount, moved,
      },
    });
    return { feature: viewFeature(emptied), into: viewFeature(survivor), moved };
  });
}

export async function unmergeFeature(ds: DataSource, organizationId: string, featureId: string): Promise<MergeResult> {
  return ds.transaction(async (em) => {
    const seen = await em.getRepository(Feature).findOneBy({ id: featureId, organizationId });
    if (!seen) throw notFound('feature');
    if (seen.mergedInto === null) throw conflict('the feature is not merged');
    const [feature, into] = await lockPair(em, organizationId, featureId, seen.mergedInto);
    if (feature.mergedInto !== into.id) throw conflict('the feature is not merged');
    const counts: Array<{ kind: string; added: number }> = await em.query(
      `SELECT kind, count(*) FILTER (WHERE added_to_target)::int AS added FROM feature_merge_items WHERE feature_id = $1 GROUP BY kind`, [feature.id]);
    const added = (kind: string) => counts.find((c) => c.kind === kind)?.added ?? 0;
    for (const kind of ['vote', 'follow', 'link'] as const) await restoreRows(em, kind, feature, into.id);
    await em.query('DELETE FROM feature_merge_items WHERE feature_id = $1', [feature.id]);
    Object.assign(feature, { mergedInto: null, mergedAt: null, mergedBy: null });
    await em.getRepository(Feature).update(feature.id, { mergedInto: null, mergedAt: null, mergedBy: null });
    const now = await databaseNow(em);
    const restored = await recomputeFeature(em, feature, now);
    const survivor = await recomputeFeature(em, into, now);
    const moved = { votes: added('vote'), followers: added('follow'), signals: added('link') };
    await enqueueEvent(em, {
      organizationId, productId: feature.productId, type: 'feature.unmerged',
      data: { featureId: feature.id, fromFeatureId: into.id, score: restored.score, voteCount: restored.voteCount },
    });
    return { feature: viewFeature(restored), into: viewFeature(survivor), moved };
  });
}

/** Keeps the pair out of each other's suggestions for good; repeating it changes nothing. */
export async function markNotDuplicate(ds: DataSource, organizationId: string, featureId: string, otherId: string, teammateId: string) {
  if (featureId === otherId) throw validationFailed([{ path: 'featureId', message: 'must be another feature' }]);
  const feature = await ds.getRepository(Feature).findOneBy({ id: featureId, organizationId });
  if (!feature) throw notFound('feature');
  if (!(await ds.getRepository(Feature).existsBy({ id: otherId, organizationId, productId: feature.productId }))) throw notFound('feature');
  const [a, b] = [featureId, otherId].sort();
  await ds.query(
    `INSERT INTO feature_not_duplicates (product_id, feature_a, feature_b, created_by) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
    [feature.productId, a, b, teammateId],
  );
  return { featureId, notDuplicateOf: otherId };
}

/** An identity merge hands the anonymous end user's journalled votes and follows to the signed one, as it does their rows. */
export async function moveMergeItemsToEndUser(em: EntityManager, productId: string, from: string, to: string): Promise<void> {
  await em.query(
    `UPDATE feature_merge_items a SET ref = $3 FROM features f
      WHERE f.id = a.feature_id AND f.product_id = $1 AND a.kind IN ('vote', 'follow') AND a.ref = $2
        AND NOT EXISTS (SELECT 1 FROM feature_merge_items b WHERE b.feature_id = a.feature_id AND b.kind = a.kind AND b.ref = $3)`,
    [productId, from, to],
  );
  await em.query(
    `DELETE FROM feature_merge_items a USING features f
      WHERE f.id = a.feature_id AND f.product_id = $1 AND a.kind IN ('vote', 'follow') AND a.ref = $2`,
    [productId, from],
  );
}
