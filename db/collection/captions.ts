import { DataSource, EntityManager } from 'typeorm';
import { ServiceError, conflict } from '../../runtime/service-error';
import { CollectionDraft, CollectionUpload } from '../entities';
import { CaptionCue, cueProblem, cuesToVtt } from '../rules/captions';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { findUpload } from './uploads';

export type CaptionStatus = 'none' | 'pending' | 'ready' | 'failed';

export interface CaptionState {
  status: CaptionStatus;
  versions: Array<{ version: number; source: 'automatic' | 'customer'; language: string | null; createdAt: string }>;
  currentVtt: string | null;
}

/** The transcription settings the relay hands to `ai/transcription/<sessionId>` (durations travel in the command). */
export interface TranscriptionSettings {
  maxAttempts: number;
  retryInitialMs: number;
  timeoutMs: number;
}

export async function captionState(em: DataSource | EntityManager, uploadId: string): Promise<CaptionState> {
  const [track]: Array<{ status: CaptionStatus; current_version: number }> = await em.query(
    `SELECT status, current_version FROM collection_caption_tracks WHERE upload_id = $1`, [uploadId]);
  if (!track) return { status: 'none', versions: [], currentVtt: null };
  const rows: Array<{ version: number; source: 'automatic' | 'customer'; language: string | null; vtt: string; created_at: Date }> = await em.query(
    `SELECT version, source, language, vtt, created_at FROM collection_caption_versions WHERE upload_id = $1 ORDER BY version`, [uploadId]);
  const current = rows.find((r) => r.version === track.current_version);
  return {
    // A track with a version reads as ready, even while a newer automatic pass runs or after one failed.
    status: current ? 'ready' : track.status,
    versions: rows.map((r) => ({ version: r.version, source: r.source, language: r.language, createdAt: r.created_at.toISOString() })),
    currentVtt: current?.vtt ?? null,
  };
}

/**
 * The upload a caption call names, checked for captions: a complete recording (audio or video) of the
 * draft; writes also need the draft open.
 */
export async function captionableUpload(em: DataSource | EntityManager, draftId: string, uploadId: string, write: boolean): Promise<CollectionUpload> {
  const upload = await findUpload(em, draftId, uploadId, write);
  if (upload.kind !== 'audio' && upload.kind !== 'video') throw conflict('captions are for audio and video recordings');
  if (upload.status !== 'complete' || !upload.assetId) throw conflict('the recording is not complete');
  if (write) {
    const draft = await em.getRepository(CollectionDraft).findOneByOrFail({ id: draftId });
    if (draft.status !== 'open') throw conflict(`this draft is ${draft.status}; its captions are final`);
  }
  return upload;
}

/**
 * Asks for automatic captions: nothing new when a track exists or a pass is pending; otherwise the
 * track is `pending` and `ai/transcription/<sessionId>` is started through the outbox in the same transaction.
 */
export async function requestCaptions(
  ds: DataSource, draftId: string, uploadId: string, settings: TranscriptionSettings, taskQueue: string,
): Promise<CaptionState> {
  return ds.transaction(async (em) => {
    const upload = await captionableUpload(em, draftId, uploadId, true);
    const state = await captionState(em, uploadId);
    if (state.status === 'ready' || state.status === 'pending') return state;
    await em.query(
      `INSERT INTO collection_caption_tracks (upload_id, status) VALUES ($1, 'pending')
       ON CONFLICT (upload_id) DO UPDATE SET status = 'pending', failure_reason = NULL, updated_at = now()`, [uploadId]);
    await enqueueWorkflowCommand(em, {
      type: 'collection.transcription.start', tenant: { organizationId: upload.organizationId, productId: upload.productId },
      sessionId: uploadId, settings, taskQueue,
    });
    return captionState(em, uploadId);
  });
}

export interface CaptionCorrection {
  baseVersion: number;
  language?: string;
  cues: CaptionCue[];
}

/** Corrected captions: a new version on top of `baseVersion` (else 409 stale); earlier versions stay. */
export async function correctCaptions(ds: DataSource, draftId: string, uploadId: string, body: CaptionCorrection): Promise<CaptionState> {
  const problem = cueProblem(body.cues);
  if (problem) throw new ServiceError('INVALID_INPUT', problem);
  return ds.transaction(async (em) => {
    await captionableUpload(em, draftId, uploadId, true);
    await em.query(
      `INSERT INTO collection_caption_tracks (upload_id, status) VALUES ($1, 'ready') ON CONFLICT (upload_id) DO NOTHING`, [uploadId]);
    const [track]: Array<{ current_version: number }> = await em.query(
      `SELECT current_version FROM collection_caption_tracks WHERE upload_id = $1 FOR UPDATE`, [uploadId]);
    if (track.current_version !== body.baseVersion) {
      throw conflict(`the captions changed: the current version is ${track.current_version}, not ${body.baseVersion}`);
    }
    await insertVersion(em, uploadId, track.current_version + 1, 'customer', body.language ?? null, cuesToVtt(body.cues, body.language));
    return captionState(em, uploadId);
  });
}

async function insertVersion(em: EntityManager, uploadId: string, version: number, source: string, language: string | null, vtt: string) {
  await em.query(
    `INSERT INTO collection_caption_versions (upload_id, version, source, language, vtt) VALUES ($1, $2, $3, $4, $5)`,
    [uploadId, version, source, language, vtt]);
  await em.query(
    `UPDATE collection_caption_tracks SET current_version = $2, status = 'ready', failure_reason = NULL, updated_at = now() WHERE upload_id = $1`,
    [uploadId, version]);
}

/** The transcription workflow's result: the next version, written once (a retried activity finds the track no longer pending). */
export async function recordAutomaticCaptions(ds: DataSource, uploadId: string, vtt: string): Promise<void> {
  await ds.transaction(async (em) => {
    const [track]: Array<{ status: string; current_version: number }> = await em.query(
      `SELECT status, current_version FROM collection_caption_tracks WHERE upload_id = $1 FOR UPDATE`, [uploadId]);
    if (!track || track.status !== 'pending') return;
    await insertVersion(em, uploadId, track.current_version + 1, 'automatic', null, vtt);
  });
}

/** The provider kept failing: the track says so and no text is made up; a later POST may try again. */
export async function failCaptions(ds: DataSource, uploadId: string, reason: string): Promise<void> {
  await ds.query(
    `UPDATE collection_caption_tracks SET status = 'failed', failure_reason = $2, updated_at = now() WHERE upload_id = $1 AND status = 'pending'`,
    [uploadId, reason.slice(0, 200)]);
}

/** The current WebVTT of a recording, for the preview's `track=captions`. */
export async function currentVtt(ds: DataSource, uploadId: string): Promise<string | null> {
  return (await captionState(ds, uploadId)).currentVtt;
}
