import { DataSource } from 'typeorm';
import { sealedColumn } from '../../runtime/secret-box';
import { WebhookDelivery, WebhookEndpoint } from '../entities';

// The attempts of a delivery: what each sends, and what its answer moves the delivery to.

export const RESPONSE_EXCERPT_BYTES = 4096;

/** What an attempt sends: the delivery's exact body and ids, to the endpoint's URL, signed with its secret. */
export interface AttemptTarget {
  delivery: Pick<WebhookDelivery, 'id' | 'eventId' | 'eventType' | 'payload'>;
  endpoint: Pick<WebhookEndpoint, 'url' | 'secret'>;
}

export async function loadAttemptTarget(ds: DataSource, deliveryId: string): Promise<{ delivery: WebhookDelivery; endpoint: WebhookEndpoint } | null> {
  const delivery = await ds.getRepository(WebhookDelivery).findOneBy({ id: deliveryId });
  if (!delivery) return null;
  const endpoint = await ds.getRepository(WebhookEndpoint).findOneByOrFail({ id: delivery.endpointId });
  return { delivery, endpoint };
}

export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  delivered: boolean;
}

export const IN_FLIGHT = 'in flight';
export const ENDPOINT_DISABLED = 'endpoint disabled: not sent';
export const INTERRUPTED = 'interrupted: the worker stopped before this attempt was answered or recorded';

/**
 * Takes the next attempt number of a delivery before anything is sent, and logs it as in flight. A
 * try that finds an earlier attempt still in flight is the next worker taking over: that one is
 * recorded as interrupted. So the log holds every attempt made, and no number is ever sent twice.
 */
export async function reserveAttempt(ds: DataSource, deliveryId: string): Promise<number> {
  return ds.transaction(async (em) => {
    await em.query(`SELECT 1 FROM webhook_deliveries WHERE id = $1 FOR UPDATE`, [deliveryId]);
    await em.query(`UPDATE webhook_attempts SET error = $2 WHERE delivery_id = $1 AND error = $3`, [deliveryId, INTERRUPTED, IN_FLIGHT]);
    const [{ next }]: Array<{ next: number }> = await em.query(
      `SELECT coalesce(max(attempt), 0) + 1 AS next FROM webhook_attempts WHERE delivery_id = $1`, [deliveryId]);
    await em.query(
      `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, error) VALUES ($1, $2, now(), 0, $3)`,
      [deliveryId, next, IN_FLIGHT],
    );
    await em.query(`UPDATE webhook_deliveries SET attempt_count = greatest(attempt_count, $2) WHERE id = $1`, [deliveryId, next]);
    return next;
  });
}

/** Writes one attempt (again, if an activity retry repeats it) and moves the delivery on. */
export async function recordAttempt(ds: DataSource, record: AttemptRecord): Promise<void> {
  await recordAttempts(ds, [record]);
}

/**
 * Writes answered attempts (again, if a retry repeats them) and moves each delivery on: a pending one
 * becomes delivered on a 2xx, otherwise keeps the error for its retry workflow. One transaction for
 * the lot; the deliveries are locked in id order first, as a batch's claim and the relay lock them, so
 * that the attempts' foreign keys and the update cannot deadlock with either.
 */
export async function recordAttempts(ds: DataSource, records: AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  const ids = records.map((r) => r.deliveryId);
  await ds.transaction(async (em) => {
    await em.query(`SELECT 1 FROM webhook_deliveries WHERE id = ANY($1) ORDER BY id FOR UPDATE`, [ids]);
    await em.query(
      `WITH r AS (
         SELECT * FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[], $9::boolean[])
           AS r(delivery_id, attempt, started_at, duration_ms, status_code, error, response_excerpt, last_error, delivered)
       ), a AS (
         INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_excerpt)
         SELECT delivery_id, attempt, started_at, duration_ms, status_code, error, response_excerpt FROM r
         ON CONFLICT (delivery_id, attempt) DO UPDATE SET started_at = EXCLUDED.started_at,
           duration_ms = EXCLUDED.duration_ms, status_code = EXCLUDED.status_code, error = EXCLUDED.error,
           response_excerpt = EXCLUDED.response_excerpt
       )
       UPDATE webhook_deliveries d SET attempt_count = greatest(d.attempt_count, r.attempt), last_error = r.last_error,
         status = CASE WHEN r.delivered THEN 'delivered' ELSE d.status END,
         completed_at = CASE WHEN r.delivered THEN now() ELSE d.completed_at END
       FROM r WHERE d.id = r.delivery_id AND d.status = 'pending'`,
      [ids, records.map((r) => r.attempt), records.map((r) => r.startedAt), records.map((r) => r.durationMs),
        records.map((r) => r.statusCode), records.map((r) => r.error), records.map((r) => r.responseExcerpt),
        records.map((r) => (r.delivered ? null : r.error ?? `HTTP ${r.statusCode}`)), records.map((r) => r.delivered)],
    );
  });
}

export async function failDelivery(ds: DataSource, deliveryId: string, reason: string): Promise<void> {
  await ds.transaction(async (em) => {
    await em.query(
      `UPDATE webhook_deliveries SET status = 'failed', last_error = $2, completed_at = now()
        WHERE id = $1 AND status = 'pending'`,
      [deliveryId, reason],
    );
    await em.query(`UPDATE webhook_attempts SET error = $2 WHERE delivery_id = $1 AND error = $3`, [deliveryId, INTERRUPTED, IN_FLIGHT]);
  });
}

/** What a batch's first attempt of one delivery does: send attempt 1 now, nothing, or hand it to its retry workflow. */
export type FirstAttemptClaim =
  | { kind: 'send'; target: AttemptTarget }
  | { kind: 'done' }
  /** `waitFirst`: the last attempt was answered, so the retry waits its backoff; otherwise it was cut short. */
  | { kind: 'retry'; attemptsMade: number; waitFirst: boolean };

/**
 * Takes attempt 1 of each delivery of a batch for `batchId`, under the deliveries' row locks (taken in
 * id order, so overlapping batches cannot deadlock), and logs each as in flight: one transaction for
 * the whole batch. Only one batch ever owns a delivery's first attempt: another batch holding it (a
 * relay sweep after a lost claim) gets `done` and sends nothing. The owner asking again (its activity
 * retried after a worker died) gets what is left to do: nothing if delivered, else the retry workflow,
 * after the backoff when attempt 1 was answered, at once when it was cut short. A disabled or deleted
 * endpoint fails the delivery without sending.
 */
export async function claimFirstAttempts(ds: DataSource, deliveryIds: string[], batchId: string): Promise<Map<string, FirstAttemptClaim>> {
  const claims = new Map<string, FirstAttemptClaim>(deliveryIds.map((id) => [id, { kind: 'done' }]));
  if (deliveryIds.length === 0) return claims;
  await ds.transaction(async (em) => {
    // Plain rows (no entity hydration), each endpoint's secret opened once.
    const deliveries: Array<{
      id: string; event_id: string; event_type: string; payload: string; attempt_count: number; first_attempt_batch: string | null;
      endpoint_id: string; url: string; secret: string; sendable: boolean;
    }> = await em.query(
      `SELECT d.id, d.event_id, d.event_type, d.payload, d.attempt_count, d.first_attempt_batch, d.endpoint_id,
              e.url, e.secret, e.enabled AND e.deleted_at IS NULL AS sendable
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.id = ANY($1) AND d.status = 'pending' ORDER BY d.id FOR UPDATE OF d`, [deliveryIds]);
    const owned = deliveries.filter((d) => d.first_attempt_batch === batchId).map((d) => d.id);
    if (owned.length > 0) {
      const last: Array<{ delivery_id: string; attempt: number; error: string | null }> = await em.query(
        `SELECT DISTINCT ON (delivery_id) delivery_id, attempt, error FROM webhook_attempts
          WHERE delivery_id = ANY($1) ORDER BY delivery_id, attempt DESC`, [owned]);
      const byId = new Map(last.map((a) => [a.delivery_id, a]));
      for (const id of owned) {
        const a = byId.get(id);
        claims.set(id, { kind: 'retry', attemptsMade: a?.attempt ?? 0, waitFirst: a !== undefined && a.error !== IN_FLIGHT });
      }
    }
    const fresh = deliveries.filter((d) => d.first_attempt_batch === null && d.attempt_count === 0);
    const disabled = fresh.filter((d) => !d.sendable).map((d) => d.id);
    const sending = fresh.filter((d) => d.sendable);
    if (disabled.length > 0) {
      await em.query(
        `UPDATE webhook_deliveries SET status = 'failed', last_error = $2, completed_at = now() WHERE id = ANY($1)`,
        [disabled, ENDPOINT_DISABLED]);
    }
    if (sending.length === 0) return;
    const ids = sending.map((d) => d.id);
    await em.query(
      `WITH a AS (
         INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, error)
         SELECT id, 1, now(), 0, $2 FROM unnest($1::text[]) AS id
       )
       UPDATE webhook_deliveries SET attempt_count = 1, first_attempt_batch = $3 WHERE id = ANY($1)`, [ids, IN_FLIGHT, batchId]);
    const secrets = new Map<string, string>();
    for (const d of sending) {
      if (!secrets.has(d.endpoint_id)) secrets.set(d.endpoint_id, sealedColumn.from(d.secret)!);
      claims.set(d.id, {
        kind: 'send',
        target: { delivery: { id: d.id, eventId: d.event_id, eventType: d.event_type, payload: d.payload },
          endpoint: { url: d.url, secret: secrets.get(d.endpoint_id)! } },
      });
    }
  });
  return claims;
}
