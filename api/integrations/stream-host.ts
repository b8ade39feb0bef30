import { createHmac } from 'node:crypto';
import { FastifyInstance } from 'fastify';
import { boolean, object } from 'yup';
import { safeEqual } from '../../db/rules/secrets';
import { notFound, validationFailed } from '../../runtime/service-error';
import type { AppDeps } from '../app';
import { dataOf, errorOf } from '../plugins/responses';

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
  const expected = createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${time}.`), raw])).digest('hex');
  if (!safeEqual(sig, expected)) return 'the signature does not match';
  if (Math.abs(nowSeconds - Number(time)) > TOLERANCE_SECONDS) return 'the timestamp is outside the tolerance';
  return null;
}

/**
 * The video host's readiness webhook; it exists only when PROOF_STREAM_WEBHOOK_SECRET is set.
 * Copies to the host are not made by this build, so every uid is unknown and ignored after verification.
 */
export async function streamHostRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const secret = deps.config.proofStreamWebhookSecret;
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    raw.post('/api/public/proof/stream/webhook', {
      bodyLimit: 64 * 1024,
      schema: { response: { 404: errorOf('NOT_FOUND: PROOF_STREAM_WEBHOOK_SECRET is not set, so the video host webhook does not exist'), 200: dataOf(object({ received: boolean().required() })) } },
      config: { auth: 'public', operationId: 'receiveStreamWebhook', summary: 'Readiness webhook of the video host (404 unless its secret is configured)' },
      onRequest: async () => {
        if (!secret) throw notFound('resource');
      },
    }, async (request) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const header = request.headers['webhook-signature'];
      const problem = streamSignatureProblem(typeof header === 'string' ? header : undefined, body, secret!, Math.floor(Date.now() / 1000));
      if (problem) throw validationFailed([{ path: 'webhook-signature', message: problem }], 'the webhook-signature header does not verify');
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        throw validationFailed([{ path: '', message: 'the body is not valid JSON' }]);
      }
      if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { uid?: unknown }).uid !== 'string') {
        throw validationFailed([{ path: 'uid', message: 'is required' }]);
      }
      return { data: { received: true } };
    });
  });
}
