import { createHash } from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { ServiceError, conflict, notFound } from '../../runtime/service-error';
import { Chunks, MediaStore, SNIFF_BYTES, receive } from '../../runtime/media-store';
import { CollectionDraft, CollectionUpload } from '../entities';
import { UploadKind } from '../entities/collection-upload';
import { secondsToNextUtcDay } from '../rules/date-time';
import { newId } from '../rules/ids';
import {
  DEFAULT_PART_SIZE, KIND_MAX_BYTES, MAX_PARTS, MAX_UPLOADS_PER_DRAFT, acceptedType, expectedPartSize, partCountOf,
} from '../rules/upload-rules';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { issueSecret } from './secrets';
import { databaseNow, dbNow } from '../clock';

export const invalidInput = (message: string) => new ServiceError('INVALID_INPUT', message);
export const expired = (what: string) => new ServiceError('EXPIRED', `this ${what} has expired`);
const tooLarge = (message: string) => new ServiceError('TOO_LARGE', message);
const unsupported = (message: string) => new ServiceError('UNSUPPORTED_MEDIA_TYPE', message);
const checksumMismatch = (message: string) => new ServiceError('CHECKSUM_MISMATCH', message);

export interface UploadPart { number: number; size: number; sha256: string }

export const partKey = (uploadId: string, n: number) => `uploads/${uploadId}/part-${n}`;
export const mediaKey = (organizationId: string, mediaId: string) => `media/${organizationId}/${mediaId}`;
/** The media id of an upload, fixed by the upload's id so that a retried assembly writes the same one. */
export const mediaIdOf = (uploadId: string) => `med_${uploadId.slice(uploadId.indexOf('_') + 1)}`;

export function viewUpload(u: CollectionUpload, parts: UploadPart[]) {
  return {
    id: u.id,
    kind: u.kind,
    purpose: u.purpose,
    status: u.status,
    size: u.size,
    sha256: u.sha256,
    partSize: u.partSize,
    partCount: u.partCount,
    receivedParts: parts,
    // Assembly folds the parts into the file, so a complete upload has received the whole of it.
    receivedBytes: u.status === 'complete' ? u.size : parts.reduce((sum, p) => sum + p.size, 0),
    contentType: u.contentType,
    assetId: u.assetId,
    lastError: u.lastError,
    questionId: u.questionId,
    expiresAt: u.expiresAt.toISOString(),
  };
}

export async function partsOf(em: DataSource | EntityManager, uploadId: string): Promise<UploadPart[]> {
  const rows: Array<{ number: number; size: number; sha256: string }> = await em.query(
    `SELECT number, size, sha256 FROM collection_upload_parts WHERE upload_id = $1 ORDER BY number`, [uploadId]);
  return rows.map((r) => ({ number: r.number, size: r.size, sha256: r.sha256 }));
}

/** An open upload past its lifetime is expired whether or not its timer has fired yet. */
export function effectiveStatus(u: CollectionUpload, now = new Date()): CollectionUpload['status'] {
  return u.status === 'open' && u.expiresAt.getTime() <= now.getTime() ? 'expired' : u.status;
}

export interface OpenUploadBody {
  kind: UploadKind;
  size: number;
  sha256: string;
  purpose?: 'response' | 'photo' | 'logo';
  partSize?: number;
  questionId?: string;
  capture?: { source: string; screenConsent?: boolean; consentVersionId?: string };
}

export interface UploadQuotas { draftBytes: number; flowDailyBytes: number; addressDailyBytes: number }

const utcDayStart = (now = new Date()) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));

const dailyQuotaReached = (what: string, limit: number) => new ServiceError('RATE_LIMITED',
  `${what} may open at most ${limit} bytes of uploads a UTC day; try again tomorrow`, null, { 'retry-after': String(secondsToNextUtcDay()) });

/**
 * The client address's daily quota over every anonymous upload it opened today (draft uploads and
 * recorded interview answers), counted under a lock on the address so two opens cannot both slip under it.
 */
export async function chargeAddress(em: EntityManager, clientAddress: string, size: number, limit: number): Promise<void> {
  await em.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`upload-quota:address:${clientAddress}`]);
  const [{ used }] = await em.query(
    `SELECT (SELECT coalesce(sum(size), 0) FROM collection_uploads WHERE client_address = $1 AND created_at >= $2)
          + (SELECT coalesce(sum(size), 0) FROM collection_interview_uploads WHERE client_address = $1 AND created_at >= $2) AS used`,
    [clientAddress, utcDayStart()]);
  if (Number(used) + size > limit) throw dailyQuotaReached('one client address', limit);
}

/**
 * The quotas on anonymous upload storage, counted in bytes opened (no part can exceed its upload's
 * size): what the draft holds now, what its flow and the client address opened this UTC day. Runs in
 * the open's transaction, with the draft locked.
 */
async function chargeUpload(em: EntityManager, draft: CollectionDraft, size: number, clientAddress: string, quotas: UploadQuotas): Promise<void> {
  const [{ held }] = await em.query(
    `SELECT coalesce(sum(size), 0) AS held FROM collection_uploads WHERE draft_id = $1 AND status IN ('open', 'assembling', 'complete')`, [draft.id]);
  if (Number(held) + size > quotas.draftBytes) {
    throw tooLarge(`a draft's uploads may hold at most ${quotas.draftBytes} bytes; this one holds ${held}`);
  }
  await em.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`upload-quota:flow:${draft.flowId}`]);
  const [{ opened }] = await em.query(
    `SELECT coalesce(sum(size), 0) AS opened FROM collection_uploads WHERE flow_id = $1 AND created_at >= $2`, [draft.flowId, utcDayStart()]);
  if (Number(opened) + size > quotas.flowDailyBytes) throw dailyQuotaReached('this form', quotas.flowDailyBytes);
  await chargeAddress(em, clientAddress, size, quotas.addressDailyBytes);
}

/**
 * Opens an upload session on an open draft and issues its `ut_` token (shown once). Size, part plan,
 * capture rules and the storage quotas are checked here; the bytes' type is checked on part 1 and on the whole file.
 */
export async function openUpload(
  ds: DataSource, draft: CollectionDraft, body: OpenUploadBody,
  opts: { ttlMs: number; consentTemplateVersionId: string | null; taskQueue: string; clientAddress: string; quotas: UploadQuotas },
) {
  const purpose = body.purpose ?? 'response';
  if (purpose !== 'response' && body.kind !== 'image') throw invalidInput(`purpose ${purpose} needs kind image`);
  if (body.size > KIND_MAX_BYTES[body.kind]) throw tooLarge(`a ${body.kind} may be at most ${KIND_MAX_BYTES[body.kind]} bytes`);
  const partSize = body.partSize ?? DEFAULT_PART_SIZE;
  if (partCountOf(body.size, partSize) > MAX_PARTS) throw invalidInput(`at most ${MAX_PARTS} parts: choose a larger partSize`);
  if (body.capture?.source === 'screen') {
    if (body.capture.screenConsent !== true || !body.capture.consentVersionId) {
      throw invalidInput('a screen recording needs capture.screenConsent true and capture.consentVersionId');
    }
    if (body.capture.consentVersionId !== opts.consentTemplateVersionId) {
      throw conflict('capture.consentVersionId is not the consent wording of this draft');
    }
  }
  return ds.transaction(async (em) => {
    const locked = await em.getRepository(CollectionDraft).findOne({ where: { id: draft.id }, lock: { mode: 'pessimistic_write' } });
    if (!locked || locked.status !== 'open') throw conflict('this draft is not open');
    const [{ n }] = await em.query(
      `SELECT count(*)::int AS n FROM collection_uploads WHERE draft_id = $1 AND status <> 'cancelled'`, [draft.id]);
    if (n >= MAX_UPLOADS_PER_DRAFT) throw conflict(`a draft holds at most ${MAX_UPLOADS_PER_DRAFT} uploads`);
    await chargeUpload(em, locked, body.size, opts.clientAddress, opts.quotas);
    const id = newId('ups');
    const now = await databaseNow(em);
    await em.getRepository(CollectionUpload).insert({
      id, organizationId: draft.organizationId, productId: draft.productId, draftId: draft.id, flowId: draft.flowId,
      clientAddress: opts.clientAddress, kind: body.kind, purpose,
      questionId: body.questionId ?? null, capture: body.capture ?? null, status: 'open', size: body.size, sha256: body.sha256,
      partSize, partCount: partCountOf(body.size, partSize), contentType: null, assetId: null, lastError: null,
      expiresAt: new Date(now.getTime() + opts.ttlMs), updatedAt: now,
    });
    const uploadToken = await issueSecret(em, 'upload', {
      organizationId: draft.organizationId, productId: draft.productId, draftId: draft.id, uploadId: id,
    });
    const expiresAt = new Date(now.getTime() + opts.ttlMs).toISOString();
    // The expiry timer's workflow starts only if this commits; the worker's relay starts it.
    await enqueueWorkflowCommand(em, {
      type: 'collection.upload.start', tenant: { organizationId: draft.organizationId, productId: draft.productId }, sessionId: id, expiresAt,
      taskQueue: opts.taskQueue,
    });
    const upload = await em.getRepository(CollectionUpload).findOneByOrFail({ id });
    return { upload, uploadToken };
  });
}

/** The upload of a draft, or (draftId null) a welcome video's upload. */
export async function findUpload(em: DataSource | EntityManager, draftId: string | null, uploadId: string, lock = false): Promise<CollectionUpload> {
  const upload = await em.getRepository(CollectionUpload).findOne({
    where: { id: uploadId, draftId: draftId ?? IsNull() }, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
  });
  if (!upload) throw notFound('upload');
  return upload;
}

function assertOpen(u: CollectionUpload): void {
  const status = effectiveStatus(u);
  if (status === 'expired') throw expired('upload');
  if (status !== 'open') throw conflict(`this upload is ${status}`);
}

/** A part's bytes as they arrive, the length the request declared, and the optional `x-part-sha256`. */
export interface PartBody { chunks: Chunks; length: number; sha256?: string }

/**
 * Stores one part (re-sending replaces it). Each part but the last is exactly partSize: the declared
 * length is judged before a byte is read, then the bytes stream to the store (hashed, counted, and for
 * part 1 sniffed as an accepted type of the kind before any is written).
 */
export async function putPart(
  ds: DataSource, store: MediaStore, upload: CollectionUpload, number: number, body: PartBody,
): Promise<UploadPart & { receivedBytes: number }> {
  assertOpen(upload);
  if (!Number.isInteger(number) || number < 1 || number > upload.partCount) {
    throw invalidInput(`part must be a whole number from 1 to ${upload.partCount}`);
  }
  const expected = expectedPartSize(upload.size, upload.partSize, number);
  const wrongSize = (got: number) => (got > expected ? tooLarge : invalidInput)(`part ${number} must be ${expected} bytes; got ${got}`);
  if (body.length !== expected) throw wrongSize(body.length);
  const { size, sha256 } = await receive(store, partKey(upload.id, number), body.chunks, {
    maxBytes: expected,
    tooLarge: wrongSize,
    ...(number === 1 ? { head: (bytes: Buffer) => sniffAs(upload.kind, bytes) } : {}),
    end: (received) => {
      if (received.size !== expected) throw wrongSize(received.size);
      if (body.sha256 !== undefined && body.sha256 !== received.sha256) throw checksumMismatch(`part ${number} does not match x-part-sha256`);
    },
  });
  return ds.transaction(async (em) => {
    const locked = await findUpload(em, upload.draftId, upload.id, true);
    // Ended while the bytes arrived (a cancel, a sweep): nothing will ever read this part again.
    if (locked.status !== 'open') await store.remove([partKey(upload.id, number)]).catch(() => undefined);
    assertOpen(locked);
    await em.query(
      `INSERT INTO collection_upload_parts (upload_id, number, size, sha256) VALUES ($1, $2, $3, $4)
       ON CONFLICT (upload_id, number) DO UPDATE SET size = EXCLUDED.size, sha256 = EXCLUDED.sha256, received_at = now()`,
      [upload.id, number, size, sha256]);
    await em.getRepository(CollectionUpload).update(upload.id, { lastError: null, updatedAt: dbNow });
    const parts = await partsOf(em, upload.id);
    return { number, size, sha256, receivedBytes: parts.reduce((s, p) => s + p.size, 0) };
  });
}

/** The accepted type of `kind` the head of a file sniffs as (npm file-type); anything else is 415. */
export async function sniffAs(kind: UploadKind, head: Buffer): Promise<string> {
  const sniffed = await fileTypeFromBuffer(head);
  const type = acceptedType(kind, sniffed?.mime);
  if (!type) throw unsupported(`these bytes are ${sniffed?.mime ?? 'of no known type'}, not an accepted ${kind} type`);
  return type;
}

/** What may be assembled now: the upload is open (or already complete) and every part is there. */
export async function checkAssemblable(ds: DataSource, upload: CollectionUpload): Promise<void> {
  const status = effectiveStatus(upload);
  if (status === 'complete' || status === 'assembling') return;
  assertOpen(upload);
  const parts = await partsOf(ds, upload.id);
  if (parts.length !== upload.partCount) {
    const have = new Set(parts.map((p) => p.number));
    const missing = Array.from({ length: upload.partCount }, (_, i) => i + 1).filter((n) => !have.has(n));
    throw conflict(`parts missing: ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ', …' : ''}`);
  }
}

/** Moves a welcome video (none for a draft's upload) along with its upload session. */
async function welcomeVideoState(em: DataSource | EntityManager, uploadId: string, from: string[], to: string): Promise<void> {
  await em.query(
    `UPDATE collection_welcome_videos SET state = $3, updated_at = now() WHERE upload_session_id = $1 AND state = ANY($2)`, [uploadId, from, to]);
}

export interface AssemblyResult {
  status: 'complete' | 'open' | 'cancelled' | 'expired';
  lastError: 'CHECKSUM_MISMATCH' | 'UNSUPPORTED_MEDIA_TYPE' | null;
  assetId: string | null;
}

/**
 * Assembles the original (the upload workflow's activity): concatenates the parts in the media store,
 * checks the whole file's sha256 and sniffed type, and records the `med_` media. A failed check puts
 * the upload back to `open` with `lastError`, keeping the parts. Safe to retry.
 */
export async function assembleUpload(ds: DataSource, store: MediaStore, uploadId: string): Promise<AssemblyResult> {
  const upload = await ds.getRepository(CollectionUpload).findOneBy({ id: uploadId });
  if (!upload) return { status: 'cancelled', lastError: null, assetId: null };
  if (upload.status === 'complete') return { status: 'complete', lastError: null, assetId: upload.assetId };
  if (upload.status === 'cancelled' || upload.status === 'expired') return { status: upload.status, lastError: null, assetId: null };
  await ds.query(`UPDATE collection_uploads SET status = 'assembling', updated_at = now() WHERE id = $1 AND status = 'open'`, [uploadId]);
  await welcomeVideoState(ds, uploadId, ['uploading'], 'assembling');
  const parts = await partsOf(ds, uploadId);
  const mediaId = mediaIdOf(uploadId);
  const key = mediaKey(upload.organizationId, mediaId);
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headBytes = 0;
  await store.compose(key, parts.map((p) => partKey(uploadId, p.number)), (chunk) => {
    hash.update(chunk);
    if (headBytes < SNIFF_BYTES) {
      head.push(chunk);
      headBytes += chunk.length;
    }
  });
  const sha256 = hash.digest('hex');
  const sniffed = await fileTypeFromBuffer(Buffer.concat(head).subarray(0, SNIFF_BYTES));
  const contentType = acceptedType(upload.kind, sniffed?.mime);
  const lastError = sha256 !== upload.sha256 ? 'CHECKSUM_MISMATCH' as const : contentType === null ? 'UNSUPPORTED_MEDIA_TYPE' as const : null;
  if (lastError) {
    await store.remove([key]);
    await ds.query(
      `UPDATE collection_uploads SET status = 'open', last_error = $2, updated_at = now() WHERE id = $1 AND status = 'assembling'`,
      [uploadId, lastError]);
    await welcomeVideoState(ds, uploadId, ['assembling'], 'uploading');
    return { status: 'open', lastError, assetId: null };
  }
  const done = await ds.transaction(async (em) => {
    const locked = await em.getRepository(CollectionUpload).findOne({ where: { id: uploadId }, lock: { mode: 'pessimistic_write' } });
    if (!locked || locked.status !== 'assembling') return false;
    await em.query(
      `INSERT INTO collection_media (id, organization_id, product_id, upload_id, kind, content_type, size, sha256, storage_key)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING`,
      [mediaId, upload.organizationId, upload.productId, uploadId, upload.kind, contentType, upload.size, sha256, key]);
    await em.getRepository(CollectionUpload).update(uploadId, {
      status: 'complete', contentType, assetId: mediaId, lastError: null, updatedAt: dbNow,
    });
    // Screening (docs/collection.md#welcome-video): no moderation provider is configured, so a welcome video is held
    // until a person clears or blocks it.
    await em.query(`UPDATE collection_welcome_videos SET media_id = $2 WHERE upload_session_id = $1`, [uploadId, mediaId]);
    await welcomeVideoState(em, uploadId, ['uploading', 'assembling', 'screening'], 'held');
    return true;
  });
  if (!done) {
    await store.remove([key]);
    const now = await ds.getRepository(CollectionUpload).findOneBy({ id: uploadId });
    return { status: (now?.status ?? 'cancelled') as AssemblyResult['status'], lastError: null, assetId: now?.assetId ?? null };
  }
  // The original is whole and checked; the parts have served their purpose.
  await store.remove(parts.map((p) => partKey(uploadId, p.number)));
  await ds.query(`DELETE FROM collection_upload_parts WHERE upload_id = $1`, [uploadId]);
  return { status: 'complete', lastError: null, assetId: mediaId };
}

/**
 * Cancels an open or complete upload of an open draft: `cancelled`, detached from the draft. The
 * bytes are erased by the upload workflow (eraseUpload), signalled through the outbox. A repeat changes nothing.
 */
export async function cancelUpload(ds: DataSource, draftId: string, uploadId: string): Promise<CollectionUpload> {
  return ds.transaction(async (em) => {
    const upload = await findUpload(em, draftId, uploadId, true);
    if (upload.status === 'cancelled') return upload;
    const draft = await em.getRepository(CollectionDraft).findOneByOrFail({ id: draftId });
    if (draft.status === 'submitted') throw conflict('this draft was submitted; its uploads are part of the story');
    if (upload.status === 'assembling') throw conflict('this upload is being assembled; cancel after it ends');
    await em.getRepository(CollectionUpload).update(uploadId, { status: 'cancelled', updatedAt: dbNow });
    await enqueueWorkflowCommand(em, { type: 'collection.upload.cancel', sessionId: uploadId });
    return em.getRepository(CollectionUpload).findOneByOrFail({ id: uploadId });
  });
}

/** Erases uploads' bytes (parts and originals) from the store in a few statements for the whole set; idempotent. */
export async function eraseUploadBytes(ds: DataSource, store: MediaStore, uploadIds: string[]): Promise<void> {
  if (uploadIds.length === 0) return;
  const uploads: Array<{ id: string; part_count: number }> = await ds.query(
    `SELECT id, part_count FROM collection_uploads WHERE id = ANY($1)`, [uploadIds]);
  const media: Array<{ storage_key: string }> = await ds.query(
    `SELECT storage_key FROM collection_media WHERE upload_id = ANY($1)`, [uploadIds]);
  const keys = uploads.flatMap((u) => Array.from({ length: u.part_count }, (_, i) => partKey(u.id, i + 1)));
  await store.remove([...keys, ...media.map((m) => m.storage_key)]);
  await ds.query(`DELETE FROM collection_upload_parts WHERE upload_id = ANY($1)`, [uploadIds]);
  await ds.query(`UPDATE collection_media SET erased_at = coalesce(erased_at, now()) WHERE upload_id = ANY($1)`, [uploadIds]);
}

/** The expiry timer fired: an upload still open is expired and its parts erased. */
export async function expireUpload(ds: DataSource, store: MediaStore, uploadId: string): Promise<boolean> {
  const [, count] = (await ds.query(
    `UPDATE collection_uploads SET status = 'expired', updated_at = now() WHERE id = $1 AND status = 'open'`, [uploadId])) as [unknown, number];
  if (count === 1) await eraseUploadBytes(ds, store, [uploadId]);
  return count === 1;
}

export async function uploadsOfDraft(em: DataSource | EntityManager, draftId: string): Promise<CollectionUpload[]> {
  return em.getRepository(CollectionUpload).find({ where: { draftId }, order: { createdAt: 'ASC', id: 'ASC' } });
}
