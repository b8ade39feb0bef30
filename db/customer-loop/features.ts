import { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { conflict, notFound } from '../../runtime/service-error';
import { Feature, Product, Signal } from '../entities';
import { FeatureState } from '../entities/feature';
import { ScoreBreakdown, scoreFeature } from '../rules/feature-score';
import { newId } from '../rules/ids';
import { enqueueEvent } from '../outbox';
import type { ProductTenant } from '../platform/product-tenant';
import { databaseNow } from '../clock';

export interface FeatureView {
  id: string;
  title: string;
  problem: string;
  state: FeatureState;
  score: number;
  scoreBreakdown: ScoreBreakdown;
  voteCount: number;
  followerCount: number;
  signalCount: number;
  publicBoard: boolean;
  mergedInto: string | null;
  createdAt: string;
  updatedAt: string;
}

export function viewFeature(f: Feature): FeatureView {
  return {
    id: f.id, title: f.title, problem: f.problem, state: f.state, score: f.score, scoreBreakdown: f.scoreBreakdown,
    voteCount: f.voteCount, followerCount: f.followerCount, signalCount: f.signalCount, publicBoard: f.publicBoard,
    mergedInto: f.mergedInto ?? null, createdAt: f.createdAt.toISOString(), updatedAt: f.updatedAt.toISOString(),
  };
}

/** Locks the feature row: votes, links and analyses of one feature recompute one after the other. */
export async function lockFeature(em: EntityManager, where: { id: string; productId?: string; organizationId?: string }): Promise<Feature> {
  const feature = await em.getRepository(Feature).findOne({ where, lock: { mode: 'pessimistic_write' } });
  if (!feature) throw notFound('feature');
  return feature;
}

/** Recomputes counts and score from the stored evidence; the caller holds the feature's lock. */
export async function recomputeFeature(em: EntityManager, feature: Feature, asOf = new Date()): Promise<Feature> {
  // Counted by the database: a popular feature's voters are never loaded under its lock.
  const [counts]: Array<{ votes: number; followers: number; distinct_users: number }> = await em.query(
    `SELECT (SELECT count(*)::int FROM feature_votes WHERE feature_id = $1) AS votes,
            (SELECT count(*)::int FROM feature_follows WHERE feature_id = $1) AS followers,
            (SELECT count(*)::int FROM (
               SELECT end_user_id FROM feature_votes WHERE feature_id = $1
               UNION
               SELECT s.end_user_id FROM signals s JOIN feature_signal_links l ON l.signal_id = s.id WHERE l.feature_id = $1) u) AS distinct_users`,
    [feature.id],
  );
  const signals = await em.getRepository(Signal).createQueryBuilder('s')
    .innerJoin('feature_signal_links', 'l', 'l.signal_id = s.id')
    .where('l.feature_id = :id', { id: feature.id })
    .getMany();
  const { score, breakdown } = scoreFeature({ asOf, votes: counts.votes, distinctEndUsers: counts.distinct_users, signals });
  Object.assign(feature, {
    score, scoreBreakdown: breakdown, voteCount: counts.votes, followerCount: counts.followers, signalCount: signals.length, updatedAt: asOf,
  });
  await em.getRepository(Feature).update(feature.id, {
    score, scoreBreakdown: breakdown, voteCount: feature.voteCount, followerCount: feature.followerCount,
    signalCount: feature.signalCount, updatedAt: asOf,
  });
  return feature;
}

/** Locks several features in id order, so that concurrent callers never deadlock on them. */
export async function lockFeatures(em: EntityManager, featureIds: string[]): Promise<Feature[]> {
  const locked: Feature[] = [];
  for (const id of [...new Set(featureIds)].sort()) locked.push(await lockFeature(em, { id }));
  return locked;
}

export async function recomputeFeatures(em: EntityManager, featureIds: string[]): Promise<void> {
  for (const feature of await lockFeatures(em, featureIds)) await recomputeFeature(em, feature);
}

/** Recomputes every feature a signal is evidence for (after its analysis changed its weights). */
export async function recomputeFeaturesOfSignal(em: EntityManager, signalId: string): Promise<void> {
  const links: Array<{ feature_id: string }> = await em.query('SELECT feature_id FROM feature_signal_links WHERE signal_id = $1', [signalId]);
  await recomputeFeatures(em, links.map((l) => l.feature_id));
}

export interface FeatureInput {
  title: string;
  problem: string;
  state?: FeatureState;
  publicBoard?: boolean;
}

export async function createFeature(ds: DataSource, organizationId: string, productId: string, input: FeatureInput): Promise<FeatureView> {
  if (!(await ds.getRepository(Product).existsBy({ id: productId, organizationId }))) throw notFound('product');
  const now = await databaseNow(ds);
  const feature: Feature = Object.assign(new Feature(), {
    id: newId('fea'), organizationId, productId, title: input.title, problem: input.problem,
    state: input.state ?? 'discovery', publicBoard: input.publicBoard ?? false, score: 0,
    scoreBreakdown: scoreFeature({ asOf: now, votes: 0, distinctEndUsers: 0, signals: [] }).breakdown,
    voteCount: 0, followerCount: 0, signalCount: 0, mergedInto: null, mergedAt: null, mergedBy: null, createdAt: now, updatedAt: now,
  });
  await ds.getRepository(Feature).insert(feature);
  return viewFeature(feature);
}

export async function updateFeature(ds: DataSource, organizationId: string, id: string, patch: Partial<FeatureInput>): Promise<FeatureView> {
  return ds.transaction(async (em) => {
    const feature = await lockFeature(em, { id, organizationId });
    Object.assign(feature, patch, { updatedAt: await databaseNow(em) });
    await em.getRepository(Feature).update(id, { ...patch, updatedAt: feature.updatedAt });
    return viewFeature(feature);
  });
}

export async function linkSignal(ds: DataSource, organizationId: string, featureId: string, signalId: string, teammateId: string) {
  return ds.transaction(async (em) => {
    const feature = await lockFeature(em, { id: featureId, organizationId });
    if (feature.mergedInto !== null) throw conflict(`the feature was merged into ${feature.mergedInto}: link the signal there`);
    if (!(await em.getRepository(Signal).existsBy({ id: signalId, productId: feature.productId }))) throw notFound('signal');
    await em.query(
      `INSERT INTO feature_signal_links (feature_id, signal_id, linked_by) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [featureId, signalId, teammateId],
    );
    return viewFeature(await recomputeFeature(em, feature));
  });
}

export async function unlinkSignal(ds: DataSource, organizationId: string, featureId: string, signalId: string) {
  return ds.transaction(async (em) => {
    const feature = await lockFeature(em, { id: featureId, organizationId });
    const [, removed]: [unknown, number] = await em.query(
      'DELETE FROM feature_signal_links WHERE feature_id = $1 AND signal_id = $2', [featureId, signalId]);
    if (removed === 0) throw notFound('link');
    return viewFeature(await recomputeFeature(em, feature));
  });
}

export interface FeatureFilter {
  limit: number;
  state?: FeatureState;
  publicBoard?: 'true' | 'false';
}

export async function listFeatures(ds: DataSource, productId: string, filter: FeatureFilter): Promise<FeatureView[]> {
  return filteredFeatures(ds.getRepository(Feature).createQueryBuilder('f').where('f.product_id = :productId', { productId }), filter);
}

/** The workspace's features across its products (or one of them); `merged` lists the merged ones instead. */
export async function listWorkspaceFeatures(
  ds: DataSource, organizationId: string, filter: FeatureFilter & { productId?: string; merged?: 'true' | 'false' },
): Promise<FeatureView[]> {
  const qb = ds.getRepository(Feature).createQueryBuilder('f').where('f.organization_id = :organizationId', { organizationId });
  if (filter.productId) qb.andWhere('f.product_id = :productId', { productId: filter.productId });
  return filteredFeatures(qb, filter, filter.merged === 'true');
}

/** A merged feature lives on in the surviving one: it is read by id, or listed apart, never among the others. */
async function filteredFeatures(qb: SelectQueryBuilder<Feature>, filter: FeatureFilter, merged = false): Promise<FeatureView[]> {
  qb.andWhere(merged ? 'f.merged_into IS NOT NULL' : 'f.merged_into IS NULL');
  if (filter.state) qb.andWhere('f.state = :state', { state: filter.state });
  if (filter.publicBoard) qb.andWhere('f.public_board = :pb', { pb: filter.publicBoard === 'true' });
  const rows = await qb.orderBy('f.score', 'DESC').addOrderBy('f.id', 'ASC').take(filter.limit).getMany();
  return rows.map(viewFeature);
}

/** The product of a feature of the workspace (404 for another workspace's). */
export async function workspaceFeatureProduct(ds: DataSource, organizationId: string, id: string): Promise<string> {
  const feature = await ds.getRepository(Feature).findOne({ where: { id, organizationId }, select: { id: true, productId: true } });
  if (!feature) throw notFound('feature');
  return feature.productId;
}

const EVIDENCE_LIMIT = 100;

/** A feature with its linked evidence (the most recent signals first). */
export async function getFeature(ds: DataSource, productId: string, id: string) {
  const feature = await ds.getRepository(Feature).findOneBy({ id, productId });
  if (!feature) throw notFound('feature');
  const evidence = await ds.getRepository(Signal).createQueryBuilder('s')
    .innerJoin('feature_signal_links', 'l', 'l.signal_id = s.id')
    .where('l.feature_id = :id', { id })
    .orderBy('s.created_at', 'DESC').addOrderBy('s.id', 'DESC')
    .limit(EVIDENCE_LIMIT)
    .getMany();
  return {
    ...viewFeature(feature),
    evidence: evidence.map((s) => ({
      signalId: s.id, threadId: s.threadId, endUserId: s.endUserId, category: s.category, title: s.title,
      urgency: s.urgency, sentiment: s.sentiment, summary: s.summary, createdAt: s.createdAt.toISOString(),
    })),
  };
}

/**
 * Votes on a merged feature count on the surviving one: links and pages shown before the merge keep
 * working. Read before locking, so that a vote never holds the merged row while waiting for the survivor.
 */
async function lockVotable(em: EntityManager, productId: string, id: string): Promise<Feature> {
  const seen = await em.getRepository(Feature).findOneBy({ id, productId });
  if (!seen) throw notFound('feature');
  const feature = await lockFeature(em, { id: seen.mergedInto ?? id, productId });
  return feature.mergedInto === null ? feature : lockFeature(em, { id: feature.mergedInto, productId });
}

async function ensureEndUser(em: EntityManager, tenant: ProductTenant, endUserId: string) {
  await em.query(
    `INSERT INTO end_users (product_id, end_user_id, organization_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    [tenant.productId, endUserId, tenant.organizationId],
  );
}

/** Idempotent per end user: a repeated vote changes nothing and emits nothing. */
export async function vote(ds: DataSource, tenant: ProductTenant, featureId: string, endUserId: string, follow: boolean) {
  return ds.transaction(async (em) => {
    const feature = await lockVotable(em, tenant.productId, featureId);
    await ensureEndUser(em, tenant, endUserId);
    const inserted: unknown[] = await em.query(
      `INSERT INTO feature_votes (feature_id, product_id, end_user_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1`,
      [feature.id, tenant.productId, endUserId],
    );
    await writeFollow(em, tenant, feature.id, endUserId, follow);
    const updated = await recomputeFeature(em, feature);
    if (inserted.length > 0) {
      await enqueueEvent(em, {
        organizationId: tenant.organizationId, productId: tenant.productId, type: 'feature.voted',
        data: { featureId: feature.id, endUserId, score: updated.score, voteCount: updated.voteCount },
      });
    }
    return voteResult(updated, endUserId, true, follow);
  });
}

/** The end user follows the feature (idempotent), or stops following it. */
async function writeFollow(em: EntityManager, tenant: ProductTenant, featureId: string, endUserId: string, follow: boolean): Promise<void> {
  if (follow) {
    await em.query(
      `INSERT INTO feature_follows (feature_id, product_id, end_user_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [featureId, tenant.productId, endUserId],
    );
  } else {
    await em.query('DELETE FROM feature_follows WHERE feature_id = $1 AND end_user_id = $2', [featureId, endUserId]);
  }
}

/** Withdraws the vote; the end user keeps following unless `follow` is false. */
export async function withdrawVote(ds: DataSource, tenant: ProductTenant, featureId: string, endUserId: string, follow: boolean | undefined) {
  return ds.transaction(async (em) => {
    const feature = await lockVotable(em, tenant.productId, featureId);
    await em.query('DELETE FROM feature_votes WHERE feature_id = $1 AND end_user_id = $2', [feature.id, endUserId]);
    if (follow === false) await writeFollow(em, tenant, feature.id, endUserId, false);
    const following: unknown[] = await em.query(
      'SELECT 1 FROM feature_follows WHERE feature_id = $1 AND end_user_id = $2', [feature.id, endUserId]);
    return voteResult(await recomputeFeature(em, feature), endUserId, false, following.length > 0);
  });
}

/** Follows (or stops following) without touching the vote: the public board's follow button. */
export async function setFollow(ds: DataSource, tenant: ProductTenant, featureId: string, endUserId: string, follow: boolean) {
  return ds.transaction(async (em) => {
    // A follow of a merged feature lands on the surviving one, as a vote does.
    const feature = await lockVotable(em, tenant.productId, featureId);
    await ensureEndUser(em, tenant, endUserId);
    await writeFollow(em, tenant, feature.id, endUserId, follow);
    const voted: unknown[] = await em.query('SELECT 1 FROM feature_votes WHERE feature_id = $1 AND end_user_id = $2', [feature.id, endUserId]);
    return voteResult(await recomputeFeature(em, feature), endUserId, voted.length > 0, follow);
  });
}

function voteResult(f: Feature, endUserId: string, voted: boolean, following: boolean) {
  return {
    featureId: f.id, endUserId, voted, following, score: f.score, scoreBreakdown: f.scoreBreakdown,
    voteCount: f.voteCount, followerCount: f.followerCount,
  };
}
