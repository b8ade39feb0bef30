import { createHmac } from 'node:crypto';
import { Client, WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { FastifyRequest } from 'fastify';
import { array, boolean, number, object, string } from 'yup';
import { DataSource } from 'typeorm';
import { findDraft, effectiveDraftStatus } from '../../db/collection/drafts';
import { pinnedFlow } from '../../db/collection/pinned-flow';
import {
  PartBody, cancelUpload, checkAssemblable, effectiveStatus, expired, findUpload, openUpload, partsOf, putPart, viewUpload,
} from '../../db/collection/uploads';
import { CollectionMedia, CollectionUpload } from '../../db/entities';
import { activeSigningKey } from '../../db/proof/proof-signing';
import { MAX_PART_SIZE, MIN_PART_SIZE, SHA256_HEX, UPLOAD_KINDS } from '../../db/rules/upload-rules';
import { safeEqual, sha256Hex } from '../../db/rules/secrets';
import { Config, transcriptionConfigured } from '../../runtime/config';
import { mediaStoreOf } from '../../runtime/media-store';
import { ServiceError, conflict, notFound, validationFailed } from '../../runtime/service-error';
import { tenantStartOptions } from '../../runtime/workflow-memo';
import { assembleUpdate, uploadWorkflow } from '../../workflows/collection/upload-workflow';
import type { AppDeps } from '../app-deps';
import { enforceRate } from '../plugins/auth';
import { pathParams } from '../plugins/path-params';
import { dataOf, errorOf, fileOf, noContent, timestamp } from '../plugins/responses';
import { RouteApp, strictObject } from '../plugins/validation';
import { countPublic, customerAuth, unauthorized } from './customer-auth';
import { servedWelcomeVideo } from '../../db/collection/media';
import { captionState, captionableUpload, correctCaptions, currentVtt, requestCaptions } from '../../db/collection/captions';
import { sendStoredRange } from '../plugins/byte-ranges';
import { bodyChunks, declaredLength, takeStreamedBodies } from '../plugins/streamed-body';
import { uploadWorkflowId } from '../../workflows/workflow-ids';
import { clientAddressDigest } from '../plugins/client-address';
import { CUSTOMER_ROUTE } from '../plugins/route-traits';
import { LINK_EXPIRED, LINK_UNAUTHORIZED, STATE_CONFLICT } from './collection-schemas';

const uploadParams = pathParams('id', 'sessionId');
const draftParams = pathParams('id');
const PREVIEW_TTL_MS = 10 * 60_000;

export const uploadSchema = object({
  id: string().required(), kind: string().required(), purpose: string().required(), status: string().required(),
  size: number().required(), sha256: string().required(), partSize: number().required(), partCount: number().required(),
  receivedParts: array(object({ number: number().required(), size: number().required(), sha256: string().required() })).defined(),
  receivedBytes: number().required(), contentType: string().nullable().defined(), assetId: string().nullable().defined(),
  lastError: string().nullable().defined(), questionId: string().nullable().defined(), expiresAt: timestamp().required(),
  previewUrl: string(),
});

const openBody = strictObject({
  kind: string().required().oneOf([...UPLOAD_KINDS]),
  size: number().required().integer().min(1),
  sha256: string().required().matches(SHA256_HEX, 'must be 64 lowercase hex characters'),
  purpose: string().oneOf(['response', 'photo', 'logo'] as const),
  partSize: number().integer().min(MIN_PART_SIZE).max(MAX_PART_SIZE),
  questionId: string().max(100),
  capture: strictObject({
    source: string().required().oneOf(['camera', 'screen', 'microphone', 'file'] as const),
    screenConsent: boolean(),
    consentVersionId: string().max(100),
  }).default(undefined),
}).required();

export const partQuery = strictObject({ part: number().required().integer() });
const previewQuery = strictObject({ t: string().max(300), track: string().oneOf(['captions'] as const) });

const previewMac = (secret: Buffer, sessionId: string, exp: string | number) =>
  createHmac('sha256', secret).update(`preview.${sessionId}.${exp}`).digest('base64url');

/** The short-lived preview token `<sessionId>.<exp>.<HMAC>`: not stored, reusable for 10 minutes. */
async function previewToken(ds: DataSource, sessionId: string, now = Date.now()): Promise<string> {
  const key = await activeSigningKey(ds);
  const exp = Math.floor((now + PREVIEW_TTL_MS) / 1000);
  return `${sessionId}.${exp}.${previewMac(key.tokenSecret, sessionId, exp)}`;
}

async function previewTokenValid(ds: DataSource, sessionId: string, token: string): Promise<boolean> {
  const [id, exp, mac] = token.split('.');
  if (id !== sessionId || !/^\d{1,12}$/.test(exp ?? '') || Number(exp) * 1000 <= Date.now()) return false;
  const key = await activeSigningKey(ds);
  // In constant time: a comparison that stops at the first wrong character tells a guesser how far it got.
  return safeEqual(previewMac(key.tokenSecret, sessionId, exp), mac ?? '');
}

/** Talking to `upload/<sessionId>` (started through the outbox at open); the assemble call starts it too if it comes first. */
export function uploadWorkflows(ds: DataSource, temporal: Client, config: Config) {
  const startOptions = (u: CollectionUpload) => ({
    workflowId: uploadWorkflowId(u.id),
    taskQueue: config.taskQueue,
    args: [{ sessionId: u.id, expiresAt: u.expiresAt.toISOString() }] as [{ sessionId: string; expiresAt: string }],
    ...tenantStartOptions(u.organizationId, u.productId),
  });
  /** The update's outcome, or null when it did not end within `waitMs` (the assembly goes on). */
  async function assemble(u: CollectionUpload, waitMs: number) {
    const handle = await temporal.workflow.startUpdateWithStart(assembleUpdate, {
      waitForStage: 'ACCEPTED',
      startWorkflowOperation: new WithStartWorkflowOperation(uploadWorkflow, { ...startOptions(u), workflowIdConflictPolicy: 'USE_EXISTING' }),
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), waitMs);
    });
    try {
      return await Promise.race([handle.result(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
  return {
    /**
     * The assemble step both upload routes share: assemble unless already complete, waiting up to `assembleWaitMs`,
     * then the upload as it is now; a cancelled upload is 409, a failed check its typed error.
     */
    async assembleOrThrow(u: CollectionUpload): Promise<CollectionUpload> {
      await checkAssemblable(ds, u);
      let outcome: Awaited<ReturnType<typeof assemble>> = null;
      if (u.status !== 'complete') {
        try {
          outcome = await assemble(u, config.assembleWaitMs);
        } catch (err) {
          if (err instanceof WorkflowUpdateFailedError) throw conflict('this upload was cancelled');
          throw err;
        }
      }
      if (outcome?.lastError === 'CHECKSUM_MISMATCH') {
        throw new ServiceError('CHECKSUM_MISMATCH', 'the assembled file does not match the sha256 given when the upload opened; the parts are kept');
      }
      if (outcome?.lastError === 'UNSUPPORTED_MEDIA_TYPE') throw new ServiceError('UNSUPPORTED_MEDIA_TYPE', `the file is not an accepted ${u.kind} type`);
      return findUpload(ds, u.draftId, u.id);
    },
  };
}

/** Resumable uploads of a draft's recordings and images; bytes go to the media store. */
export async function collectUploadRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  // Customer routes answer 415 for any body type they do not take (Fastify would read text/plain).
  app.removeContentTypeParser('text/plain');
  const cfg = deps.config;
  const store = mediaStoreOf(cfg);
  const workflows = uploadWorkflows(ds, deps.temporal, cfg);
  const draftAuth = customerAuth(ds, cfg, 'draft_session', { draftParam: 'id' });
  const uploadAuth = customerAuth(ds, cfg, 'upload', { draftParam: 'id', uploadParam: 'sessionId' });
  const transcriptionOff = () => new ServiceError('UNAVAILABLE', 'captions are not available: transcription is off');
  const partAuth = customerAuth(ds, cfg, 'upload', { draftParam: 'id', uploadParam: 'sessionId', rateMultiplier: 5 });

  takeStreamedBodies(app, 'application/octet-stream');

  const withState = async (u: CollectionUpload) => {
    const view = viewUpload(u, await partsOf(ds, u.id));
    const status = effectiveStatus(u);
    return {
      ...view, status,
      ...(status === 'complete' ? { previewUrl: `/api/proof/collect/drafts/${u.draftId}/uploads/${u.id}/preview?t=${await previewToken(ds, u.id)}` } : {}),
    };
  };

  app.post('/api/proof/collect/drafts/:id/uploads', {
    schema: { params: draftParams, body: openBody, response: { 409: STATE_CONFLICT,
      413: errorOf('TOO_LARGE: the body or upload is larger than allowed, or the draft\'s uploads would hold more than PROOF_UPLOAD_DRAFT_MAX_BYTES'),
      429: errorOf('RATE_LIMITED: more requests this minute, or the form (PROOF_UPLOAD_FLOW_DAILY_BYTES) or this client address ' +
          '(PROOF_UPLOAD_ADDRESS_DAILY_BYTES) opened its bytes of uploads for this UTC day; retry after Retry-After'),
      201: dataOf(object({ upload: uploadSchema.required(), uploadToken: string().required() })) } },
    onRequest: draftAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'openUpload',
      summary: 'Open a resumable multipart upload (size and sha256 of the whole file); the upload token once' },
  }, async (request, reply) => {
    const draft = await findDraft(ds, request.params.id);
    if (effectiveDraftStatus(draft) === 'expired') throw expired('draft');
    const flow = await pinnedFlow(ds.manager, draft.flowVersionId);
    const { upload, uploadToken } = await openUpload(ds, draft, request.body, {
      ttlMs: cfg.uploadTtlMs, consentTemplateVersionId: flow.consent?.consentTemplateVersionId ?? null, taskQueue: cfg.taskQueue,
      clientAddress: clientAddressDigest(request.ip), quotas: cfg.uploadQuotas,
    });
    return reply.code(201).send({ data: { upload: await withState(upload), uploadToken } });
  });

  app.get('/api/proof/collect/drafts/:id/uploads/:sessionId', {
    schema: { params: uploadParams, response: { 410: LINK_EXPIRED, 200: dataOf(object({ upload: uploadSchema.required() })) } },
    onRequest: uploadAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'getUpload', summary: 'Resume state: the parts received, with their sizes and sha256' },
  }, async (request) => {
    const upload = await findUpload(ds, request.params.id, request.params.sessionId);
    if (effectiveStatus(upload) === 'expired') throw expired('upload');
    return { data: { upload: await withState(upload) } };
  });

  app.put('/api/proof/collect/drafts/:id/uploads/:sessionId', {
    schema: {
      params: uploadParams, querystring: partQuery,
      response: { 409: STATE_CONFLICT, 410: LINK_EXPIRED, 413: errorOf('TOO_LARGE: the body or upload is larger than allowed'),
        415: errorOf('UNSUPPORTED_MEDIA_TYPE: the content type is not accepted'),
        422: errorOf('NOT_ELIGIBLE, CHECKSUM_MISMATCH or SOURCE_POLICY_BLOCKED: the content cannot be accepted'),
        200: dataOf(object({ number: number().required(), size: number().required(), sha256: string().required(), receivedBytes: number().required() })) },
    },
    onRequest: partAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'putUploadPart',
      summary: 'Send one part (application/octet-stream with its Content-Length, ?part=n, optional x-part-sha256); re-sending replaces it' },
  }, async (request) => {
    const body = partBody(request);
    const upload = await findUpload(ds, request.params.id, request.params.sessionId);
    return { data: await putPart(ds, store, upload, request.query.part, body) };
  });

  app.post('/api/proof/collect/drafts/:id/uploads/:sessionId', {
    schema: {
      params: uploadParams, body: strictObject({}).nullable().default(undefined),
      response: { 409: STATE_CONFLICT, 422: errorOf('NOT_ELIGIBLE, CHECKSUM_MISMATCH or SOURCE_POLICY_BLOCKED: the content cannot be accepted'),
        200: dataOf(object({ upload: uploadSchema.required() })), 202: dataOf(object({ upload: uploadSchema.required() })) },
    },
    onRequest: uploadAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'assembleUpload',
      summary: 'Assemble the immutable original: 200 complete within the wait, else 202 assembling; idempotent' },
  }, async (request, reply) => {
    const upload = await workflows.assembleOrThrow(await findUpload(ds, request.params.id, request.params.sessionId));
    return reply.code(upload.status === 'complete' ? 200 : 202).send({ data: { upload: await withState(upload) } });
  });

  app.delete('/api/proof/collect/drafts/:id/uploads/:sessionId', {
    schema: { params: uploadParams, response: { 204: noContent('No Content') } },
    onRequest: uploadAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'cancelUpload',
      summary: 'Cancel: the bytes are erased and the upload detached; a repeat is 204' },
  }, async (request, reply) => {
    await cancelUpload(ds, request.params.id, request.params.sessionId);
    return reply.code(204).send();
  });

  app.get(
    '/api/proof/collect/drafts/:id/uploads/:sessionId/preview', {
      schema: {
        params: uploadParams, querystring: previewQuery,
        response: {
          401: LINK_UNAUTHORIZED,
          429: errorOf('RATE_LIMITED: too many preview requests this minute from this client address or for this upload (RATE_LIMIT_PER_MINUTE each)'),
          409: errorOf('CONFLICT: the upload is not complete, or has no captions yet'),
          503: errorOf('UNAVAILABLE: captions asked for while transcription is off'),
          200: fileOf('*/*', 'the bytes, with the recording\'s own content type; text/vtt for track=captions'), 206: fileOf('*/*', 'a byte range'),
        },
      },
      onRequest: async (request, reply) => {
        const t = (request.query as { t?: unknown }).t;
        if (t === undefined) return uploadAuth.call(app, request, reply, () => undefined);
        // The query is validated after this hook: `?t=a&t=b` arrives here as a list.
        if (typeof t !== 'string') throw validationFailed([{ path: 't', message: 'may be given once' }], 'the query string does not match the schema');
        const { sessionId } = request.params as { sessionId: string };
        // Counted before the MAC is checked, so every guess counts: per client address and per upload.
        await countPublic(cfg, request, reply);
        await enforceRate(reply, `collect-preview:${sha256Hex(sessionId).slice(0, 32)}`, cfg.rateLimitPerMinute);
        if (!(await previewTokenValid(ds, sessionId, t))) throw unauthorized('the preview token is not valid or has expired');
      },
      config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'previewUpload',
        summary: 'Private preview of the customer\'s own recording (t= preview token or x-upload-token); ranges' },
    }, async (request, reply) => {
      const upload = await findUpload(ds, request.params.id, request.params.sessionId);
      if (upload.status !== 'complete' || !upload.assetId) throw conflict('the upload is not complete');
      if (request.query.track === 'captions') {
        if (!transcriptionConfigured(cfg)) throw transcriptionOff();
        const vtt = await currentVtt(ds, upload.id);
        if (vtt === null) throw conflict('this recording has no captions yet');
        return reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff')
          .header('content-security-policy', "default-src 'none'").type('text/vtt; charset=utf-8').send(vtt);
      }
      const media = await ds.getRepository(CollectionMedia).findOneByOrFail({ id: upload.assetId });
      reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff').header('accept-ranges', 'bytes')
        .header('content-security-policy', "default-src 'none'").type(media.contentType);
      return sendStoredRange(reply, request.headers.range, media, store);
    },
  );

  app.get('/api/proof/collect/welcome/:videoId', {
    schema: {
      params: pathParams('videoId'),
      response: { 200: fileOf('video/*', 'the video'), 206: fileOf('video/*', 'a byte range') },
    },
    onRequest: async (request, reply) => countPublic(cfg, request, reply),
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'getWelcomeVideo',
      summary: 'A live flow\'s welcome video (byte ranges); 404 unless it passed screening or was cleared and the live version uses it' },
  }, async (request, reply) => {
    const media = await servedWelcomeVideo(ds, request.params.videoId);
    if (!media) throw notFound('welcome video');
    reply.header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').header('accept-ranges', 'bytes').type(media.contentType);
    return sendStoredRange(reply, request.headers.range, media, store);
  });

  const captionBody = strictObject({
    baseVersion: number().required().integer().min(0),
    language: string().max(35).matches(/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/, 'must be a language tag such as en or pt-BR'),
    cues: array(strictObject({
      startMs: number().required().integer().min(0), endMs: number().required().integer().min(0), text: string().required().max(500),
    })).required().min(1).max(5000),
  }).required();
  const captionAnswer = dataOf(object({
    status: string().required().oneOf(['none', 'pending', 'ready', 'failed'] as const),
    versions: array(object({ version: number().required(), source: string().required(), language: string().nullable().defined(),
      createdAt: timestamp().required() })).defined(),
    currentVtt: string().nullable().defined(),
  }));
  const unavailable = errorOf('UNAVAILABLE: transcription is off (TRANSCRIBE_BASE_URL, TRANSCRIBE_MODEL)');
  const stateConflict = errorOf('CONFLICT: not an audio or video recording, not complete, a stale baseVersion, or the draft was submitted');
  const transcription = { maxAttempts: cfg.aiMaxAttempts, retryInitialMs: cfg.aiRetryInitialMs, timeoutMs: cfg.aiTimeoutMs };

  app.get('/api/proof/collect/drafts/:id/uploads/:sessionId/captions', {
    schema: { params: uploadParams, response: { 409: stateConflict, 503: unavailable, 200: captionAnswer } },
    onRequest: draftAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'getCaptions',
      summary: 'Caption state: status, versions and the current WebVTT; 503 UNAVAILABLE while transcription is off' },
  }, async (request) => {
    if (!transcriptionConfigured(cfg)) throw transcriptionOff();
    const upload = await captionableUpload(ds, request.params.id, request.params.sessionId, false);
    return { data: await captionState(ds, upload.id) };
  });

  app.post('/api/proof/collect/drafts/:id/uploads/:sessionId/captions', {
    schema: {
      params: uploadParams, body: strictObject({}).nullable().default(undefined),
      response: { 409: stateConflict, 503: unavailable, 200: captionAnswer, 202: captionAnswer },
    },
    onRequest: draftAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'requestCaptions',
      summary: 'Automatic captions through the transcription provider: 202 pending (ai/transcription/<sessionId>), 200 when a track exists' },
  }, async (request, reply) => {
    if (!transcriptionConfigured(cfg)) throw transcriptionOff();
    const state = await requestCaptions(ds, request.params.id, request.params.sessionId, transcription, cfg.taskQueue);
    return reply.code(state.status === 'ready' ? 200 : 202).send({ data: state });
  });

  app.put('/api/proof/collect/drafts/:id/uploads/:sessionId/captions', {
    schema: { params: uploadParams, body: captionBody, response: { 409: stateConflict, 503: unavailable, 201: captionAnswer } },
    onRequest: draftAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'correctCaptions',
      summary: 'Corrected captions on top of baseVersion: a new version; earlier ones stay' },
  }, async (request, reply) => {
    if (!transcriptionConfigured(cfg)) throw transcriptionOff();
    return reply.code(201).send({ data: await correctCaptions(ds, request.params.id, request.params.sessionId, request.body) });
  });
}

/**
 * A part's body: octet-stream bytes of a declared length, not read yet (the route's credential and
 * binding were checked in onRequest; the length is judged against the part's slot before any byte is read);
 * its optional `x-part-sha256` is 64 lowercase hex characters.
 */
export function partBody(request: FastifyRequest): PartBody {
  if (!request.headers['content-type']?.startsWith('application/octet-stream')) {
    throw new ServiceError('UNSUPPORTED_MEDIA_TYPE', 'send the part as application/octet-stream');
  }
  const declared = request.headers['x-part-sha256'];
  if (declared !== undefined && (typeof declared !== 'string' || !SHA256_HEX.test(declared))) {
    throw new ServiceError('INVALID_INPUT', 'x-part-sha256 must be 64 lowercase hex characters');
  }
  return { chunks: bodyChunks(request), length: declaredLength(request), sha256: declared };
}
