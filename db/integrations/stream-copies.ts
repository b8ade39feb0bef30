import { createHmac } from 'node:crypto';
import { DataSource } from 'typeorm';
import { activeSigningKey } from '../proof/proof-signing';
import { safeEqual } from '../rules/secrets';
import { recordFinding } from './health';

/**
 * Copies of approved customer videos at the video host (docs/integrations.md#rules-as-built). The host fetches the
 * original once through a short-lived source link, then reports readiness on the webhook; the table
 * `proof_stream_copies` keeps the host's uid and state (copying → playable or failed) per media asset.
 */

export interface StreamSourceClaims {
  /** The media asset (`med_…`). */
  m: string;
  /** The approved version that shows it. */
  v: string;
  p: string;
  /** Expiry, unix seconds. */
  exp: number;
}

const mac = (secret: Buffer, body: string) => createHmac('sha256', secret).update(body).digest('base64url');

/** `base64url(JSON claims)` + `.` + `base64url(HMAC-SHA256)` under the active signing key's stream-source key. */
export async function mintStreamSourceToken(ds: DataSource, claims: StreamSourceClaims): Promise<string> {
  const key = await activeSigningKey(ds);
  const body = Buffer.from(JSON.stringify({ m: claims.m, v: claims.v, p: claims.p, exp: claims.exp })).toString('base64url');
  return `${body}.${mac(key.streamSourceSecret, body)}`;
}

/** The claims of a token this service minted that has not expired; null for anything else. */
export async function readStreamSourceToken(ds: DataSource, token: string, nowSeconds: number): Promise<StreamSourceClaims | null> {
  const parts = token.split('.');
  if (parts.length !== 2 || !/^[A-Za-z0-9_-]+$/.test(parts[0]) || !/^[A-Za-z0-9_-]+$/.test(parts[1])) return null;
  const key = await activeSigningKey(ds);
  if (!safeEqual(parts[1], mac(key.streamSourceSecret, parts[0]))) return null;
  let claims: StreamSourceClaims;
  try {
    claims = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as StreamSourceClaims;
  } catch {
    return null;
  }
  if (typeof claims.m !== 'string' || typeof claims.v !== 'string' || typeof claims.p !== 'string' || typeof claims.exp !== 'number') return null;
  return claims.exp > nowSeconds ? claims : null;
}

export interface StreamableMedia {
  storageKey: string;
  contentType: string;
  size: number;
  proofItemId: string;
  organizationId: string;
}

/**
 * The original a source link may serve now: the version is approved and shows the asset, the item is
 * approved with no revocation filed, and its active grant allows the asset's media; else null (404).
 */
export async function streamableMedia(ds: DataSource, claims: Pick<StreamSourceClaims, 'm' | 'v' | 'p'>): Promise<StreamableMedia | null> {
  const [row] = await ds.query(
    `SELECT m.storage_key, m.content_type, m.size, i.id AS proof_item_id, i.organization_id
       FROM collection_media m
       JOIN proof_versions v ON v.id = $2
       JOIN proof_items i ON i.id = v.proof_item_id AND i.product_id = m.product_id
      WHERE m.id = $1 AND m.product_id = $3 AND m.erased_at IS NULL
        AND v.approval_state = 'approved' AND v.content->'mediaAssetIds' ? m.id
        AND i.status = 'approved' AND i.deleted_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM proof_revocations r WHERE r.proof_item_id = i.id)
        AND EXISTS (SELECT 1 FROM consent_grants g WHERE g.proof_item_id = i.id AND g.state = 'active'
                      AND (g.valid_until IS NULL OR g.valid_until > now()) AND m.kind = ANY(g.media))`,
    [claims.m, claims.v, claims.p],
  );
  if (!row) return null;
  return {
    storageKey: row.storage_key, contentType: row.content_type, size: Number(row.size), proofItemId: row.proof_item_id,
    organizationId: row.organization_id,
  };
}

export interface StreamCopyInput {
  organizationId: string;
  productId: string;
  mediaAssetId: string;
  versionId: string;
}

/**
 * Claims the copy of a media asset: the row is written once; a copy the host already accepted
 * (a uid is stored) answers that uid, so a repeated start asks the host nothing.
 */
export async function claimStreamCopy(ds: DataSource, input: StreamCopyInput): Promise<{ uid: string | null }> {
  await ds.query(
    `INSERT INTO proof_stream_copies (media_id, organization_id, product_id, version_id, state) VALUES ($1, $2, $3, $4, 'copying')
     ON CONFLICT (media_id) DO NOTHING`,
    [input.mediaAssetId, input.organizationId, input.productId, input.versionId],
  );
  const [row] = await ds.query(`SELECT uid FROM proof_stream_copies WHERE media_id = $1`, [input.mediaAssetId]);
  return { uid: row.uid };
}

export async function recordStreamUid(ds: DataSource, mediaAssetId: string, uid: string): Promise<void> {
  await ds.query(`UPDATE proof_stream_copies SET uid = $2, updated_at = now() WHERE media_id = $1 AND uid IS NULL`, [mediaAssetId, uid]);
}

/** The body of the host's webhook, as Cloudflare Stream sends it. */
export interface StreamNotice {
  uid: string;
  readyToStream?: boolean;
  status?: { state?: string; errorReasonCode?: string };
}

/**
 * Applies a verified readiness notice: ready → playable, error → failed plus the health finding
 * `stream_failed`. A uid this service did not ask for is ignored.
 */
export async function recordStreamNotice(ds: DataSource, notice: StreamNotice): Promise<'playable' | 'failed' | 'ignored'> {
  const [row] = await ds.query(
    `SELECT c.media_id, c.organization_id, c.product_id, v.proof_item_id
       FROM proof_stream_copies c JOIN proof_versions v ON v.id = c.version_id WHERE c.uid = $1`, [notice.uid]);
  if (!row) return 'ignored';
  if (notice.status?.state === 'error') {
    await ds.query(`UPDATE proof_stream_copies SET state = 'failed', error_reason = $2, updated_at = now() WHERE media_id = $1`,
      [row.media_id, notice.status.errorReasonCode ?? null]);
    await recordFinding(ds, { organizationId: row.organization_id, productId: row.product_id }, {
      check: 'stream_failed', subjectId: row.media_id, proofItemId: row.proof_item_id, placementId: null,
      properties: { mediaAssetId: row.media_id },
    });
    return 'failed';
  }
  if (notice.readyToStream === true || notice.status?.state === 'ready') {
    await ds.query(`UPDATE proof_stream_copies SET state = 'playable', error_reason = NULL, updated_at = now() WHERE media_id = $1`, [row.media_id]);
    return 'playable';
  }
  return 'ignored';
}

/** The video media of a version, each to be copied to the host once the version is approved. */
export async function videoMediaOf(ds: Pick<DataSource, 'query'>, mediaAssetIds: string[]): Promise<string[]> {
  if (mediaAssetIds.length === 0) return [];
  const rows: Array<{ id: string }> = await ds.query(
    `SELECT id FROM collection_media WHERE id = ANY($1) AND kind = 'video' AND erased_at IS NULL ORDER BY id`, [mediaAssetIds]);
  return rows.map((r) => r.id);
}
