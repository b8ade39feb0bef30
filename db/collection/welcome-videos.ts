import { DataSource, EntityManager, In } from 'typeorm';
import { ServiceError, conflict, notFound } from '../../runtime/service-error';
import { CollectionFlow, CollectionUpload, CollectionWelcomeVideo } from '../entities';
import { newId } from '../rules/ids';
import { DEFAULT_PART_SIZE, KIND_MAX_BYTES, MAX_PARTS, partCountOf } from '../rules/upload-rules';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { findFlow } from './flows';
import { Teammate } from './scope';
import { issueSecret } from './secrets';
import { invalidInput } from './uploads';
import { databaseNow, dbNow } from '../clock';

export function viewWelcomeVideo(v: CollectionWelcomeVideo) {
  return {
    id: v.id,
    flowId: v.flowId,
    state: v.state,
    size: Number(v.size),
    sha256: v.sha256,
    uploadSessionId: v.uploadSessionId,
    mediaId: v.mediaId,
    reviewedBy: v.reviewedBy,
    reviewedAt: v.reviewedAt?.toISOString() ?? null,
    createdAt: v.createdAt.toISOString(),
    updatedAt: v.updatedAt.toISOString(),
  };
}

export async function listWelcomeVideos(ds: DataSource, organizationId: string, flowId: string) {
  await findFlow(ds.manager, organizationId, flowId);
  return ds.getRepository(CollectionWelcomeVideo).find({ where: { flowId, organizationId }, order: { createdAt: 'ASC', id: 'ASC' } });
}

export async function findWelcomeVideo(em: EntityManager, organizationId: string, flowId: string, videoId: string, lock = false) {
  const video = await em.getRepository(CollectionWelcomeVideo).findOne({
    where: { id: videoId, flowId, organizationId }, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
  });
  if (!video) throw notFound('welcome video');
  return video;
}

/**
 * A welcome video and its upload session (a `collection_uploads` row without a draft, parts and
 * original in the media store like any customer recording); its `ut_` token is shown once.
 */
export async function startWelcomeUpload(
  ds: DataSource, who: Teammate, flowId: string, body: { size: number; sha256: string; partSize?: number }, opts: { ttlMs: number; taskQueue: string },
) {
  if (body.size > KIND_MAX_BYTES.video) throw new ServiceError('TOO_LARGE', `a video may be at most ${KIND_MAX_BYTES.video} bytes`);
  const partSize = body.partSize ?? DEFAULT_PART_SIZE;
  if (partCountOf(body.size, partSize) > MAX_PARTS) throw invalidInput(`at most ${MAX_PARTS} parts: choose a larger partSize`);
  return ds.transaction(async (em) => {
    const flow = await findFlow(em, who.organizationId, flowId, true);
    if (flow.state === 'archived') throw conflict('the flow is archived');
    const now = await databaseNow(em);
    const videoId = newId('wvd');
    const uploadId = newId('ups');
    await em.getRepository(CollectionWelcomeVideo).insert({
      id: videoId, organizationId: flow.organizationId, productId: flow.productId, flowId: flow.id, uploadSessionId: null, mediaId: null,
      state: 'uploading', size: String(body.size), sha256: body.sha256, reviewedBy: null, reviewedAt: null, updatedAt: now,
    });
    await em.getRepository(CollectionUpload).insert({
      id: uploadId, organizationId: flow.organizationId, productId: flow.productId, draftId: null, kind: 'video', purpose: 'welcome_video',
      questionId: null, capture: null, status: 'open', size: body.size, sha256: body.sha256, partSize,
      partCount: partCountOf(body.size, partSize), contentType: null, assetId: null, lastError: null,
      expiresAt: new Date(now.getTime() + opts.ttlMs), updatedAt: now,
    });
    await em.getRepository(CollectionWelcomeVideo).update({ id: videoId }, { uploadSessionId: uploadId });
    const uploadToken = await issueSecret(em, 'upload', { organizationId: flow.organizationId, productId: flow.productId, uploadId });
    // The expiry timer's workflow starts only if this commits; the worker's relay starts it.
    await enqueueWorkflowCommand(em, {
      type: 'collection.upload.start', tenant: { organizationId: flow.organizationId, productId: flow.productId },
      sessionId: uploadId, expiresAt: new Date(now.getTime() + opts.ttlMs).toISOString(), taskQueue: opts.taskQueue,
    });
    return {
      video: await em.getRepository(CollectionWelcomeVideo).findOneByOrFail({ id: videoId }),
      upload: await em.getRepository(CollectionUpload).findOneByOrFail({ id: uploadId }),
      uploadToken,
    };
  });
}

/** A person's screening decision on a held video: `cleared` may be served, `blocked` never. */
export async function reviewWelcomeVideo(ds: DataSource, who: Teammate, flowId: string, videoId: string, decision: 'clear' | 'block') {
  return ds.transaction(async (em) => {
    const video = await findWelcomeVideo(em, who.organizationId, flowId, videoId, true);
    if (video.state !== 'held') throw conflict(`the video is ${video.state}; only a held video is reviewed`);
    await em.getRepository(CollectionWelcomeVideo).update({ id: video.id }, {
      state: decision === 'clear' ? 'cleared' : 'blocked', reviewedBy: who.teammateId, reviewedAt: dbNow, updatedAt: dbNow,
    });
    return em.getRepository(CollectionWelcomeVideo).findOneByOrFail({ id: video.id });
  });
}

/**
 * Puts a video whose assembly completed on the flow's draft definition (a new draft revision); the
 * next publish checks it was passed or cleared.
 */
export async function attachWelcomeVideo(ds: DataSource, video: CollectionWelcomeVideo): Promise<void> {
  await ds.transaction(async (em) => {
    const flow = await em.getRepository(CollectionFlow).findOne({ where: { id: video.flowId }, lock: { mode: 'pessimistic_write' } });
    if (!flow || flow.draftDefinition.welcomeVideoId === video.id) return;
    await em.getRepository(CollectionFlow).update({ id: flow.id }, {
      draftDefinition: { ...flow.draftDefinition, welcomeVideoId: video.id }, draftRevision: flow.draftRevision + 1, updatedAt: dbNow,
    });
  });
}

/**
 * Removes every video of the flow: `removed` stops serving at once; their uploads are cancelled and
 * the upload workflows, told through the outbox, erase the bytes.
 */
export async function removeWelcomeVideos(ds: DataSource, organizationId: string, flowId: string): Promise<void> {
  return ds.transaction(async (em) => {
    await findFlow(em, organizationId, flowId, true);
    const videos = await em.getRepository(CollectionWelcomeVideo).find({ where: { flowId, organizationId }, lock: { mode: 'pessimistic_write' } });
    const live = videos.filter((v) => v.state !== 'removed');
    if (!live.length) return;
    await em.getRepository(CollectionWelcomeVideo).update({ id: In(live.map((v) => v.id)) }, { state: 'removed', updatedAt: dbNow });
    const uploads = live.flatMap((v) => (v.uploadSessionId ? [v.uploadSessionId] : []));
    if (uploads.length) {
      await em.query(
        `UPDATE collection_uploads SET status = 'cancelled', updated_at = now() WHERE id = ANY($1) AND status IN ('open', 'complete', 'expired')`, [uploads]);
    }
    for (const sessionId of uploads) await enqueueWorkflowCommand(em, { type: 'collection.upload.cancel', sessionId });
  });
}
