import { EntityManager } from 'typeorm';
import { newId } from './rules/ids';

export interface OutgoingEvent {
  /**
   * The webhook envelope id (`evt_...`). Proof ledger events pass `evt_<ledger id>` so that the id is
   * stable across sweeps and replays; other events get a new one.
   */
  id?: string;
  organizationId: string;
  productId: string | null;
  type: string;
  /** The envelope's `data`: minimal, never secrets. */
  data: Record<string, unknown>;
}

/** The outbox row's columns, for a statement that writes an event together with its change. */
export const OUTBOX_INSERT = 'INSERT INTO outbox_events (id, organization_id, product_id, event_type, payload)';

/**
 * Queues an event for webhook delivery inside the caller's transaction, so that a change that rolls
 * back is never announced. Writing the same id twice is a no-op.
 */
export async function enqueueEvent(em: EntityManager, event: OutgoingEvent): Promise<string> {
  const id = event.id ?? newId('evt');
  await em.query(
    `${OUTBOX_INSERT} VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`,
    [id, event.organizationId, event.productId, event.type, JSON.stringify(event.data)],
  );
  return id;
}

/**
 * Queues many events in one statement inside the caller's transaction: the same rows, in the same
 * table, as `enqueueEvent` writes one at a time. Answers their ids in order. The service writes its
 * events one per change; this is the load generator's (`bench:webhooks`) and the tests' way to queue
 * a burst.
 */
export async function enqueueEvents(em: EntityManager, events: OutgoingEvent[]): Promise<string[]> {
  const ids = events.map((e) => e.id ?? newId('evt'));
  await em.query(
    `${OUTBOX_INSERT} SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[]) ON CONFLICT (id) DO NOTHING`,
    [ids, events.map((e) => e.organizationId), events.map((e) => e.productId), events.map((e) => e.type), events.map((e) => JSON.stringify(e.data))],
  );
  return ids;
}
