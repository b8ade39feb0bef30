import { FastifyReply } from 'fastify';
import { string } from 'yup';
import { ENGAGEMENT_TYPES, recordEngagement } from '../../db/proof/proof-placements';
import { readReceipt, verifyReceipt } from '../../db/proof/proof-receipts';
import { currentRender, placementMedia } from '../../db/proof/proof-render';
import { publicKeySet, readEventToken } from '../../db/proof/proof-signing';
import { ServiceError, notFound, validationFailed } from '../../runtime/service-error';
import { mediaStoreOf } from '../../runtime/media-store';
import { placedMedia } from '../../db/collection/media';
import type { AppDeps } from '../app-deps';
import { rangeOf, sendStoredRange } from '../plugins/byte-ranges';
import { dataOf, errorOf, fileOf, noContent } from '../plugins/responses';
import { keySetSchema, receiptSchema, receiptVerificationSchema, renderManifestSchema } from './schemas';
import { idParams } from '../plugins/path-params';
import { openObject, RouteApp, strictObject } from '../plugins/validation';
import { parseJsonText } from '../plugins/json-body';

const BEACON_BODY_LIMIT = 2048;
const mediaParams = strictObject({ placementId: string().required().max(100), assetId: string().required().max(100) });
const beaconBody = strictObject({ token: string().required().max(400), type: string().required().oneOf([...ENGAGEMENT_TYPES]) }).required();
const verifyBody = strictObject({
  receipt: openObject().required(),
  signature: strictObject({ alg: string().required(), kid: string().required().max(100), value: string().required().max(200) }).required(),
}).required();

/** Embeds on any site fetch these, and nothing here depends on who asks: no credentials, any origin. */
function publicHeaders(reply: FastifyReply, cacheControl: string): FastifyReply {
  return reply.header('access-control-allow-origin', '*').header('cache-control', cacheControl);
}

const matches = (ifNoneMatch: string | undefined, etag: string) =>
  ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*');

export async function publicProofRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const store = mediaStoreOf(deps.config);
  // A wall on another site must read refusals too (a 404 placement, a 403 beacon) to say why it shows nothing.
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('access-control-allow-origin', '*');
  });

  app.get('/api/public/proof/render/:id', {
    schema: { params: idParams, response: { 200: renderManifestSchema, 304: noContent('the manifest is unchanged (If-None-Match)') } },
    config: { tag: 'proof', operationId: 'renderPlacement', summary: 'Signed render manifest (service-proof-render-v1) of the eligible items; strong ETag, ' +
      '304 on If-None-Match' },
  }, async (request, reply) => {
    const render = await currentRender(ds, request.params.id);
    if (!render) throw notFound('placement');
    // Revalidate every time: a revocation must show in the very next render, and a 304 is cheap.
    publicHeaders(reply, 'no-cache').header('etag', render.etag);
    if (matches(request.headers['if-none-match'], render.etag)) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(render.body());
  });

  app.get('/api/public/proof/media/:placementId/:assetId', {
    schema: {
      params: mediaParams,
      response: {
        200: fileOf('*/*', 'the file, in its own media type'),
        206: fileOf('*/*', 'the requested byte range'),
        416: noContent('the range is outside the file'),
      },
    },
    config: { tag: 'proof', operationId: 'getPlacementMedia', summary: 'A file of an item in the placement\'s current eligible manifest; byte ranges; ' +
      'anything else 404' },
  }, async (request, reply) => {
    if (request.params.assetId.startsWith('med_')) {
      const media = await placedMedia(ds, request.params.placementId, request.params.assetId);
      if (!media) throw notFound('media');
      publicHeaders(reply, 'no-cache').header('accept-ranges', 'bytes').header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'").type(media.contentType);
      return sendStoredRange(reply, request.headers.range, media, store);
    }
    const asset = await placementMedia(ds, request.params.placementId, request.params.assetId);
    if (!asset) throw notFound('media');
    publicHeaders(reply, 'no-cache')
      .header('accept-ranges', 'bytes')
      .header('x-content-type-options', 'nosniff')
      // An SVG opened directly must not run anything, even if one ever carried script.
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .type(asset.mediaType);
    const size = asset.body.length;
    const range = rangeOf(request.headers.range, size);
    if (range === 'unsatisfiable') return reply.code(416).header('content-range', `bytes */${size}`).send();
    if (range === null) return reply.send(asset.body);
    return reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${size}`)
      .send(asset.body.subarray(range.start, range.end + 1));
  });

  app.post('/api/public/proof/events', {
    bodyLimit: BEACON_BODY_LIMIT,
    schema: { response: { 204: noContent('recorded'), 403: errorOf('FORBIDDEN: the event token is not one this service signed, or it has expired') } },
    config: { tag: 'proof', operationId: 'recordProofEngagement', summary: 'Cookie-free engagement beacon (text/plain JSON {token, type}); needs the ' +
      'manifest\'s event token' },
  }, async (request, reply) => {
    const expected = `send {"token": <eventToken>, "type": ${ENGAGEMENT_TYPES.join('|')}}`;
    // navigator.sendBeacon sends text/plain without a preflight; the text is JSON, read like any JSON body.
    const parsed: unknown = typeof request.body === 'string' ? parseJsonText(request.body) : request.body;
    // No body at all (no content type, or an empty JSON one) is a request without the beacon.
    if (parsed === undefined || parsed === null) throw validationFailed([{ path: '', message: expected }]);
    let body: { token: string; type: string };
    try {
      body = beaconBody.validateSync(parsed, { strict: true }) as { token: string; type: string };
    } catch {
      throw validationFailed([{ path: '', message: expected }]);
    }
    const now = new Date();
    const claims = await readEventToken(ds, body.token, now);
    if (!claims) throw new ServiceError('FORBIDDEN', 'the event token is not one this service signed, or it has expired');
    await recordEngagement(ds, body.token, claims.placementId, claims.proofItemId, body.type, now);
    return publicHeaders(reply, 'no-store').code(204).send();
  });

  app.get('/api/public/proof/receipts/keys', {
    schema: { response: { 200: keySetSchema } },
    config: { tag: 'proof', operationId: 'getReceiptKeys', summary: 'Public Ed25519 key set (JWKS) for offline verification; retired keys are kept' },
  }, async (_request, reply) => {
    publicHeaders(reply, 'public, max-age=300');
    return publicKeySet(ds);
  });

  app.get('/api/public/proof/receipts/:id', {
    schema: { params: idParams, response: { 200: dataOf(receiptSchema) } },
    config: { tag: 'proof', operationId: 'getReceipt', summary: 'Portable signed receipt: what the customer approved and how it may be used' },
  }, async (request, reply) => {
    const receipt = await readReceipt(ds, request.params.id);
    if (!receipt) throw notFound('receipt');
    publicHeaders(reply, 'no-cache');
    return { data: receipt };
  });

  app.post('/api/public/proof/receipts/verify', {
    schema: { body: verifyBody, response: { 200: dataOf(receiptVerificationSchema) } },
    config: { tag: 'proof', operationId: 'verifyReceipt', summary: 'Verify a receipt: the signature first, then its live status; revocation always wins' },
  }, async (request, reply) => {
    publicHeaders(reply, 'no-store');
    return { data: await verifyReceipt(ds, request.body) };
  });
}
