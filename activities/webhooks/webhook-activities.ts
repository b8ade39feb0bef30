import http from 'node:http';
import https from 'node:https';
import { ApplicationFailure } from '@temporalio/activity';
import { DataSource } from 'typeorm';
import {
  AttemptRecord, AttemptTarget, RESPONSE_EXCERPT_BYTES, claimFirstAttempts, failDelivery, loadAttemptTarget, recordAttempt, recordAttempts, reserveAttempt,
} from '../../db/webhooks/webhook-attempts';
import { Config } from '../../runtime/config';
import { literalTargetAllowed, publicOnlyLookup } from '../../runtime/webhook-target';
import { webhookAttemptDuration, webhookAttempts } from '../../runtime/metrics';
import { signWebhook } from '../../runtime/webhook-signature';
import { heartbeating } from '../platform/activity-cancellation';

export const WEBHOOK_USER_AGENT = 'sv-webhooks/1';

export interface WebhookActivityDeps {
  dataSource: DataSource;
  config: Pick<Config, 'webhookAllowPrivateTargets'>;
  /** Aborted when the worker's shutdown grace is over (see `heartbeating`). */
  stopping?: AbortSignal;
}

type SentResult = AttemptResult & { kind: 'sent' };

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

// Connections are kept between attempts to the same receiver: a batch's first attempts to one endpoint
// share a few sockets instead of a handshake each. Idle ones close before a receiver's usual 5 s
// keep-alive does, so a reused socket is rarely one the receiver is closing.
const KEEP_ALIVE = { keepAlive: true, timeout: 4_000 };
const AGENTS = { 'http:': new http.Agent(KEEP_ALIVE), 'https:': new https.Agent(KEEP_ALIVE) };

/**
 * One POST, never following redirects, answered within `timeoutMs` or abandoned. The connection goes
 * only to an address the lookup has checked (a kept connection was checked when it was opened). An
 * abort of `signal` (the activity cancelled: its worker is shutting down) closes the connection and
 * rejects with the signal's reason, so the attempt stays in flight in the log for the next worker.
 */
function post(
  target: URL, body: string, headers: Record<string, string>, timeoutMs: number, allowPrivate: boolean, signal?: AbortSignal,
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    if (!literalTargetAllowed(target, allowPrivate) || (target.protocol === 'http:' && !allowPrivate)) {
      resolve({ statusCode: null, error: 'target address is not public', excerpt: null });
      return;
    }
    let settled = false;
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    // A socket whose answer was read to its end goes back to the agent; any other is closed.
    const settle = (reusable: boolean) => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      if (!reusable) request.destroy();
      return true;
    };
    const finish = (error: string | null, reusable = false) => {
      if (settle(reusable)) resolve({ statusCode, error, excerpt: excerptOf(chunks) });
    };
    const abort = () => {
      if (settle(false)) reject(signal!.reason);
    };
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(target, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: publicOnlyLookup(allowPrivate),
      agent: AGENTS[target.protocol === 'https:' ? 'https:' : 'http:'],
    });
    const timer = setTimeout(() => finish(statusCode === null ? `timeout after ${timeoutMs} ms` : null), timeoutMs);
    signal?.addEventListener('abort', abort, { once: true });
    request.on('response', (response) => {
      statusCode = response.statusCode ?? null;
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_EXCERPT_BYTES) finish(null);
      });
      response.on('end', () => finish(null, true));
      response.on('error', () => finish(null));
    });
    request.on('error', (err: NodeJS.ErrnoException) => finish(err.code === 'EBLOCKEDADDRESS' ? 'target address is not public'
      : `${err.code ?? 'error'}: ${err.message}`));
    request.end(body);
  });
}

const isDelivered = (r: AttemptResult) =>
  r.kind === 'sent' && r.error === null && r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300;

/** One signed POST of a delivery's exact body as attempt number `attempt`, with every header a receiver reads. */
async function sendSigned(
  { delivery, endpoint }: AttemptTarget, attempt: number, timeoutMs: number, allowPrivate: boolean, signal?: AbortSignal,
): Promise<SentResult> {
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
  const result = await post(new URL(endpoint.url), delivery.payload, headers, timeoutMs, allowPrivate, signal);
  const redirect = result.statusCode !== null && result.statusCode >= 300 && result.statusCode < 400;
  const ok = result.error === null && result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const outcome = ok ? 'delivered' : result.statusCode === null ? 'failed' : 'refused';
  webhookAttempts.inc({ outcome });
  webhookAttemptDuration.observe({ outcome }, (Date.now() - startedAt.getTime()) / 1000);
  return {
    kind: 'sent',
    startedAt: startedAt.toISOString(),
    durationMs: Date.now() - startedAt.getTime(),
    statusCode: result.statusCode,
    error: result.error ?? (ok ? null : `HTTP ${result.statusCode}${redirect ? ' (redirects are not followed)' : ''}`),
    excerpt: result.excerpt,
    attempt,
  };
}

function attemptRecord(deliveryId: string, attempt: number, result: SentResult): AttemptRecord {
  return {
    deliveryId,
    attempt,
    startedAt: new Date(result.startedAt),
    durationMs: result.durationMs,
    statusCode: result.statusCode,
    error: result.error,
    responseExcerpt: result.excerpt,
    delivered: isDelivered(result),
  };
}

/** Our own database briefly unreachable after a POST: record again rather than let a retry send again. */
async function patiently(write: () => Promise<void>): Promise<void> {
  for (let wait = 500; ; wait *= 2) {
    try {
      return await write();
    } catch (err) {
      if (wait > 8_000) throw err;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/**
 * Records a batch's answered attempts together (group commit): the first answer is written at once,
 * and whatever is answered while a write is under way goes in the next one, so a burst costs a
 * transaction per write instead of one per attempt. Each caller learns whether its delivery is
 * delivered only once the write holding it has committed, and waits for it before its next send, as
 * it waited for its own write before; a write that fails is tried again (`patiently`), then fails
 * every attempt it held.
 */
function attemptRecorder(ds: DataSource): (record: AttemptRecord) => Promise<void> {
  let waiting: Array<{ record: AttemptRecord; resolve: () => void; reject: (err: unknown) => void }> = [];
  let writing = false;
  const writeAll = async () => {
    writing = true;
    while (waiting.length > 0) {
      const group = waiting;
      waiting = [];
      try {
        await patiently(() => recordAttempts(ds, group.map((g) => g.record)));
        for (const g of group) g.resolve();
      } catch (err) {
        for (const g of group) g.reject(err);
      }
    }
    writing = false;
  };
  return (record) => new Promise<void>((resolve, reject) => {
    waiting.push({ record, resolve, reject });
    if (!writing) void writeAll();
  });
}

/** What a batch left to do for one delivery: nothing, or its retry workflow (see `FirstAttemptClaim`). */
export type FirstAttemptOutcome =
  | { deliveryId: string; next: 'done' }
  | { deliveryId: string; next: 'retry'; attemptsMade: number; waitFirst: boolean };

export interface FirstAttemptsInput {
  /** The batch workflow's id: the owner of the first attempts it makes. */
  batchId: string;
  deliveryIds: string[];
  timeoutMs: number;
  concurrency: number;
}

/**
 * The first attempt of every delivery of a batch: all claimed in one transaction, then signed, sent
 * and recorded `concurrency` at a time, each exactly as a retry workflow's attempt is. All attempts
 * settle before an error is raised, so a retry of the whole batch never finds one of its own still in
 * flight in this process. A worker that dies mid-batch leaves its unanswered attempts in flight: the
 * retried activity hands each to its retry workflow, which logs it as interrupted and sends the next
 * number at once. A worker stopping (`signal` aborted once its shutdown grace is over) does the same
 * at once: the attempts it abandons, and those it has not sent, go to their retry workflows as cut
 * short. It does not fail the activity: Temporal would retry a local activity in this same stopping
 * worker, which no longer runs activities, and hold its shutdown.
 */
export async function sendFirstAttempts(
  { dataSource, config }: WebhookActivityDeps, input: FirstAttemptsInput, signal?: AbortSignal,
): Promise<FirstAttemptOutcome[]> {
  const claims = await claimFirstAttempts(dataSource, input.deliveryIds, input.batchId);
  const outcomes = new Map<string, FirstAttemptOutcome>();
  const sends: Array<{ deliveryId: string; target: AttemptTarget }> = [];
  for (const [deliveryId, claim] of claims) {
    if (claim.kind === 'send') sends.push({ deliveryId, target: claim.target });
    else if (claim.kind === 'done') outcomes.set(deliveryId, { deliveryId, next: 'done' });
    else outcomes.set(deliveryId, { deliveryId, next: 'retry', attemptsMade: claim.attemptsMade, waitFirst: claim.waitFirst });
  }
  const record = attemptRecorder(dataSource);
  const errors: unknown[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(input.concurrency, sends.length) }, async () => {
    for (let i = next++; i < sends.length; i = next++) {
      const { deliveryId, target } = sends[i];
      try {
        const answered = attemptRecord(deliveryId, 1, await sendSigned(target, 1, input.timeoutMs, config.webhookAllowPrivateTargets, signal));
        await record(answered);
        outcomes.set(deliveryId, answered.delivered ? { deliveryId, next: 'done' } : { deliveryId, next: 'retry', attemptsMade: 1, waitFirst: true });
      } catch (err) {
        // Abandoned by the shutdown: the delivery goes on in its retry workflow, on whichever worker takes it.
        if (signal?.aborted && err === signal.reason) outcomes.set(deliveryId, { deliveryId, next: 'retry', attemptsMade: 1, waitFirst: false });
        else errors.push(err);
      }
    }
  }));
  if (errors.length > 0) throw errors[0];
  return input.deliveryIds.map((id) => outcomes.get(id)!);
}

/**
 * Webhook activities. Sending and recording are separate, so that a database failure after a POST is
 * retried by recording again, never by sending again.
 */
export function createWebhookActivities({ dataSource, config, stopping }: WebhookActivityDeps) {
  return {
    /**
     * `attempt` is the workflow's count; the number sent is reserved here, fresh for every try. It
     * heartbeats while the receiver is slow; cancelled (its worker stopping), the POST is abandoned and
     * the try fails, leaving its number in flight for the next try to log as interrupted.
     */
    async sendWebhookAttempt(input: { deliveryId: string; attempt: number; timeoutMs: number }): Promise<AttemptResult> {
      const target = await loadAttemptTarget(dataSource, input.deliveryId);
      if (!target) throw ApplicationFailure.nonRetryable(`delivery ${input.deliveryId} does not exist`, 'DeliveryMissing');
      const { delivery, endpoint } = target;
      if (delivery.status !== 'pending') return { kind: 'skipped', reason: delivery.status === 'delivered' ? 'already-delivered' : 'already-failed' };
      if (!endpoint.enabled || endpoint.deletedAt) return { kind: 'skipped', reason: 'endpoint-disabled' };
      const attempt = await reserveAttempt(dataSource, delivery.id);
      return heartbeating((signal) => sendSigned(target, attempt, input.timeoutMs, config.webhookAllowPrivateTargets, signal), stopping);
    },

    /** Records the attempt; answers whether the delivery is now delivered. */
    async recordWebhookAttempt(input: { deliveryId: string; attempt: number; result: SentResult }): Promise<boolean> {
      const answered = attemptRecord(input.deliveryId, input.attempt, input.result);
      await recordAttempt(dataSource, answered);
      return answered.delivered;
    },

    /**
     * The first attempts of a batch of deliveries (see `sendFirstAttempts`). Run as a remote activity
     * (batches from before the local one), it heartbeats while they run; a local one has no heartbeat:
     * its workflow task's own timeout notices a dead worker. Cancelled, it abandons the attempts under way.
     */
    async sendFirstWebhookAttempts(input: FirstAttemptsInput): Promise<FirstAttemptOutcome[]> {
      return heartbeating((signal) => sendFirstAttempts({ dataSource, config }, input, signal), stopping);
    },

    async failWebhookDelivery(input: { deliveryId: string; reason: string }): Promise<void> {
      await failDelivery(dataSource, input.deliveryId, input.reason);
    },
  };
}
