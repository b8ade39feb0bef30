import { DataSource, EntityManager } from 'typeorm';
import { MediaStore } from '../../runtime/media-store';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { eraseUploadBytes } from './uploads';

export interface DraftSweepCounts {
  drafts: number;
  uploads: number;
}

/**
 * Erases drafts idle past their lifetime (docs/collection.md#customers): the draft becomes `expired` with its
 * fields emptied (its sessions then answer 410), its uploads end (`open` → `expired`, the others `cancelled`)
 * and every byte they left in the media store is erased. A draft with an upload being assembled waits for
 * the next round. Safe to repeat: an erased draft is no longer `open`.
 */
export async function sweepExpiredDrafts(ds: DataSource, store: MediaStore, limit = 100): Promise<DraftSweepCounts> {
  const expired = await ds.transaction(async (em) => {
    const rows: Array<{ id: string }> = await em.query(
      `SELECT d.id FROM collection_drafts d
        WHERE d.status = 'open' AND d.expires_at <= now()
          AND NOT EXISTS (SELECT 1 FROM collection_uploads u WHERE u.draft_id = d.id AND u.status = 'assembling')
        ORDER BY d.expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`, [limit]);
    const ids = rows.map((r) => r.id);
    if (ids.length === 0) return { drafts: [] as string[], uploads: [] as string[] };
    await em.query(
      `UPDATE collection_drafts SET status = 'expired', fields = '{}'::jsonb, updated_at = now() WHERE id = ANY($1)`, [ids]);
    const live: Array<{ id: string }> = await em.query(
      `SELECT id FROM collection_uploads WHERE draft_id = ANY($1) AND status IN ('open', 'complete') FOR UPDATE`, [ids]);
    await endUploads(em, live.map((u) => u.id));
    const all: Array<{ id: string }> = await em.query(`SELECT id FROM collection_uploads WHERE draft_id = ANY($1)`, [ids]);
    return { drafts: ids, uploads: all.map((u) => u.id) };
  });
  // Outside the transaction: the store is not PostgreSQL, and erasing twice is harmless.
  await eraseUploadBytes(ds, store, expired.uploads);
  return { drafts: expired.drafts.length, uploads: expired.uploads.length };
}

/**
 * Ends uploads (`open` → `expired`, `complete` → `cancelled`); their workflows wait for a cancel or a
 * timer, and the signal lets them end now.
 */
async function endUploads(em: EntityManager, ids: string[]): Promise<void> {
  await em.query(
    `UPDATE collection_uploads SET status = CASE WHEN status = 'open' THEN 'expired' ELSE 'cancelled' END, updated_at = now()
      WHERE id = ANY($1)`, [ids]);
  for (const id of ids) await enqueueWorkflowCommand(em, { type: 'collection.upload.cancel', sessionId: id });
}

/**
 * Erases what an unsubmitted draft uploaded once the upload has not changed for `ttlMs`
 * (PROOF_UNSUBMITTED_MEDIA_TTL_MS, 24 hours), however often the draft's text changes: the upload ends and
 * its parts and original leave the media store, while the draft's text stays until the draft's own
 * lifetime. An upload being assembled waits for the next round.
 */
export async function sweepUnsubmittedMedia(ds: DataSource, store: MediaStore, ttlMs: number, limit = 100): Promise<number> {
  const ended = await ds.transaction(async (em) => {
    const rows: Array<{ id: string }> = await em.query(
      `SELECT u.id FROM collection_uploads u JOIN collection_drafts d ON d.id = u.draft_id
        WHERE u.draft_id IS NOT NULL AND u.status IN ('open', 'complete') AND d.status = 'open'
          AND u.updated_at <= now() - make_interval(secs => $1 / 1000.0)
        ORDER BY u.updated_at LIMIT $2 FOR UPDATE OF u SKIP LOCKED`, [ttlMs, limit]);
    const ids = rows.map((r) => r.id);
    await endUploads(em, ids);
    return ids;
  });
  await eraseUploadBytes(ds, store, ended);
  return ended.length;
}
