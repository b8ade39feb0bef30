import http from 'node:http';
import https from 'node:https';
import { ApplicationFailure } from '@temporalio/activity';
import { DataSource } from 'typeorm';
import { RESPONSE_EXCERPT_BYTES, failDelivery, loadAttemptTarget, recordAttempt } from '../db/webhooks';
import { Config } from '../runtime/config';
import { literalTargetAllowed, publicOnlyLookup } from '../runtime/webhook-target';
import { signWebhook } from '../runtime/webhook-signature';

export const WEBHOOK_USER_AGENT = 'sv-webhooks/1';

export interface WebhookActivityDeps {
  dataSource: DataSource;
  config: Pick<Config, 'webhookTimeoutMs' | 'webhookAllowPrivateTargets'>;
}

export type AttemptOutcome = 'delivered' | 'retry' | 'disabled' | 'finished';

interface HttpResult {
  statusCode: number | null;
  error: string | null;
  excerpt: string | null;
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
      const excerpt = chunks.length > 0 ? Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8') : null;
      resolve({ statusCode, error, excerpt });
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

/** Activities that deliver webhooks; each attempt is recorded whatever its outcome. */
export function createWebhookActivities({ dataSource, config }: WebhookActivityDeps) {
  return {
    async attemptWebhookDelivery(input: { deliveryId: string; attempt: number }): Promise<AttemptOutcome> {
      const target = await loadAttemptTarget(dataSource, input.deliveryId);
      if (!target) throw ApplicationFailure.nonRetryable(`delivery ${input.deliveryId} does not exist`, 'DeliveryMissing');
      const { delivery, endpoint } = target;
      if (delivery.status !== 'pending') return 'finished';
      if (!endpoint.enabled || endpoint.deletedAt) return 'disabled';

      const headers = {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        'service-signature': signWebhook(endpoint.secret, delivery.payload),
        'service-event-id': delivery.eventId,
        'service-event-type': delivery.eventType,
        'service-delivery-id': delivery.id,
        'service-delivery-attempt': String(input.attempt),
      };
      const startedAt = new Date();
      const result = await post(new URL(endpoint.url), delivery.payload, headers, config.webhookTimeoutMs, config.webhookAllowPrivateTargets);
      const delivered = result.error === null && result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
      await recordAttempt(dataSource, {
        deliveryId: delivery.id,
        attempt: input.attempt,
        startedAt,
        durationMs: Date.now() - startedAt.getTime(),
        statusCode: result.statusCode,
        error: result.error ?? (delivered ? null : `HTTP ${result.statusCode}${result.statusCode && result.statusCode >= 300 && result.statusCode < 400 ? ' (redirects are not followed)' : ''}`),
        responseExcerpt: result.excerpt,
        delivered,
      });
      return delivered ? 'delivered' : 'retry';
    },

    async failWebhookDelivery(input: { deliveryId: string; reason: string }): Promise<void> {
      await failDelivery(dataSource, input.deliveryId, input.reason);
    },
  };
}
