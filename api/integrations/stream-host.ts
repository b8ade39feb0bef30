import { boolean, object, string } from 'yup';
import { StreamNotice, readStreamSourceToken, recordStreamNotice, streamableMedia } from '../../db/integrations/stream-copies';
import { timestampedHmacProblem } from '../../runtime/timestamped-hmac';
import { mediaStoreOf } from '../../runtime/media-store';
import { notFound, validationFailed } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { sendStoredRange } from '../plugins/byte-ranges';
import { parseJsonText } from '../plugins/json-body';
import { dataOf, errorOf, fileOf, noContent } from '../plugins/responses';
import { RouteApp, strictObject } from '../plugins/validation';

const TOLERANCE_SECONDS = 300;

/** Why a `webhook-signature: time=<unix>,sig1=<hex>` header does not verify, or null. */
export function streamSignatureProblem(header: string | undefined, raw: Buffer, secret: string, nowSeconds: number): string | null {
  if (!header) return 'the webhook-signature header is missing';
  const parts = new Map(header.split(',').map((p) => {
    const at = p.indexOf('=');
    return [p.slice(0, at), p.slice(at + 1)] as const;
  }));
  const time = parts.get('time');
  const sig = parts.get('sig1');
  if (!time || !/^\d{1,12}$/.test(time) || !sig) return 'the header needs time=<unix> and sig1=<hex>';
  const problem = timestampedHmacProblem({ secret, timestamp: Number(time), payload: raw, signatures: [sig], nowSeconds, toleranceSeconds: TOLERANCE_SECONDS });
  if (problem === 'mismatch') return 'the signature does not match';
  return problem ? 'the timestamp is outside the tolerance' : null;
}

const sourceParams = strictObject({ token: string().required().max(400) });

/**
 * The video host's side (docs/integrations.md#rules-as-built): the source link it copies an approved original from
 * (minted by the workflow `stream-copy/<mediaAssetId>`), and its readiness webhook, which exists only
 * when PROOF_STREAM_WEBHOOK_SECRET is set.
 */
export async function streamHostRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const store = mediaStoreOf(deps.config);
  const secret = deps.config.proofStreamWebhookSecret;

  app.get('/api/public/proof/stream/source/:token', {
    schema: {
      params: sourceParams,
      response: {
        200: fileOf('*/*', 'the original, in its own media type'),
        206: fileOf('*/*', 'the requested byte range'),
        404: errorOf('NOT_FOUND: the link is not one this service signed, has expired, or the version is no longer approved, a revocation was filed or the ' +
          'grant no longer allows the media'),
        416: noContent('the range is outside the file'),
      },
    },
    config: { tag: 'integrations', auth: 'public', operationId: 'getStreamSource',
      summary: 'The original the video host copies, through a short-lived signed link; byte ranges' },
  }, async (request, reply) => {
    const claims = await readStreamSourceToken(ds, request.params.token, Math.floor(Date.now() / 1000));
    const media = claims ? await streamableMedia(ds, claims) : null;
    if (!media) throw notFound('media');
    reply.header('accept-ranges', 'bytes').header('cache-control', 'private, no-store').header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'").type(media.contentType);
    return sendStoredRange(reply, request.headers.range, media, store);
  });

  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    raw.post('/api/public/proof/stream/webhook', {
      bodyLimit: 64 * 1024,
      schema: { response: { 400: errorOf('VALIDATION_FAILED: webhook-signature is missing, does not match or is over 5 min away (details path ' +
        'webhook-signature), or the body is not a notice with a uid'), 404: errorOf('NOT_FOUND: PROOF_STREAM_WEBHOOK_SECRET is not set, so the video host ' +
          'webhook does not exist'), 200: dataOf(object({ received: boolean().required() })) } },
      config: { tag: 'integrations', auth: 'public', operationId: 'receiveStreamWebhook',
        summary: 'Readiness webhook of the video host (404 unless its secret is configured)' },
      onRequest: async () => {
        if (!secret) throw notFound('resource');
      },
    }, async (request) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const header = request.headers['webhook-signature'];
      const problem = streamSignatureProblem(typeof header === 'string' ? header : undefined, body, secret!, Math.floor(Date.now() / 1000));
      if (problem) throw validationFailed([{ path: 'webhook-signature', message: problem }], 'the webhook-signature header does not verify');
      // Parsed as every JSON body is (json-body.ts): a signed body is still refused for what no handler should see.
      const parsed = parseJsonText(body.toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { uid?: unknown }).uid !== 'string') {
        throw validationFailed([{ path: 'uid', message: 'is required' }]);
      }
      const notice = parsed as StreamNotice;
      await recordStreamNotice(ds, { uid: notice.uid, readyToStream: notice.readyToStream,
        status: typeof notice.status === 'object' && notice.status ? notice.status : undefined });
      return { data: { received: true } };
    });
  });
}
