import { onRequestHookHandler } from 'fastify';
import { number, object, string } from 'yup';
import { findUpload, partsOf, putPart, viewUpload, effectiveStatus } from '../../db/collection/uploads';
import {
  attachWelcomeVideo, findWelcomeVideo, listWelcomeVideos, removeWelcomeVideos, reviewWelcomeVideo, startWelcomeUpload, viewWelcomeVideo,
} from '../../db/collection/welcome-videos';
import { CollectionUpload, CollectionWelcomeVideo } from '../../db/entities';
import { WELCOME_VIDEO_STATES } from '../../db/entities/collection-welcome-video';
import { KIND_MAX_BYTES, MAX_PART_SIZE, MIN_PART_SIZE, SHA256_HEX } from '../../db/rules/upload-rules';
import { mediaStoreOf } from '../../runtime/media-store';
import { ServiceError, conflict } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { sessionPrincipal } from '../plugins/auth';
import { idParams, pathParams } from '../plugins/path-params';
import { dataOf, errorOf, noContent, pageOf, timestamp } from '../plugins/responses';
import { takeStreamedBodies } from '../plugins/streamed-body';
import { RouteApp, strictObject } from '../plugins/validation';
import { readers, writers } from './collection-schemas';
import { partBody, partQuery, uploadSchema, uploadWorkflows } from './collect-uploads';
import { customerAuth } from './customer-auth';
import { CUSTOMER_ROUTE } from '../plugins/route-traits';

const videoParams = pathParams('id', 'videoId');

const videoSchema = object({
  id: string().required(),
  flowId: string().required(),
  state: string().oneOf([...WELCOME_VIDEO_STATES]).required(),
  size: number().required(),
  sha256: string().required(),
  uploadSessionId: string().nullable().defined(),
  mediaId: string().nullable().defined(),
  reviewedBy: string().nullable().defined(),
  reviewedAt: timestamp().nullable().defined(),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
});

const actionBody = strictObject({
  action: string().oneOf(['start_upload', 'review'] as const).required(),
  size: number().integer().min(1).max(KIND_MAX_BYTES.video * 2),
  sha256: string().matches(SHA256_HEX, 'must be 64 lowercase hex characters'),
  partSize: number().integer().min(MIN_PART_SIZE).max(MAX_PART_SIZE),
  videoId: string().max(100),
  decision: string().oneOf(['clear', 'block'] as const),
}).test('fields', 'start_upload takes size and sha256 (partSize optional); review takes videoId and decision', (v) => {
  if (!v) return true;
  return v.action === 'start_upload'
    ? v.size !== undefined && v.sha256 !== undefined && v.videoId === undefined && v.decision === undefined
    : v.videoId !== undefined && v.decision !== undefined && v.size === undefined && v.sha256 === undefined && v.partSize === undefined;
}).required();

const CONFLICT = errorOf('CONFLICT: the video or its upload is not in a state that allows this');

/**
 * A flow's welcome video (docs/collection.md#setup-teammates, docs/collection.md#welcome-video): uploaded in parts through the same `upload/<sessionId>`
 * workflow and media store as customer recordings, held after assembly until a person clears it (no
 * moderation provider is configured), served by `GET /api/proof/collect/welcome/{videoId}` only while
 * cleared and referenced by the live version.
 */
export async function collectionWelcomeVideoRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const cfg = deps.config;
  const store = mediaStoreOf(cfg);
  const workflows = uploadWorkflows(ds, deps.temporal, cfg);
  const who = (request: Parameters<typeof sessionPrincipal>[0]) => {
    const s = sessionPrincipal(request);
    return { organizationId: s.organizationId, teammateId: s.teammateId };
  };
  app.removeContentTypeParser('text/plain');
  takeStreamedBodies(app, 'application/octet-stream');

  const uploadState = async (u: CollectionUpload) => ({ ...viewUpload(u, await partsOf(ds, u.id)), status: effectiveStatus(u) });
  const withUpload = async (v: CollectionWelcomeVideo) => {
    const upload = v.uploadSessionId ? await ds.getRepository(CollectionUpload).findOneBy({ id: v.uploadSessionId }) : null;
    return { video: viewWelcomeVideo(v), upload: upload ? await uploadState(upload) : null };
  };
  const stateSchema = object({ video: videoSchema.required(), upload: uploadSchema.nullable().defined() });

  // The part PUT carries the upload token of the video's own session, for the uploader that holds it.
  const uploadAuth = customerAuth(ds, cfg, 'upload', { rateMultiplier: 5 });
  const videoUploadAuth: onRequestHookHandler = async function (request, reply) {
    await uploadAuth.call(this, request, reply, () => undefined);
    const { id, videoId } = request.params as { id: string; videoId: string };
    const video = await ds.getRepository(CollectionWelcomeVideo).findOneBy({ id: videoId, flowId: id });
    if (!video || video.uploadSessionId !== request.customerSecret?.uploadId) throw new ServiceError('NOT_FOUND', 'welcome video not found');
  };

  app.get('/api/proof/collect/forms/:id/welcome-video', {
    schema: { params: idParams, response: { 200: pageOf(videoSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'listWelcomeVideos',
      summary: 'The flow\'s welcome videos with their screening state' },
  }, async (request) => ({ data: (await listWelcomeVideos(ds, who(request).organizationId, request.params.id)).map(viewWelcomeVideo), nextCursor: null }));

  app.post('/api/proof/collect/forms/:id/welcome-video', {
    schema: {
      params: idParams, body: actionBody,
      response: {
        201: dataOf(object({ video: videoSchema.required(), upload: uploadSchema.required(), uploadToken: string().required() })),
        200: dataOf(object({ video: videoSchema.required() })),
        409: CONFLICT,
        413: errorOf('TOO_LARGE: over the 512 MiB a video may have'),
      },
    },
    config: {
      tag: 'collection', ...CUSTOMER_ROUTE,
      ...writers, operationId: 'actOnWelcomeVideo',
      summary: 'Start a signed resumable upload of a welcome video (its upload token once), or clear or block a held one',
    },
  }, async (request, reply) => {
    const body = request.body;
    if (body.action === 'review') {
      const video = await reviewWelcomeVideo(ds, who(request), request.params.id, body.videoId!, body.decision!);
      return { data: { video: viewWelcomeVideo(video) } };
    }
    const made = await startWelcomeUpload(ds, who(request), request.params.id, { size: body.size!, sha256: body.sha256!, partSize: body.partSize },
      { ttlMs: cfg.uploadTtlMs, taskQueue: cfg.taskQueue });
    return reply.code(201).send({ data: { video: viewWelcomeVideo(made.video), upload: await uploadState(made.upload), uploadToken: made.uploadToken } });
  });

  app.delete('/api/proof/collect/forms/:id/welcome-video', {
    schema: { params: idParams, response: { 204: noContent('removed: no longer served; the bytes are erased') } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...writers, operationId: 'removeWelcomeVideos',
      summary: 'Remove the flow\'s welcome videos: serving stops at once, the bytes are erased' },
  }, async (request, reply) => {
    await removeWelcomeVideos(ds, who(request).organizationId, request.params.id);
    return reply.code(204).send();
  });

  app.get('/api/proof/collect/forms/:id/welcome-video/:videoId', {
    schema: { params: videoParams, response: { 200: dataOf(stateSchema) } },
    config: { tag: 'collection', ...CUSTOMER_ROUTE, ...readers, operationId: 'getWelcomeVideoState',
      summary: 'A welcome video\'s state and its upload\'s resume state (parts received)' },
  }, async (request) => ({ data: await withUpload(await findWelcomeVideo(ds.manager, who(request).organizationId, request.params.id,
    request.params.videoId)) }));

  app.put('/api/proof/collect/forms/:id/welcome-video/:videoId', {
    schema: {
      params: videoParams, querystring: partQuery,
      response: {
        200: dataOf(object({ number: number().required(), size: number().required(), sha256: string().required(), receivedBytes: number().required() })),
        401: errorOf('UNAUTHORIZED: the x-upload-token is missing, malformed or unknown'),
        409: CONFLICT,
        410: errorOf('EXPIRED: the upload session has expired'),
        413: errorOf('TOO_LARGE: the part is larger than its slot'),
        415: errorOf('UNSUPPORTED_MEDIA_TYPE: not application/octet-stream, or part 1 is not MP4, MOV or WebM video'),
        422: errorOf('CHECKSUM_MISMATCH: the part does not match x-part-sha256'),
      },
    },
    onRequest: videoUploadAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'putWelcomeVideoPart',
      summary: 'Send one part of the welcome video (application/octet-stream with its Content-Length, ?part=n, x-upload-token); re-sending replaces it' },
  }, async (request) => {
    const body = partBody(request);
    const upload = await findUpload(ds, null, request.customerSecret!.uploadId!);
    return { data: await putPart(ds, store, upload, request.query.part, body) };
  });

  app.post('/api/proof/collect/forms/:id/welcome-video/:videoId', {
    schema: {
      params: videoParams, body: strictObject({}).nullable().default(undefined),
      response: {
        200: dataOf(stateSchema), 202: dataOf(stateSchema), 409: CONFLICT,
        415: errorOf('UNSUPPORTED_MEDIA_TYPE: the file is not MP4, MOV or WebM video'),
        422: errorOf('CHECKSUM_MISMATCH: the assembled file does not match the sha256 given at the start'),
      },
    },
    config: {
      tag: 'collection', ...CUSTOMER_ROUTE,
      ...writers, operationId: 'assembleWelcomeVideo',
      summary: 'Assemble the video, screen it (held for a person without a moderation provider) and attach it to the draft definition; 202 while assembling',
    },
  }, async (request, reply) => {
    const video = await findWelcomeVideo(ds.manager, who(request).organizationId, request.params.id, request.params.videoId);
    if (video.state === 'removed' || !video.uploadSessionId) throw conflict('the video was removed');
    const upload = await workflows.assembleOrThrow(await findUpload(ds, null, video.uploadSessionId));
    const current = await ds.getRepository(CollectionWelcomeVideo).findOneByOrFail({ id: video.id });
    if (upload.status === 'complete') await attachWelcomeVideo(ds, current);
    return reply.code(upload.status === 'complete' ? 200 : 202).send({ data: await withUpload(current) });
  });
}
