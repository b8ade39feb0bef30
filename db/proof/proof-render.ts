import { createHash } from 'node:crypto';
import { sharedFreshRead } from '../../runtime/shared-fresh-read';
import { queryPrepared } from '../prepared-statements';
import { DataSource } from 'typeorm';
import { CANONICALIZATION, canonicalJson } from '../rules/canonical-json';
import { displayName } from '../rules/source-attribution';
import { ProofAsset } from '../entities';
import { LoadedEntry, LoadedPlacement, decideEntry, loadPlacement } from './proof-placements';
import { activeSigningKey, eventToken, signText } from './proof-signing';

export const RENDER_SCHEMA = 'service-proof-render-v1';
const DAY_MS = 86_400_000;

/** Only the attribution the customer consented to show, in the form their display mode allows. */
export function consentedAttribution(
  attribution: Record<string, string> | undefined, identityFields: string[], displayMode = 'full_name',
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of identityFields) {
    const value = attribution?.[field];
    if (typeof value !== 'string' || !value.trim()) continue;
    // Rendered initials are spaced ("A. L."); a source record's are not ("A.L.").
    const shown = field === 'name' ? displayName(value, displayMode, ' ') : value;
    if (shown !== '') out[field] = shown;
  }
  return out;
}

/** Which entries render now: eligible ones only, each with its decision and the grant that allows it. */
export function eligibleEntries(loaded: LoadedPlacement, now: Date) {
  return loaded.entries.flatMap((entry) => {
    const decision = decideEntry(loaded.placement, entry, now);
    if (!decision.eligible || !entry.version) return [];
    const grant = entry.grants.find((g) => g.id === decision.grantId)!;
    return [{ entry: entry as LoadedEntry & { version: NonNullable<LoadedEntry['version']> }, decision, grant }];
  });
}

async function loadActive(ds: DataSource, placementId: string): Promise<LoadedPlacement | null> {
  const loaded = await loadPlacement(ds.manager, placementId);
  return loaded && loaded.placement.state === 'active' && loaded.productActive ? loaded : null;
}

export interface Render {
  etag: string;
  /** The signed body; built only when the client's copy is stale. */
  body: () => string;
}

/**
 * The render manifest of an active placement, from a fresh eligibility decision (one query). A
 * draft, paused, archived or unknown placement, or one of an inactive product, renders nothing: null
 * (the API answers 404).
 */
export async function renderPlacement(ds: DataSource, placementId: string, now: Date = new Date()): Promise<Render | null> {
  const loaded = await loadActive(ds, placementId);
  return loaded ? buildRender(ds, loaded, now) : null;
}

async function buildRender(ds: DataSource, loaded: LoadedPlacement, now: Date): Promise<Render & { kid: string }> {
  const key = await activeSigningKey(ds);
  const { placement } = loaded;
  // Tokens last until the end of the next UTC day, so the manifest (and its ETag) holds for a day.
  const until = new Date(now.getTime() + DAY_MS).toISOString().slice(0, 10);
  const manifest = {
    schema: RENDER_SCHEMA,
    canonicalization: CANONICALIZATION,
    // When the event tokens stop counting: a wall shows nothing from a manifest past this.
    expiresAt: new Date(Date.parse(until) + DAY_MS).toISOString(),
    placement: {
      id: placement.id, placementType: placement.placementType, channel: placement.channel, locale: placement.locale,
      renderCacheVersion: placement.renderCacheVersion, renderConfig: placement.renderConfig,
    },
    items: eligibleEntries(loaded, now).map(({ entry, decision, grant }) => ({
      proofItemId: entry.proofItemId,
      versionId: entry.version.id,
      position: entry.position,
      contentHash: entry.version.contentHash,
      content: {
        ...(entry.version.content.title !== undefined ? { title: entry.version.content.title } : {}),
        ...(entry.version.content.text !== undefined ? { text: entry.version.content.text } : {}),
        ...(entry.version.content.rating !== undefined ? { rating: entry.version.content.rating } : {}),
      },
      attribution: consentedAttribution(entry.version.content.attribution, decision.identityFields, grant.displayMode),
      disclosure: decision.disclosure,
      labels: decision.labels,
      receiptId: grant.receiptId,
      // Approved assets, and the customer's own recordings or images when their grant allows that media.
      // Approved assets are quote cards (images); the customer's own files are of the item's kind.
      media: [
        ...entry.assetIds.map((assetId) => ({ assetId, kind: 'image' })),
        ...((grant.media ?? []).includes(entry.item.type) ? entry.version.content.mediaAssetIds ?? [] : [])
          .map((assetId) => ({ assetId, kind: entry.item.type })),
      ].map(({ assetId, kind }) => ({ assetId, kind, url: `/api/public/proof/media/${placement.id}/${assetId}` })),
      eventToken: eventToken(key, { placementId: placement.id, proofItemId: entry.proofItemId, until }),
    })),
  };
  const canonical = canonicalJson(manifest);
  const etag = `"${createHash('sha256').update(key.kid).update('\n').update(canonical).digest('base64url')}"`;
  return {
    etag,
    kid: key.kid,
    body: () => `{"manifest":${canonical},"signature":${JSON.stringify(signText(key, canonical))}}`,
  };
}

/** A file of an item in the placement's current eligible manifest; anything else is null (404). */
export async function placementMedia(ds: DataSource, placementId: string, assetId: string, now: Date = new Date()) {
  const loaded = await loadActive(ds, placementId);
  if (!loaded || !eligibleEntries(loaded, now).some(({ entry }) => entry.assetIds.includes(assetId))) return null;
  return ds.getRepository(ProofAsset).findOne({ where: { id: assetId }, select: { id: true, mediaType: true, body: true } });
}

interface CachedRender extends Render {
  version: string;
  kid: string;
  /** When a decision could change with time alone: the first consent expiry, or the next UTC day. */
  expiresAt: number;
}

const RENDER_CACHE_LIMIT = 1_000;
const renders = new WeakMap<DataSource, Map<string, CachedRender>>();

/**
 * The render version a placement's decision depends on. A wall's visitors ask it all at once: concurrent renders
 * of one placement share one read, never one that began before they arrived (sharedFreshRead).
 */
const versionReads = new WeakMap<DataSource, (placementId: string) => Promise<Array<{ version: string }>>>();

function renderVersionOf(ds: DataSource, placementId: string): Promise<Array<{ version: string }>> {
  return queryPrepared(ds, 'render-version-of-placement',
    `SELECT coalesce((SELECT version FROM proof_render_versions v WHERE v.organization_id = p.organization_id), 0)::text AS version
       FROM proof_placements p WHERE p.id = $1`, [placementId]);
}

function expiryOf(loaded: LoadedPlacement, now: Date): number {
  let at = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  for (const entry of loaded.entries) {
    for (const grant of entry.grants) {
      const until = grant.validUntil?.getTime();
      if (until !== undefined && until > now.getTime() && until < at) at = until;
    }
  }
  return at;
}

/**
 * The render of a placement, decided from current state on every call. The built manifest is reused
 * only while the organization's render version (bumped by a trigger in the same transaction as any
 * change to what a decision reads: product, item, version, consent, receipt, revocation, placement,
 * its items, assets), the signing key and the time bounds are all unchanged; that version is read
 * afresh here each time, so no decision is ever served stale.
 */
export async function currentRender(ds: DataSource, placementId: string, now: Date = new Date()): Promise<Render | null> {
  let readVersion = versionReads.get(ds);
  if (!readVersion) versionReads.set(ds, readVersion = sharedFreshRead((id: string) => renderVersionOf(ds, id)));
  const rows = await readVersion(placementId);
  if (rows.length === 0) return null;
  const key = await activeSigningKey(ds);
  let cache = renders.get(ds);
  if (!cache) renders.set(ds, cache = new Map());
  const hit = cache.get(placementId);
  if (hit && hit.version === rows[0].version && hit.kid === key.kid && now.getTime() < hit.expiresAt) return hit;
  cache.delete(placementId);
  const loaded = await loadActive(ds, placementId);
  if (!loaded) return null;
  const render = await buildRender(ds, loaded, now);
  const body = render.body();
  const entry: CachedRender = { etag: render.etag, body: () => body, version: rows[0].version, kid: render.kid, expiresAt: expiryOf(loaded, now) };
  if (cache.size >= RENDER_CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(placementId, entry);
  return entry;
}
