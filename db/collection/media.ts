import { DataSource, EntityManager } from 'typeorm';
import { CollectionMedia } from '../entities';
import { loadPlacement } from '../proof/proof-placements';
import { eligibleEntries } from '../proof/proof-render';

/**
 * A customer's uploaded recording or image (`med_`), served on a placement only while an item that
 * shows it is in the placement's current eligible manifest and that item's grant allows its media.
 */
export async function placedMedia(ds: DataSource, placementId: string, mediaId: string, now = new Date()): Promise<CollectionMedia | null> {
  const loaded = await loadPlacement(ds.manager, placementId);
  if (!loaded || loaded.placement.state !== 'active' || !loaded.productActive) return null;
  const media = await ds.getRepository(CollectionMedia).findOneBy({ id: mediaId, productId: loaded.placement.productId });
  if (!media || media.erasedAt) return null;
  const shown = eligibleEntries(loaded, now).some(({ entry, grant }) =>
    (entry.version.content.mediaAssetIds ?? []).includes(mediaId) && (grant.media ?? []).includes(media.kind));
  return shown ? media : null;
}

/**
 * The media of a welcome video that is served: it passed screening or a person cleared it, its file is not
 * erased, and the latest version of a live flow references it (docs/collection.md#welcome-video). A page shows
 * a welcome video only under this same rule, so it never shows a dead one.
 */
export async function servedWelcomeVideoMediaId(db: DataSource | EntityManager, videoId: string): Promise<string | null> {
  const rows: Array<{ media_id: string }> = await db.query(
    `SELECT w.media_id FROM collection_welcome_videos w JOIN collection_media m ON m.id = w.media_id AND m.erased_at IS NULL
      WHERE w.id = $1 AND w.state IN ('passed', 'cleared')
        AND EXISTS (SELECT 1 FROM collection_flows f
          JOIN LATERAL (SELECT v.definition FROM collection_flow_versions v WHERE v.flow_id = f.id ORDER BY v.version_number DESC LIMIT 1) latest ON true
          WHERE f.id = w.flow_id AND f.state = 'live' AND latest.definition->>'welcomeVideoId' = w.id)`, [videoId]);
  return rows.length ? rows[0].media_id : null;
}

export async function servedWelcomeVideo(ds: DataSource, videoId: string): Promise<CollectionMedia | null> {
  const mediaId = await servedWelcomeVideoMediaId(ds, videoId);
  return mediaId ? ds.getRepository(CollectionMedia).findOneBy({ id: mediaId }) : null;
}
