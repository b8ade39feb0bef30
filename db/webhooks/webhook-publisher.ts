import { DataSource } from 'typeorm';
import { newId } from '../rules/ids';
import { subscriptionMatches } from './webhook-endpoints';

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
