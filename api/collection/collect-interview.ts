import { onRequestHookHandler } from 'fastify';
import { array, number, object, string } from 'yup';
import { answerInterview, createInterview, finishInterview, putInterviewUpload, getInterview, startInterviewUpload } from '../../db/collection/interviews';
import { SHA256_HEX } from '../../db/rules/upload-rules';
import { mediaStoreOf } from '../../runtime/media-store';
import { ServiceError, notFound } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { sessionPrincipal } from '../plugins/auth';
import { pathParams } from '../plugins/path-params';
import { dataOf, errorOf, timestamp } from '../plugins/responses';
import { bodyChunks, declaredLength, takeStreamedBodies } from '../plugins/streamed-body';
import { RouteApp, strictObject } from '../plugins/validation';
import { customerAuth, secretOf } from './customer-auth';
import { writers } from './collection-schemas';
import { clientAddressDigest } from '../plugins/client-address';
import { CUSTOMER_ROUTE } from '../plugins/route-traits';

const questionSchema = object({ id: string().required(), text: string().required() });
const interviewView = object({
  id: string().required(), state: string().required().oneOf(['open', 'finished'] as const), expiresAt: timestamp().required(),
  finishedAt: timestamp().nullable().defined(),
  questions: array(object({
    id: string().required(), text: string().required(),
    answer: object({ text: string().nullable().defined(), mediaId: string().nullable().defined() }).nullable().defined(),
  })).defined(),
});
const interviewUpload = object({
  id: string().required(), questionId: string().required(), status: string().required(), size: number().required(),
  sha256: string().required(), expiresAt: timestamp().required(),
});

const createBody = strictObject({
  productId: string().required().max(100),
  proofItemId: string().max(100),
  personRef: string().min(1).max(200),
  email: string().email().max(320),
  questions: array(strictObject({ text: string().required().min(3).max(500) }).required()).required().min(1).max(10),
}).required();

/** One body, three shapes: an answer's text, opening a recorded answer's upload, or finishing. */
const interviewBody = strictObject({
  action: string().oneOf(['start_upload', 'finish'] as const),
  questionId: string().max(20),
  text: string().min(1).max(10_000),
  size: number().integer().min(1),
  sha256: string().matches(SHA256_HEX, 'must be 64 lowercase hex characters'),
}).test('shape', 'send {questionId, text}, {action:"start_upload", questionId, size, sha256} or {action:"finish"}', (v) => {
  if (!v) return false;
  const keys = Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined).sort().join(',');
  return (v.action === undefined && keys === 'questionId,text')
    || (v.action === 'start_upload' && keys === 'action,questionId,sha256,size')
    || (v.action === 'finish' && keys === 'action');
}).required();

/**
 * Asynchronous case-study interviews: a teammate makes one (`POST /api/workspace/proof/interviews`);
 * the customer answers through their `iv_` link, by text or by a recorded answer sent in one request.
 */
export async function collectInterviewRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const cfg = deps.config;
  const store = mediaStoreOf(cfg);
  // Customer routes answer 415 for any body type they do not take (Fastify would read text/plain).
  app.removeContentTypeParser('text/plain');
  takeStreamedBodies(app, 'application/octet-stream');
  const interviewAuth = customerAuth(ds, cfg, 'interview');
  const tokenAuth = customerAuth(ds, cfg, 'upload', { uploadParam: 'sessionId' });
  // The token must be this session's, and the session an interview's (a draft's upload token is not): 404 before the body is read.
  const uploadAuth: onRequestHookHandler = async function (request, reply) {
    await tokenAuth.call(this, request, reply, () => undefined);
    if (!request.customerSecret?.interviewId) throw notFound('upload');
  };
  const interviewOf = (request: Parameters<typeof secretOf>[0]) => {
    const id = secretOf(request).interviewId;
    if (!id) throw notFound('interview');
    return id;
  };
  const finished = errorOf('CONFLICT or ALREADY_USED: the interview is finished, or the answer was already uploaded');
  const gone = errorOf('EXPIRED: the interview link has expired');

  app.post('/api/workspace/proof/interviews', {
    schema: {
      body: createBody,
      response: { 404: errorOf('NOT_FOUND: the product, or the proof item in it, is not this workspace\'s'), 201: dataOf(object({
        interview: object({ id: string().required(), state: string().required(), questions: array(questionSchema).defined(),
          expiresAt: timestamp().required() }).required(),
        interviewToken: string().required(), interviewUrl: string().required(),
      })) },
    },
    config: { tag: 'collection', ...writers, operationId: 'createInterview',
      summary: 'An asynchronous case-study interview; its iv_ link secret is shown once (30 days)' },
  }, async (request, reply) => {
    const s = sessionPrincipal(request);
    const made = await createInterview(ds, { organizationId: s.organizationId, teammateId: s.teammateId }, request.body);
    return reply.code(201).send({
      data: { ...made, interviewUrl: `${cfg.collectPageUrl}/interview#${made.interviewToken}` },
    });
  });

  app.get('/api/proof/interview', {
    schema: { response: { 401: errorOf('UNAUTHORIZED: the interview link is missing, unknown or of the wrong kind'), 410: gone,
      200: dataOf(object({ interview: interviewView.required() })) } },
    onRequest: interviewAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'getInterview', summary: 'The interview\'s questions and the answers given so far' },
  }, async (request) => ({ data: { interview: await getInterview(ds, interviewOf(request)) } }));

  app.post('/api/proof/interview', {
    schema: {
      body: interviewBody,
      response: {
        409: finished, 410: gone, 413: errorOf('TOO_LARGE: a recorded answer is larger than the video limit'),
        429: errorOf('RATE_LIMITED: more requests this minute, or this client address opened PROOF_UPLOAD_ADDRESS_DAILY_BYTES of uploads this UTC day; retry ' +
          'after Retry-After'),
        200: dataOf(object({ interview: interviewView.required() })),
        201: dataOf(object({ upload: interviewUpload.required(), uploadToken: string().required() })),
      },
    },
    onRequest: interviewAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'answerInterview',
      summary: 'Answer a question by text, open the upload of a recorded answer (201, its token once), or finish' },
  }, async (request, reply) => {
    const id = interviewOf(request);
    const body = request.body;
    if (body.action === 'finish') return { data: { interview: await finishInterview(ds, id) } };
    if (body.action === 'start_upload') {
      const opened = await startInterviewUpload(ds, id, { questionId: body.questionId!, size: body.size!, sha256: body.sha256! }, {
        clientAddress: clientAddressDigest(request.ip), addressDailyBytes: cfg.uploadQuotas.addressDailyBytes,
      });
      return reply.code(201).send({ data: opened });
    }
    return { data: { interview: await answerInterview(ds, id, body.questionId!, body.text!) } };
  });

  app.put('/api/proof/interview/uploads/:sessionId', {
    schema: {
      params: pathParams('sessionId'),
      response: {
        401: errorOf('UNAUTHORIZED: the x-upload-token is missing, malformed or unknown'),
        409: finished, 410: gone, 413: errorOf('TOO_LARGE: a Content-Length larger than the upload was opened for'),
        415: errorOf('UNSUPPORTED_MEDIA_TYPE: not application/octet-stream, or the bytes are not an accepted video type'),
        422: errorOf('CHECKSUM_MISMATCH: the bytes do not match the sha256 given at start'),
        201: dataOf(object({ media: object({ id: string().required(), kind: string().required(), contentType: string().required(), size: number().required(),
          sha256: string().required() }).required() })),
      },
    },
    onRequest: uploadAuth,
    config: { tag: 'collection', ...CUSTOMER_ROUTE, operationId: 'putInterviewUpload',
      summary: 'The recorded answer\'s raw bytes in one request, with their Content-Length (video rules); written once' },
  }, async (request, reply) => {
    if (!request.headers['content-type']?.startsWith('application/octet-stream')) {
      throw new ServiceError('UNSUPPORTED_MEDIA_TYPE', 'send the recording as application/octet-stream');
    }
    const body = { chunks: bodyChunks(request), length: declaredLength(request) };
    return reply.code(201).send({ data: await putInterviewUpload(ds, store, interviewOf(request), request.params.sessionId, body) });
  });
}
