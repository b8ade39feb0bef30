import { DataSource, EntityManager } from 'typeorm';
import { AfterWrite, transactionWith } from '../platform/idempotency';
import { ServiceError, conflict, notFound, validationFailed } from '../../runtime/service-error';
import { ProofItem, ProofPlacement, ProofPlacementItem, ProofVersion } from '../entities';
import { PlacementState } from '../entities/proof-placement';
import { ProofContent } from '../entities/proof-version';
import { newId } from '../rules/ids';
import { sha256Hex } from '../rules/secrets';
import { PageRequest, pageOf } from '../pagination';
import {
  ChannelEligibility, EligibilityGrant, EligibilityInput, EligibilityItem, EligibilityPolicy, EligibilityVersion, decideEligibility,
} from '../rules/proof-eligibility';
import { Actor, appendProofEvent } from './proof-ledger';
import { assertChangeable, findItem } from './proof-items';
import { databaseNow, dbNow } from '../clock';

export const EXPAND_ITEMS_CAP = 50;
/** Items a placement may hold; a render shows at most these. */
export const MAX_PLACEMENT_ITEMS = 1_000;

export interface Scope { organizationId: string; productId: string }

export interface NewPlacement {
  name: string;
  placementType: string;
  channel: string;
  hostContext?: string;
  locale?: string;
  geography?: string;
  eligibilityPolicy?: EligibilityPolicy;
  renderConfig?: object;
}

export interface PlacementPatch {
  name?: string;
  state?: Exclude<PlacementState, 'draft'>;
  renderConfig?: object;
  eligibilityPolicy?: EligibilityPolicy;
}

export function viewPlacement(p: ProofPlacement) {
  return {
    id: p.id,
    productId: p.productId,
    name: p.name,
    placementType: p.placementType,
    channel: p.channel,
    hostContext: p.hostContext,
    locale: p.locale,
    geography: p.geography,
    state: p.state,
    renderCacheVersion: p.renderCacheVersion,
    renderConfig: p.renderConfig,
    eligibilityPolicy: p.eligibilityPolicy,
    publishedAt: p.publishedAt?.toISOString() ?? null,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

/** A placement of the key's product; another product's or tenant's id is indistinguishable from none. */
async function findPlacement(em: EntityManager, scope: Scope, id: string, lock = false): Promise<ProofPlacement> {
  const placement = await em.getRepository(ProofPlacement).findOne({
    where: { id, organizationId: scope.organizationId, productId: scope.productId },
    ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
  });
  if (!placement) throw notFound('placement');
  return placement;
}

const ledgerOf = (p: ProofPlacement, actor: Actor) => ({
  organizationId: p.organizationId, productId: p.productId, placementId: p.id, proofItemId: null, actor,
});

export async function createPlacement(ds: DataSource, scope: Scope, body: NewPlacement, actor: Actor, after?: AfterWrite) {
  return transactionWith(ds, async (em) => {
    const repo = em.getRepository(ProofPlacement);
    const id = newId('plc');
    await repo.insert({
      id,
      organizationId: scope.organizationId,
      productId: scope.productId,
      name: body.name,
      placementType: body.placementType,
      channel: body.channel,
      hostContext: body.hostContext ?? 'service_native',
      locale: body.locale ?? null,
      geography: body.geography?.toUpperCase() ?? null,
      // Nothing renders before a person or integration publishes on purpose.
      state: 'draft',
      renderCacheVersion: 1,
      renderConfig: body.renderConfig ?? {},
      eligibilityPolicy: body.eligibilityPolicy ?? {},
      publishedAt: null,
      updatedAt: dbNow,
    });
    const placement = await repo.findOneByOrFail({ id });
    await appendProofEvent(em, { ...ledgerOf(placement, actor), eventType: 'proof.placement.created', properties: { state: 'draft' } });
    return viewPlacement(placement);
  }, after);
}

export async function listPlacements(ds: DataSource, productId: string, state: PlacementState | undefined, page: PageRequest) {
  const qb = ds.getRepository(ProofPlacement).createQueryBuilder('p').where('p.product_id = :productId', { productId });
  if (state) qb.andWhere('p.state = :state', { state });
  return pageOf(qb, 'p', page, viewPlacement);
}

/** The workspace's placements, every product's, newest first, each with how many items it lists now (the console's list). */
export async function listWorkspacePlacements(ds: DataSource, organizationId: string, state: PlacementState | undefined, page: PageRequest) {
  const qb = ds.getRepository(ProofPlacement).createQueryBuilder('p').where('p.organization_id = :organizationId', { organizationId });
  if (state) qb.andWhere('p.state = :state', { state });
  const listed = await pageOf(qb, 'p', page, viewPlacement);
  const rows: Array<{ placement_id: string; n: string }> = listed.data.length === 0 ? [] : await ds.query(
    `SELECT placement_id, count(*) AS n FROM proof_placement_items WHERE placement_id = ANY($1) AND state = 'active' GROUP BY placement_id`,
    [listed.data.map((p) => p.id)]);
  const counts = new Map(rows.map((r) => [r.placement_id, Number(r.n)]));
  return { ...listed, data: listed.data.map((p) => ({ ...p, itemCount: counts.get(p.id) ?? 0 })) };
}

/** Every change of what or how a placement renders moves renderCacheVersion, so caches keyed on it turn over. */
/** Paid use: the paid_ads channel, or a policy that asks for paid use. */
function isPaidUse(p: Pick<ProofPlacement, 'channel' | 'eligibilityPolicy'>): boolean {
  return p.channel === 'paid_ads' || (p.eligibilityPolicy as EligibilityPolicy | null)?.paidUse === true;
}

/**
 * Publishing paid use is human-only (spec principle 1): a key may prepare a paid placement, but only
 * a person in the workspace makes it live.
 */
function guardPaidUse(before: ProofPlacement, patch: Partial<ProofPlacement>, actor: Actor): void {
  const after = { ...before, ...patch };
  const liveBefore = before.state === 'active' && isPaidUse(before);
  if (actor.type === 'service_key' && after.state === 'active' && isPaidUse(after) && !liveBefore) {
    throw new ServiceError('HUMAN_APPROVAL_REQUIRED', 'only a person in the workspace may publish paid use: POST /api/workspace/proof/placements/{id}/publish');
  }
}

async function changePlacementIn(
  em: EntityManager, scope: Scope, id: string, patch: Partial<ProofPlacement>, actor: Actor,
): Promise<ProofPlacement> {
  const placement = await findPlacement(em, scope, id, true);
  guardPaidUse(placement, patch, actor);
  await bumpCacheVersion(em, placement, patch);
  return em.getRepository(ProofPlacement).findOneByOrFail({ id });
}

async function bumpCacheVersion(em: EntityManager, placement: ProofPlacement, patch: Partial<ProofPlacement> = {}): Promise<void> {
  await em.getRepository(ProofPlacement).update(placement.id, {
    ...patch, renderCacheVersion: placement.renderCacheVersion + 1, updatedAt: dbNow,
  });
}

async function changePlacement(
  ds: DataSource, scope: Scope, id: string, patch: Partial<ProofPlacement>, eventType: string, actor: Actor,
  properties: Record<string, unknown>, after?: AfterWrite,
) {
  return transactionWith(ds, async (em) => {
    const changed = await changePlacementIn(em, scope, id, patch, actor);
    await appendProofEvent(em, {
      ...ledgerOf(changed, actor), eventType, properties: { state: changed.state, renderCacheVersion: changed.renderCacheVersion, ...properties },
    });
    return viewPlacement(changed);
  }, after);
}

export async function updatePlacement(ds: DataSource, scope: Scope, id: string, patch: PlacementPatch, actor: Actor, after?: AfterWrite) {
  return changePlacement(ds, scope, id, patch as Partial<ProofPlacement>, 'proof.placement.updated', actor, {
    changed: Object.keys(patch).sort(),
  }, after);
}

/** DELETE archives: the row, its items and its ledger stay as history. */
export async function archivePlacement(ds: DataSource, scope: Scope, id: string, actor: Actor, after?: AfterWrite) {
  return changePlacement(ds, scope, id, { state: 'archived' }, 'proof.placement.archived', actor, {}, after);
}

/** One placed item with everything its eligibility and its render need, as the loading query returns it. */
export interface LoadedEntry {
  id: string;
  proofItemId: string;
  versionId: string | null;
  position: number;
  state: string;
  removedReason: string | null;
  item: EligibilityItem & { id: string; type: string; productId: string };
  version: (EligibilityVersion & { content: ProofContent; contentHash: string }) | null;
  grants: Array<EligibilityGrant & { receiptId: string | null }>;
  revocations: Array<{ resolutionState: string }>;
  assetIds: string[];
}

export interface LoadedPlacement {
  placement: ProofPlacement;
  entries: LoadedEntry[];
  /** More placed items than were loaded. */
  hasMore: boolean;
  /** An inactive product publishes nothing. */
  productActive: boolean;
}

const asDate = (v: string | null) => (v === null ? null : new Date(v));

/**
 * The placement, its live items in position order, each with the version it shows, its grants (with
 * their receipt), revocations and quote cards: ONE query, however many items, so that every render can
 * afford a fresh eligibility decision.
 */
export async function loadPlacement(
  em: EntityManager, id: string, opts: { scope?: Scope; limit?: number } = {},
): Promise<LoadedPlacement | null> {
  const limit = opts.limit ?? MAX_PLACEMENT_ITEMS;
  const rows: Array<Record<string, unknown> & { entries: LoadedEntry[] }> = await em.query(`
    SELECT p.*, COALESCE((
      SELECT json_agg(json_build_object(
        'id', pi.id, 'proofItemId', pi.proof_item_id, 'versionId', pi.version_id, 'position', pi.position,
        'state', pi.state, 'removedReason', pi.removed_reason,
        'item', json_build_object(
          'id', i.id, 'type', i.type, 'status', i.status, 'productId', i.product_id,
          'approvedPublicVersionId', i.approved_public_version_id, 'renderHold', i.render_hold, 'revokedAt', i.revoked_at,
          'customerPausedAt', i.customer_paused_at,
          'incentive', i.incentive, 'verificationState', i.verification_state),
        'version', (SELECT json_build_object(
            'id', v.id, 'approvalState', v.approval_state, 'locale', v.locale, 'content', v.content,
            'contentHash', v.content_hash, 'rating', v.content->'rating',
            'originalLocale', (SELECT o.locale FROM proof_versions o WHERE o.id = i.original_version_id))
          FROM proof_versions v WHERE v.id = COALESCE(pi.version_id, i.approved_public_version_id)),
        'grants', COALESCE((SELECT json_agg(json_build_object(
            'id', g.id, 'state', g.state, 'approvedVersionId', g.approved_version_id, 'displayMode', g.display_mode,
            'channels', g.channels, 'identityFields', g.identity_fields, 'products', g.products, 'media', g.media,
            'paidUseAllowed', g.paid_use_allowed, 'translationAllowed', g.translation_allowed, 'geography', g.geography,
            'validUntil', g.valid_until, 'customerApprovedWording', g.customer_approved_wording, 'createdAt', g.created_at,
            'receiptId', r.id) ORDER BY g.created_at DESC, g.id DESC)
          FROM consent_grants g LEFT JOIN proof_receipts r ON r.consent_grant_id = g.id WHERE g.proof_item_id = i.id), '[]'),
        'revocations', COALESCE((SELECT json_agg(json_build_object('resolutionState', rv.resolution_state))
          FROM proof_revocations rv WHERE rv.proof_item_id = i.id), '[]'),
        'assetIds', COALESCE((SELECT json_agg(a.id ORDER BY a.created_at, a.id) FROM proof_assets a
          WHERE a.product_id = i.product_id AND a.approval_state = 'approved'
            AND a.source_version_ids = ARRAY[COALESCE(pi.version_id, i.approved_public_version_id)]
            AND p.channel = ANY(a.channel_eligibility)), '[]')
      ) ORDER BY pi.position, pi.created_at, pi.id)
      FROM (SELECT * FROM proof_placement_items WHERE placement_id = p.id AND state = 'active'
             ORDER BY position, created_at, id LIMIT $2) pi
      JOIN proof_items i ON i.id = pi.proof_item_id
    ), '[]') AS entries,
    (SELECT count(*)::int FROM proof_placement_items WHERE placement_id = p.id AND state = 'active') AS placed,
    (SELECT active FROM products WHERE id = p.product_id) AS product_active
    FROM proof_placements p
    WHERE p.id = $1 ${opts.scope ? 'AND p.organization_id = $3 AND p.product_id = $4' : ''}`,
  opts.scope ? [id, limit, opts.scope.organizationId, opts.scope.productId] : [id, limit]);
  if (rows.length === 0) return null;
  const row = rows[0];
  const placement = em.getRepository(ProofPlacement).create({
    id: row.id as string, organizationId: row.organization_id as string, productId: row.product_id as string,
    name: row.name as string, placementType: row.placement_type as string, channel: row.channel as string,
    hostContext: row.host_context as string, locale: row.locale as string | null, geography: row.geography as string | null,
    state: row.state as PlacementState, renderCacheVersion: row.render_cache_version as number,
    renderConfig: row.render_config as Record<string, unknown>, eligibilityPolicy: row.eligibility_policy as Record<string, unknown>,
    publishedAt: row.published_at as Date | null, createdAt: row.created_at as Date, updatedAt: row.updated_at as Date,
  });
  const entries = row.entries.map((e) => ({
    ...e,
    item: {
      ...e.item,
      revokedAt: asDate(e.item.revokedAt as unknown as string | null),
      customerPausedAt: asDate((e.item.customerPausedAt ?? null) as unknown as string | null),
    },
    grants: e.grants.map((g) => ({
      ...g, validUntil: asDate(g.validUntil as unknown as string | null), createdAt: new Date(g.createdAt as unknown as string),
    })),
  }));
  return { placement, entries, hasMore: (row.placed as number) > entries.length, productActive: row.product_active === true };
}

/** The live decision for one placed item in its placement's context. */
export function decideEntry(placement: ProofPlacement, entry: LoadedEntry, now: Date): ChannelEligibility {
  const input: EligibilityInput = { item: entry.item, version: entry.version, grants: entry.grants, revocations: entry.revocations };
  return decideEligibility(input, {
    channel: placement.channel,
    placementType: placement.placementType,
    geography: placement.geography,
    locale: placement.locale,
    productId: placement.productId,
    policy: placement.eligibilityPolicy as EligibilityPolicy,
    now,
  });
}

export function viewPlacementItem(placement: ProofPlacement, entry: LoadedEntry, now: Date) {
  const decision = decideEntry(placement, entry, now);
  return {
    id: entry.id,
    proofItemId: entry.proofItemId,
    versionId: entry.versionId,
    position: entry.position,
    state: entry.state,
    removedReason: entry.removedReason,
    eligible: decision.eligible,
    reasons: decision.reasons,
    disclosure: decision.disclosure,
  };
}

async function loadScoped(em: EntityManager, scope: Scope, id: string, limit?: number): Promise<LoadedPlacement> {
  const loaded = await loadPlacement(em, id, { scope, limit });
  if (!loaded) throw notFound('placement');
  return loaded;
}

/** Read, with `expand=items`: the first 50 placed items with their live decision, and hasMore. */
export async function getPlacement(ds: DataSource, scope: Scope, id: string, expandItems: boolean) {
  if (!expandItems) return viewPlacement(await findPlacement(ds.manager, scope, id));
  const loaded = await loadScoped(ds.manager, scope, id, EXPAND_ITEMS_CAP);
  const now = new Date();
  return {
    ...viewPlacement(loaded.placement),
    expanded: { items: { data: loaded.entries.map((e) => viewPlacementItem(loaded.placement, e, now)), hasMore: loaded.hasMore } },
  };
}

export async function listPlacementItems(ds: DataSource, scope: Scope, id: string) {
  const loaded = await loadScoped(ds.manager, scope, id);
  const now = new Date();
  const counts = await engagementOf(ds, id);
  return {
    data: loaded.entries.map((e) => ({ ...viewPlacementItem(loaded.placement, e, now), engagement: counts.get(e.proofItemId) ?? {} })),
    nextCursor: null,
  };
}

async function engagementOf(ds: DataSource, placementId: string): Promise<Map<string, Record<string, number>>> {
  const rows: Array<{ proof_item_id: string; event_type: string; n: string }> = await ds.query(
    `SELECT proof_item_id, event_type, sum(count) AS n FROM proof_engagement_counts WHERE placement_id = $1
      GROUP BY proof_item_id, event_type`, [placementId]);
  const out = new Map<string, Record<string, number>>();
  for (const r of rows) out.set(r.proof_item_id, { ...out.get(r.proof_item_id), [r.event_type]: Number(r.n) });
  return out;
}

export interface NewPlacementItem { proofItemId: string; versionId?: string; position?: number }

/**
 * Places an item; placing does not make it render (principle 3): the answer carries today's decision.
 * Without `versionId` the placement follows the item's approved public version; with one, it is pinned
 * and stops rendering when another wording becomes public.
 */
export async function addPlacementItem(ds: DataSource, scope: Scope, id: string, body: NewPlacementItem, actor: Actor, after?: AfterWrite) {
  return transactionWith(ds, async (em) => {
    const placement = await findPlacement(em, scope, id, true);
    if (placement.state === 'archived') throw conflict('this placement is archived');
    const item: ProofItem = await findItem(em, scope, body.proofItemId);
    assertChangeable(item);
    if (body.versionId && !(await em.getRepository(ProofVersion).existsBy({ id: body.versionId, proofItemId: item.id }))) {
      throw validationFailed([{ path: 'versionId', message: 'is not a version of this item' }]);
    }
    const repo = em.getRepository(ProofPlacementItem);
    const live = await repo.find({ where: { placementId: id, state: 'active' } });
    if (live.some((l) => l.proofItemId === item.id)) throw conflict('this item is already on the placement');
    if (live.length >= MAX_PLACEMENT_ITEMS) throw conflict(`a placement holds at most ${MAX_PLACEMENT_ITEMS} items`);
    const newEntryId = newId('ppi');
    await repo.insert({
      id: newEntryId, placementId: id, proofItemId: item.id, versionId: body.versionId ?? null,
      position: body.position ?? live.reduce((max, l) => Math.max(max, l.position + 1), 0),
      state: 'active', removedReason: null, removedAt: null,
    });
    await bumpCacheVersion(em, placement);
    await appendProofEvent(em, {
      ...ledgerOf(placement, actor), proofItemId: item.id, eventType: 'proof.placement.item_added',
      properties: { placementItemId: newEntryId, versionId: body.versionId ?? null },
    });
    const loaded = await loadScoped(em, scope, id);
    return viewPlacementItem(loaded.placement, loaded.entries.find((e) => e.id === newEntryId)!, new Date());
  }, after);
}

/** Removal keeps the row as history (state removed). */
export async function removePlacementItem(ds: DataSource, scope: Scope, id: string, entryId: string, actor: Actor, after?: AfterWrite) {
  return transactionWith(ds, async (em) => {
    const placement = await findPlacement(em, scope, id, true);
    const repo = em.getRepository(ProofPlacementItem);
    const entry = await repo.findOneBy({ id: entryId, placementId: id, state: 'active' });
    if (!entry) throw notFound('placement item');
    const now = await databaseNow(em);
    await repo.update(entryId, { state: 'removed', removedReason: 'removed_by_request', removedAt: now });
    await bumpCacheVersion(em, placement);
    await appendProofEvent(em, {
      ...ledgerOf(placement, actor), proofItemId: entry.proofItemId, eventType: 'proof.placement.item_removed',
      properties: { placementItemId: entryId },
    });
    return {
      id: entry.id, proofItemId: entry.proofItemId, versionId: entry.versionId, position: entry.position,
      state: 'removed', removedReason: 'removed_by_request',
    };
  }, after);
}

/**
 * Publish: counts what would render now (ineligible items are excluded at render time and counted).
 * A dry run answers the same counts and writes nothing; the real one activates the placement and
 * records proof.placement.published, announced with envelope id evt_<ledger id>.
 */
/** The scope of a placement of the workspace, for people, whose session names no product. */
export async function placementScope(ds: DataSource, organizationId: string, id: string): Promise<Scope> {
  const placement = await ds.getRepository(ProofPlacement).findOneBy({ id, organizationId });
  if (!placement) throw notFound('placement');
  return { organizationId, productId: placement.productId };
}

export async function publishPlacement(ds: DataSource, scope: Scope, id: string, dryRun: boolean, actor: Actor, after?: AfterWrite) {
  const count = (loaded: LoadedPlacement) => {
    const now = new Date();
    const eligibleCount = loaded.entries.filter((e) => decideEntry(loaded.placement, e, now).eligible).length;
    return { eligibleCount, excludedCount: loaded.entries.length - eligibleCount };
  };
  if (dryRun) {
    const loaded = await loadScoped(ds.manager, scope, id);
    return { placement: viewPlacement(loaded.placement), ...count(loaded) };
  }
  return transactionWith(ds, async (em) => {
    await findPlacement(em, scope, id, true);
    const counts = count(await loadScoped(em, scope, id));
    const placement = await changePlacementIn(em, scope, id, { state: 'active', publishedAt: await databaseNow(em) }, actor);
    await appendProofEvent(em, {
      ...ledgerOf(placement, actor), eventType: 'proof.placement.published',
      properties: { renderCacheVersion: placement.renderCacheVersion, ...counts },
    });
    return { placement: viewPlacement(placement), ...counts };
  }, after);
}

export const ENGAGEMENT_TYPES = ['impression', 'click', 'play'] as const;

/**
 * One beacon hit, counted per placement, item, type and UTC day, and only the first time a token is
 * sent with that type that day (a replayed token adds nothing). Nothing about the visitor is kept.
 * True when it counted.
 */
export async function recordEngagement(
  ds: DataSource, token: string, placementId: string, proofItemId: string, type: string, now: Date,
): Promise<boolean> {
  const rows: unknown[] = await ds.query(
    `WITH first AS (
       INSERT INTO proof_engagement_beacons (token_digest, event_type, day) VALUES ($1, $4, $5)
       ON CONFLICT DO NOTHING RETURNING 1
     )
     INSERT INTO proof_engagement_counts (placement_id, proof_item_id, event_type, day, count)
     SELECT $2, $3, $4, $5, 1 FROM first
     ON CONFLICT (placement_id, proof_item_id, event_type, day) DO UPDATE SET count = proof_engagement_counts.count + 1
     RETURNING 1`,
    [sha256Hex(token), placementId, proofItemId, type, now.toISOString().slice(0, 10)],
  );
  return rows.length > 0;
}
