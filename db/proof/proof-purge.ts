import { DataSource, EntityManager } from 'typeorm';
import { MediaStore } from '../../runtime/media-store';
import { eraseUploadBytes } from '../collection/uploads';

/**
 * Every copy of a purged item's words that lives outside its versions, erased in the purge's
 * transaction: the source records (text, title, attribution), the drafts it was submitted from (every
 * field: text, title, answers, identity), captions of its recordings, interviews about it (answers and
 * the e-mail they were sent to), the customer's correction messages, decline reasons and revocation
 * text, quote cards and case studies that quote it (file and content), and AI operations over it
 * (input and result), and a brand mention it was imported from. Ids, hashes, states, receipts and the ledger stay: they name the words, never hold
 * them. test/proof/proof-purge.test.ts lists every table and says which of them can hold such words.
 */
export async function eraseItemWords(em: EntityManager, itemId: string): Promise<void> {
  const statements = [
    `UPDATE proof_sources SET captured_text = NULL, title = NULL, attribution = NULL WHERE proof_item_id = $1`,
    `UPDATE collection_caption_versions SET vtt = '' WHERE upload_id IN (${UPLOADS_OF_ITEM})`,
    `UPDATE collection_drafts SET fields = '{}' WHERE proof_item_id = $1`,
    `UPDATE collection_interview_answers SET text = NULL WHERE interview_id IN (SELECT id FROM collection_interviews WHERE proof_item_id = $1)`,
    `UPDATE collection_interviews SET email = NULL WHERE proof_item_id = $1`,
    `UPDATE collection_customer_decisions SET reason = NULL WHERE proof_item_id = $1`,
    `UPDATE proof_corrections SET message = '' WHERE proof_item_id = $1`,
    `UPDATE proof_revocations SET request_text = NULL WHERE proof_item_id = $1`,
    `UPDATE proof_assets SET content = '{}', body = ''::bytea WHERE $1 = ANY(source_proof_ids)`,
    `UPDATE proof_ai_operations SET input = '{}', result = NULL WHERE subject->'proofItemIds' ? $1`,
    `UPDATE proof_brand_mentions SET text = '', author = NULL WHERE imported_item_id = $1`,
    `UPDATE collection_media SET erased_at = coalesce(erased_at, now()) WHERE id IN (${MEDIA_OF_ITEM})`,
  ];
  for (const sql of statements) await em.query(sql, [itemId]);
}

/** Uploads of the drafts an item was submitted from (a draft submit, the no-JS form, a key-started session). */
const UPLOADS_OF_ITEM = `SELECT u.id FROM collection_uploads u JOIN collection_drafts d ON d.id = u.draft_id WHERE d.proof_item_id = $1`;
/** Media of interviews about the item (its uploads' media are erased with the uploads). */
const INTERVIEW_MEDIA_OF_ITEM = `
  SELECT a.media_id FROM collection_interview_answers a JOIN collection_interviews i ON i.id = a.interview_id
   WHERE i.proof_item_id = $1 AND a.media_id IS NOT NULL
  UNION SELECT u.media_id FROM collection_interview_uploads u JOIN collection_interviews i ON i.id = u.interview_id
   WHERE i.proof_item_id = $1 AND u.media_id IS NOT NULL`;
const MEDIA_OF_ITEM = `SELECT asset_id FROM collection_uploads WHERE id IN (${UPLOADS_OF_ITEM}) AND asset_id IS NOT NULL UNION ${INTERVIEW_MEDIA_OF_ITEM}`;

/**
 * The bytes of a purged item's media (uploads with their parts, recorded interview answers) leave the
 * media store. Run after the purge commits, and again on a retry: removing what is gone is a no-op.
 */
export async function eraseItemMedia(ds: DataSource, store: MediaStore, itemId: string): Promise<void> {
  const uploads: Array<{ id: string }> = await ds.query(UPLOADS_OF_ITEM, [itemId]);
  await eraseUploadBytes(ds, store, uploads.map((u) => u.id));
  const media: Array<{ storage_key: string }> = await ds.query(
    `SELECT storage_key FROM collection_media WHERE id IN (${INTERVIEW_MEDIA_OF_ITEM})`, [itemId]);
  await store.remove(media.map((m) => m.storage_key));
}
