import { DataSource } from 'typeorm';
import { conflict, notFound } from '../../runtime/service-error';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../entities';
import { DeliveryStatus } from '../entities/webhook-delivery';
import { newId } from '../rules/ids';
import { Page, PageRequest, pageOf } from '../pagination';
import { newSecret } from '../rules/secrets';
import { sealedColumn } from '../../runtime/secret-box';

export const MAX_ENDPOINTS = 20;
export const MAX_SUBSCRIPTIONS = 50;
/** Exact event names, a prefix such as `proof.*`, or `*`. */
export const SUBSCRIPTION_PATTERN = /^(\*|[a-z][a-z_]*(\.[a-z][a-z_]*)*(\.\*)?)$/;
export const RESPONSE_EXCERPT_BYTES = 4096;

export function subscriptionMatches(subscriptions: string[], eventType: string): boolean {
  return subscriptions.some((s) => s === '*' || s === eventType || (s.endsWith('.*') && eventType.startsWith(s.slice(0, -1))));
}

export interface EndpointView {
  id: string;
  url: string;
  description: string;
  subscriptions: string[];
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

function viewEndpoint(e: WebhookEndpoint): EndpointView {
  return {
    id: e.id, url: e.url, description: e.description, subscriptions: e.subscriptions, enabled: e.enabled,
    createdAt: e.createdAt.toISOString(), updatedAt: e.updatedAt.toISOString(),
  };
}

export interface EndpointWithSecret {
  endpoint: EndpointView;
  /** Shown at creation and rotation only. */
  secret: string;
}

export interface EndpointInput {
  url: string;
  description?: string;
  subscriptions: string[];
  enabled?: boolean;
}

export async function createEndpoint(ds: DataSource, organizationId: string, input: EndpointInput): Promise<EndpointWithSecret> {
  return ds.transaction(async (em) => {
    // Serialises creates per workspace so that two at once cannot both pass the limit.
    await em.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`webhook-endpoints:${organizationId}`]);
    const repo = em.getRepository(WebhookEndpoint);
    const count = await repo.createQueryBuilder('e')
      .where('e.organization_id = :organizationId AND e.deleted_at IS NULL', { organizationId }).getCount();
    if (count >= MAX_ENDPOINTS) throw conflict(`a workspace has at most ${MAX_ENDPOINTS} webhook endpoints`);
    const secret = newSecret('whsec');
    const endpoint = await repo.save({
      id: newId('whe'),
      organizationId,
      url: input.url,
      description: input.description ?? '',
      subscriptions: [...new Set(input.subscriptions)],
      enabled: input.enabled ?? true,
      secret,
      deletedAt: null,
    });
    return { endpoint: viewEndpoint(endpoint), secret };
  });
}

async function findEndpoint(ds: DataSource, organizationId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await ds.getRepository(WebhookEndpoint).createQueryBuilder('e')
    .where('e.id = :id AND e.organization_id = :organizationId AND e.deleted_at IS NULL', { id, organizationId })
    .getOne();
  if (!endpoint) throw notFound('webhook endpoint');
  return endpoint;
}

export async function listEndpoints(ds: DataSource, organizationId: string): Promise<EndpointView[]> {
  const rows = await ds.getRepository(WebhookEndpoint).createQueryBuilder('e')
    .where('e.organization_id = :organizationId AND e.deleted_at IS NULL', { organizationId })
    .orderBy('e.created_at', 'ASC').addOrderBy('e.id', 'ASC')
    .getMany();
  return rows.map(viewEndpoint);
}

export async function getEndpoint(ds: DataSource, organizationId: string, id: string): Promise<EndpointView> {
  return viewEndpoint(await findEndpoint(ds, organizationId, id));
}

export async function updateEndpoint(
  ds: DataSource, organizationId: string, id: string, patch: Partial<EndpointInput>,
): Promise<EndpointView> {
  const endpoint = await findEndpoint(ds, organizationId, id);
  if (patch.url !== undefined) endpoint.url = patch.url;
  if (patch.description !== undefined) endpoint.description = patch.description;
  if (patch.subscriptions !== undefined) endpoint.subscriptions = [...new Set(patch.subscriptions)];
  if (patch.enabled !== undefined) endpoint.enabled = patch.enabled;
  return viewEndpoint(await ds.getRepository(WebhookEndpoint).save(endpoint));
}

/** Deletes an endpoint for good; its delivery log stays readable. */
export async function deleteEndpoint(ds: DataSource, organizationId: string, id: string): Promise<void> {
  await findEndpoint(ds, organizationId, id);
  await ds.getRepository(WebhookEndpoint).update(id, { deletedAt: new Date(), enabled: false });
}

/** A new secret at once: the next attempt of every delivery signs with it, and the old one is gone. */
export async function rotateEndpointSecret(ds: DataSource, organizationId: string, id: string): Promise<EndpointWithSecret> {
  const endpoint = await findEndpoint(ds, organizationId, id);
  const secret = newSecret('whsec');
  endpoint.secret = secret;
  const saved = await ds.getRepository(WebhookEndpoint).save(endpoint);
  return { endpoint: viewEndpoint(saved), secret };
}

export interface DeliveryView {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attemptCount: number;
  lastError: string | null;
  replayOfId: string | null;
  createdAt: string;
  completedAt: string | null;
}

function viewDelivery(d: WebhookDelivery): DeliveryView {
  return {
    id: d.id, endpointId: d.endpointId, eventId: d.eventId, eventType: d.eventType, status: d.status,
    attemptCount: d.attemptCount, lastError: d.lastError, replayOfId: d.replayOfId,
    createdAt: d.createdAt.toISOString(), completedAt: d.completedAt?.toISOString() ?? null,
  };
}

export interface DeliveryFilters {
  endpointId?: string;
  status?: DeliveryStatus;
  eventType?: string;
}

export async function listDeliveries(
  ds: DataSource, organizationId: string, filters: DeliveryFilters, page: PageRequest,
): Promise<Page<DeliveryView>> {
  const qb = ds.getRepository(WebhookDelivery).createQueryBuilder('d')
    .where('d.organization_id = :organizationId', { organizationId });
  if (filters.endpointId) qb.andWhere('d.endpoint_id = :endpointId', { endpointId: filters.endpointId });
  if (filters.status) qb.andWhere('d.status = :status', { status: filters.status });
  if (filters.eventType) qb.andWhere('d.event_type = :eventType', { eventType: filters.eventType });
  return pageOf(qb, 'd', page, viewDelivery);
}

async function findDelivery(ds: DataSource, organizationId: string, id: string): Promise<WebhookDelivery> {
  const delivery = await ds.getRepository(WebhookDelivery).findOneBy({ id, organizationId });
  if (!delivery) throw notFound('webhook delivery');
  return delivery;
}

export async function getDelivery(ds: DataSource, organizationId: string, id: string) {
  const delivery = await findDelivery(ds, organizationId, id);
  const attempts = await ds.getRepository(WebhookAttempt).find({ where: { deliveryId: id }, order: { attempt: 'ASC' } });
  return {
    ...viewDelivery(delivery),
    body: delivery.payload,
    attempts: attempts.map((a) => ({
      attempt: a.attempt, startedAt: a.startedAt.toISOString(), durationMs: a.durationMs,
      statusCode: a.statusCode, error: a.error, responseExcerpt: a.responseExcerpt,
    })),
  };
}

/** A new delivery of the same event id and byte-identical body; the relay starts it. */
export async function replayDelivery(ds: DataSource, organizationId: string, id: string): Promise<DeliveryView> {
  const original = await findDelivery(ds, organizationId, id);
  if (original.status === 'pending') throw conflict('the delivery is still pending; replay it once it has delivered or failed');
  await findEndpoint(ds, organizationId, original.endpointId);
  const replay = await ds.getRepository(WebhookDelivery).save({
    id: newId('whd'),
    organizationId,
    endpointId: original.endpointId,
    productId: original.productId,
    eventId: original.eventId,
    eventType: original.eventType,
    payload: original.payload,
    status: 'pending' as const,
    attemptCount: 0,
    lastError: null,
    replayOfId: original.id,
    workflowStarted: false,
    completedAt: null,
  });
  return viewDelivery(replay);
}

/**
 * Publisher, first phase: turns committed outbox rows into one delivery per matching endpoint (disabled
 * ones included: they fail without sending, visibly in the log). The envelope id is the outbox row's
 * id, so a sweep that runs twice creates nothing twice.
 */
export async function publishOutbox(ds: DataSource, batchSize: number): Promise<number> {
  return ds.transaction(async (em) => {
    const events: Array<{ id: string; organization_id: string; product_id: string | null; event_type: string; payload: unknown; created_at: Date }> =
      await em.query(
        `SELECT id, organization_id, product_id, event_type, payload, created_at FROM outbox_events
          WHERE processed_at IS NULL AND available_at <= now()
          ORDER BY available_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [batchSize],
      );
    if (events.length === 0) return 0;
    const endpoints: Array<{ id: string; organization_id: string; subscriptions: string[] }> = await em.query(
      `SELECT id, organization_id, subscriptions FROM webhook_endpoints
        WHERE organization_id = ANY($1) AND deleted_at IS NULL`,
      [[...new Set(events.map((e) => e.organization_id))]],
    );
    const rows: unknown[][] = [];
    for (const event of events) {
      const body = JSON.stringify({
        id: event.id,
        type: event.event_type,
        createdAt: new Date(event.created_at).toISOString(),
        organizationId: event.organization_id,
        productId: event.product_id,
        data: event.payload,
      });
      for (const endpoint of endpoints) {
        if (endpoint.organization_id === event.organization_id && subscriptionMatches(endpoint.subscriptions, event.event_type)) {
          rows.push([newId('whd'), event.organization_id, endpoint.id, event.product_id, event.id, event.event_type, body]);
        }
      }
    }
    if (rows.length > 0) {
      const column = (i: number) => rows.map((r) => r[i]);
      await em.query(
        `INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, product_id, event_id, event_type, payload)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
         ON CONFLICT (event_id, endpoint_id) WHERE replay_of_id IS NULL DO NOTHING`,
        [column(0), column(1), column(2), column(3), column(4), column(5), column(6)],
      );
    }
    await em.query(`UPDATE outbox_events SET processed_at = now() WHERE id = ANY($1)`, [events.map((e) => e.id)]);
    return events.length;
  });
}

export interface UnstartedDelivery {
  id: string;
  organizationId: string;
  productId: string | null;
  endpointId: string;
}

// Long enough for a batch of Temporal starts; a worker that dies holding a claim loses it after this.
const DISPATCH_LEASE = '1 minute';
// A delivery whose start failed waits this long before another try.
const DISPATCH_RETRY = '5 seconds';

/**
 * Publisher, second phase: claims deliveries whose workflow has not started yet with a lease (one short
 * statement, committed at once), hands them to `start` outside any transaction, and marks the ones it
 * answers as started. No lock is held while Temporal is called; a failed start delays only its own
 * batch, and a delivery claimed again after a lost mark sends nothing twice (`claimFirstAttempts`).
 */
export async function dispatchDeliveries(
  ds: DataSource, batchSize: number, start: (deliveries: UnstartedDelivery[]) => Promise<string[]>,
): Promise<number> {
  const [rows]: [Array<{ id: string; organization_id: string; product_id: string | null; endpoint_id: string }>, number] = await ds.query(
    `UPDATE webhook_deliveries d SET dispatch_claimed_until = now() + interval '${DISPATCH_LEASE}'
      WHERE d.id IN (SELECT id FROM webhook_deliveries
                      WHERE NOT workflow_started AND (dispatch_claimed_until IS NULL OR dispatch_claimed_until <= now())
                      ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING d.id, d.organization_id, d.product_id, d.endpoint_id`,
    [batchSize],
  );
  if (rows.length === 0) return 0;
  const started = await start(rows.map((r) => ({ id: r.id, organizationId: r.organization_id, productId: r.product_id, endpointId: r.endpoint_id })));
  // The batch just started may be claiming these rows already: lock them in id order, as it does, or
  // the two deadlock.
  const inIdOrder = `id IN (SELECT id FROM webhook_deliveries WHERE id = ANY($1) ORDER BY id FOR UPDATE)`;
  await ds.query(`UPDATE webhook_deliveries SET workflow_started = true, dispatch_claimed_until = NULL WHERE ${inIdOrder}`, [started]);
  const left = rows.map((r) => r.id).filter((id) => !started.includes(id));
  if (left.length > 0) {
    await ds.query(`UPDATE webhook_deliveries SET dispatch_claimed_until = now() + interval '${DISPATCH_RETRY}' WHERE ${inIdOrder}`, [left]);
  }
  return rows.length;
}

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
        target: { delivery: { id: d.id, eventId: d.event_id, eventType: d.event_type, payload: d.payload }, endpoint: { url: d.url, secret: secrets.get(d.endpoint_id)! } },
      });
    }
  });
  return claims;
}
