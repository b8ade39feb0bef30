import { fileTypeFromBuffer } from 'file-type';
import { DataSource, EntityManager } from 'typeorm';
import { Chunks, MediaStore, receive } from '../../runtime/media-store';
import { notFound, validationFailed } from '../../runtime/service-error';
import { RoomAttachment, RoomMessage } from '../entities';
import { newId } from '../rules/ids';
import { AttachmentType, UNATTACHED_ATTACHMENT_TTL_MS, attachmentTypeCheck } from '../rules/room-rules';
import { contentWithheld, messageVisibleTo, viewAttachment } from './room-log';
import { EndUserCaller, assertWritable, reachAsMember, reachRoom } from './room-access';

interface NewAttachment {
  contentType: AttachmentType;
  /** The body as it arrives, and the length it declared (already within the limit). */
  chunks: Chunks;
  length: number;
  filename: string | null;
}

const notOfType = (message: string) => validationFailed([{ path: '', message }]);

/**
 * Streams the bytes of a member's upload into the media store, checked on the way (the head sniffs as
 * the declared type, text is UTF-8, the length is the declared one), then records them as an unattached
 * upload. Membership is judged before a byte is read. The bytes go first so a row never points at
 * nothing; a failed insert erases them again.
 */
export async function uploadAttachment(ds: DataSource, store: MediaStore, caller: EndUserCaller, roomId: string, upload: NewAttachment) {
  const { room } = await reachAsMember(ds, caller, roomId);
  assertWritable(room);
  const id = newId('att');
  const storageKey = `rooms/${room.id}/${id}`;
  const check = attachmentTypeCheck(upload.contentType);
  const wrongLength = (got: number) => notOfType(`the body holds ${got} bytes, not the ${upload.length} its content-length declared`);
  const { size, sha256 } = await receive(store, storageKey, upload.chunks, {
    maxBytes: upload.length,
    tooLarge: wrongLength,
    head: async (bytes) => {
      const sniffed = await fileTypeFromBuffer(bytes);
      if (!check.head(sniffed?.mime)) throw notOfType(`the bytes are not ${upload.contentType}${sniffed ? ` (they look like ${sniffed.mime})` : ''}`);
    },
    inspect: (chunk) => {
      if (!check.chunk(chunk)) throw notOfType('the bytes are not UTF-8 text without NUL');
    },
    end: (received) => {
      if (received.size !== upload.length) throw wrongLength(received.size);
      if (!check.end()) throw notOfType('the bytes are not UTF-8 text without NUL');
    },
  });
  try {
    return await ds.transaction(async (em) => {
      assertWritable((await reachAsMember(em, caller, roomId, true)).room);
      await em.query(
        `INSERT INTO room_attachments (id, room_id, product_id, uploader_principal_id, filename, content_type, size, sha256, storage_key)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [id, room.id, room.productId, caller.principalId, upload.filename, upload.contentType, size, sha256, storageKey]);
      return viewAttachment(await em.getRepository(RoomAttachment).findOneByOrFail({ id }));
    });
  } catch (err) {
    await store.remove([storageKey]).catch(() => undefined);
    throw err;
  }
}

/**
 * Locks the uploads a new message names: each must be the author's own, of this room, unattached and
 * not swept; any other id is refused at its path, as a bad id in a body is. Answers them without repeats.
 */
export async function lockAttachable(em: EntityManager, roomId: string, principalId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows: Array<{ id: string }> = await em.query(
    `SELECT id FROM room_attachments WHERE id = ANY($1) AND room_id = $2 AND uploader_principal_id = $3
        AND message_id IS NULL AND expired_at IS NULL ORDER BY id FOR UPDATE`, [ids, roomId, principalId]);
  const found = new Set(rows.map((r) => r.id));
  const issues = ids.flatMap((id, i) => (found.has(id) ? [] : [{ path: `attachmentIds[${i}]`, message: 'is not an unattached upload of yours in this room' }]));
  if (issues.length > 0) throw validationFailed(issues);
  return [...found];
}

export async function attachToMessage(em: EntityManager, messageId: string, ids: string[]): Promise<void> {
  if (ids.length > 0) await em.query('UPDATE room_attachments SET message_id = $1 WHERE id = ANY($2)', [messageId, ids]);
}

/**
 * An attachment this end user may download: its own upload, or one on a message it sees the content
 * of (joined, customer-visible, neither deleted nor hidden from it). Everything else is 404.
 */
export async function readableAttachment(ds: DataSource, caller: EndUserCaller, roomId: string, attachmentId: string): Promise<RoomAttachment> {
  const { viewer } = await reachRoom(ds, caller, roomId);
  const attachment = await ds.getRepository(RoomAttachment).findOneBy({ id: attachmentId, roomId });
  if (!attachment || attachment.expiredAt) throw notFound('attachment');
  if (attachment.uploaderPrincipalId === caller.principalId) return attachment;
  if (viewer.member?.state !== 'joined' || attachment.messageId === null) throw notFound('attachment');
  const message = await ds.getRepository(RoomMessage).findOneByOrFail({ id: attachment.messageId });
  if (!messageVisibleTo(viewer, message) || contentWithheld(message, viewer)) throw notFound('attachment');
  return attachment;
}

/**
 * The maintenance round's sweep: uploads no message took within 24 h are marked, their bytes erased, then
 * their rows deleted. Marking first makes it safe to repeat after a failed erase, and a message being
 * posted holds the rows it attaches locked, so the sweep skips them.
 */
export async function sweepUnattachedAttachments(ds: DataSource, store: MediaStore, limit = 100): Promise<number> {
  await ds.query(
    `UPDATE room_attachments SET expired_at = now() WHERE id IN (
       SELECT id FROM room_attachments WHERE message_id IS NULL AND expired_at IS NULL AND created_at <= now() - $1 * interval '1 millisecond'
        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, [UNATTACHED_ATTACHMENT_TTL_MS, limit]);
  const rows: Array<{ id: string; storage_key: string }> = await ds.query(
    'SELECT id, storage_key FROM room_attachments WHERE expired_at IS NOT NULL ORDER BY expired_at LIMIT $1', [limit]);
  if (rows.length === 0) return 0;
  await store.remove(rows.map((r) => r.storage_key));
  await ds.query('DELETE FROM room_attachments WHERE id = ANY($1)', [rows.map((r) => r.id)]);
  return rows.length;
}
