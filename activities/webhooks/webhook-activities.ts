import http from 'node:http';
import https from 'node:https';
import { ApplicationFailure } from '@temporalio/activity';
import { DataSource } from 'typeorm';
import { RESPONSE_EXCERPT_BYTES, failDelivery, loadAttemptTarget, recordAttempt, reserveAttempt } from '../../db/webhooks/webhooks';
import { Config } from '../../runtime/config';
import { literalTargetAllowed, publicOnlyLookup } from '../../runtime/webhook-target';
import { signWebhook } from '../../runtime/webhook-signature';

export const WEBHOOK_USER_AGENT = 'sv-webhooks/1';

export interface WebhookActivityDeps {
  dataSource: DataSource;
  config: Pick<Config, 'webhookAllowPrivateTargets'>;
}

/** What one attempt found: nothing to send, or what the receiver answered. */
export type AttemptResult =
  | { kind: 'skipped'; reason: 'endpoint-disabled' | 'already-delivered' | 'already-failed' }
  | {
    kind: 'sent'; startedAt: string; durationMs: number; statusCode: number | null; error: string | null; excerpt: string | null;
    /** The number this try reserved and sent; absent in results of workflows from before reservations. */
    attempt?: number;
  };

interface HttpResult {
  statusCode: number | null;
  error: string | null;
  excerpt: string | null;
}

/** The first bytes of an answer as storable text: NUL (which PostgreSQL text refuses) becomes U+FFFD. */
function excerptOf(chunks: Buffer[]): string | null {
  if (chunks.length === 0) return null;
  return Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8').replace(/\u0000/g, '\uFFFD');
}

/**
 * One POST, never following redirects, answered within `timeoutMs` or abandoned. The connection goes
 * only to an address the lookup has checked.
 */
function post(target: URL, body: string, headers: Record<string, string>, timeoutMs: number, allowPrivate: boolean): Promise<HttpResult> {
  return new Promise((resolve) => {
    if (!literalTargetAllowed(target, allowPrivate) || (target.protocol === 'http:' && !allowPrivate)) {
      resolve({ statusCode: null, error: 'target address is not public', excerpt: null });
      return;
    }
    let settled = false;
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve({ statusCode, error, excerpt: excerptOf(chunks) });
    };
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(target, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: publicOnlyLookup(allowPrivate),
    });
    const timer = setTimeout(() => finish(statusCode === null ? `timeout after ${timeoutMs} ms` : null), timeoutMs);
    request.on('response', (response) => {
      statusCode = response.statusCode ?? null;
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_EXCERPT_BYTES) finish(null);
      });
      response.on('end', () => finish(null));
      response.on('error', () => finish(null));
    });
    request.on('error', (err: NodeJS.ErrnoException) => finish(err.code === 'EBLOCKEDADDRESS' ? 'target address is not public' : `${err.code ?? 'error'}: ${err.message}`));
    request.end(body);
  });
}

const isDelivered = (r: AttemptResult) =>
  r.kind === 'sent' && r.error === null && r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;

/**
 * Webhook activities. Sending and recording are separate, so that a database failure after a POST is
 * retried by recording again, never by sending again.
 */
export function createWebhookActivities({ dataSource, config }: WebhookActivityDeps) {
  return {
    /** `attempt` is the workflow's count; the number sent is reserved here, fresh for every try. */
    async sendWebhookAttempt(input: { deliveryId: string; attempt: number; timeoutMs: number }): Promise<AttemptResult> {
      const target = await loadAttemptTarget(dataSource, input.deliveryId);
      if (!target) throw ApplicationFailure.nonRetryable(`delivery ${input.deliveryId} does not exist`, 'DeliveryMissing');
      const { delivery, endpoint } = target;
      if (delivery.status !== 'pending') return { kind: 'skipped', reason: delivery.status === 'delivered' ? 'already-delivered' : 'already-failed' };
      if (!endpoint.enabled || endpoint.deletedAt) return { kind: 'skipped', reason: 'endpoint-disabled' };
      const attempt = await reserveAttempt(dataSource, delivery.id);
      const headers = {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        'service-signature': signWebhook(endpoint.secret, delivery.payload),
        'service-event-id': delivery.eventId,
        'service-event-type': delivery.eventType,
        'service-delivery-id': delivery.id,
        'service-delivery-attempt': String(attempt),
      };
      const startedAt = new Date();
      const result = await post(new URL(endpoint.url), delivery.payload, headers, input.timeoutMs, config.webhookAllowPrivateTargets);
      const redirect = result.statusCode !== null && result.statusCode >= 300 && result.statusCode < 400;
      const ok = result.error === null && result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
      return {
        kind: 'sent',
        startedAt: startedAt.toISOString(),
        durationMs: Date.now() - startedAt.getTime(),
        statusCode: result.statusCode,
        error: result.error ?? (ok ? null : `HTTP ${result.statusCode}${redirect ? ' (redirects are not followed)' : ''}`),
        excerpt: result.excerpt,
        attempt,
      };
    },

    /** Records the attempt; answers whether the delivery is now delivered. */
    async recordWebhookAttempt(input: { deliveryId: string; attempt: number; result: AttemptResult & { kind: 'sent' } }): Promise<boolean> {
      const { result } = input;
      const delivered = isDelivered(result);
      await recordAttempt(dataSource, {
        deliveryId: input.deliveryId,
        attempt: input.attempt,
        startedAt: new Date(result.startedAt),
        durationMs: result.durationMs,
        statusCode: result.statusCode,
        error: result.error,
        responseExcerpt: result.excerpt,
        delivered,
      });
      return delivered;
    },

    async failWebhookDelivery(input: { deliveryId: string; reason: string }): Promise<void> {
      await failDelivery(dataSource, input.deliveryId, input.reason);
    },
  };
}
