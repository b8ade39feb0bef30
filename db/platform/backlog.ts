import { DataSource } from 'typeorm';
import type { BacklogReading } from '../../runtime/metrics';

/**
 * What the relays have still to hand to Temporal: outbox events, workflow commands and webhook
 * deliveries whose workflow has not started; each count and its oldest row's age, on the pending partial indexes.
 */
export async function readBacklog(ds: DataSource): Promise<BacklogReading[]> {
  const rows: Array<{ queue: string; pending: number; oldest_seconds: number | null }> = await ds.query(`
    SELECT 'outbox_events' AS queue, count(*)::int AS pending, extract(epoch FROM now() - min(created_at))::float8 AS oldest_seconds
      FROM outbox_events WHERE processed_at IS NULL
    UNION ALL
    SELECT 'workflow_commands', count(*)::int, extract(epoch FROM now() - min(created_at))::float8
      FROM workflow_commands WHERE processed_at IS NULL
    UNION ALL
    SELECT 'webhook_deliveries', count(*)::int, extract(epoch FROM now() - min(created_at))::float8
      FROM webhook_deliveries WHERE NOT workflow_started`);
  return rows.map((r) => ({ queue: r.queue, pending: r.pending, oldestSeconds: Math.max(0, r.oldest_seconds ?? 0) }));
}
