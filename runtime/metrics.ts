import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's Prometheus metrics (prom-client), served at `/metrics` by the API and by each worker's
 * metrics listener. One registry per process; under `npm start` the API's `/metrics` sums the API
 * processes' registries (`supervisedMetrics`).
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'sv_process_' });

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const httpRequests = new Counter({
  name: 'sv_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const, registers: [metricsRegistry],
});
export const httpRequestDuration = new Histogram({
  name: 'sv_http_request_duration_seconds', help: 'HTTP request latency, by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const, buckets: LATENCY_BUCKETS, registers: [metricsRegistry],
});
export const intakeTotal = new Counter({
  name: 'sv_intake_total', help: 'Signals and proof submissions taken in (outcome accepted) or refused (outcome refused, with the error code)',
  labelNames: ['kind', 'outcome', 'code'] as const, registers: [metricsRegistry],
});
export const webhookAttempts = new Counter({
  name: 'sv_webhook_attempts_total', help: 'Webhook attempts sent, by outcome: delivered (2xx), refused (another status), failed (no answer)',
  labelNames: ['outcome'] as const, registers: [metricsRegistry],
});
export const webhookAttemptDuration = new Histogram({
  name: 'sv_webhook_attempt_duration_seconds', help: 'Webhook attempt latency, by outcome',
  labelNames: ['outcome'] as const, buckets: LATENCY_BUCKETS, registers: [metricsRegistry],
});
export const relayRows = new Counter({
  name: 'sv_relay_rows_total', help: 'Rows a relay handed to Temporal, by relay', labelNames: ['relay'] as const, registers: [metricsRegistry],
});
export const relayFailures = new Counter({
  name: 'sv_relay_failures_total', help: 'Relay ticks that failed (retried with backoff), by relay', labelNames: ['relay'] as const,
  registers: [metricsRegistry],
});
export const aiOperations = new Counter({
  name: 'sv_ai_operations_total', help: 'AI provider calls, by operation and outcome (succeeded, failed)',
  labelNames: ['operation', 'outcome'] as const, registers: [metricsRegistry],
});

export interface BacklogReading {
  queue: string;
  pending: number;
  /** Age of the oldest pending row, 0 with none. */
  oldestSeconds: number;
}

/**
 * Outbox and relay lag, read from the database at each scrape (the callers pass the query, since
 * runtime/ reads no database): pending rows per queue and the age of the oldest one.
 */
export function registerBacklogGauges(read: () => Promise<BacklogReading[]>): void {
  let reading: Promise<BacklogReading[]> | null = null;
  // Both gauges collect from one query per scrape.
  const once = () => (reading ??= read().finally(() => setTimeout(() => (reading = null), 0)));
  metricsRegistry.removeSingleMetric('sv_outbox_pending');
  metricsRegistry.removeSingleMetric('sv_outbox_lag_seconds');
  new Gauge({
    name: 'sv_outbox_pending', help: 'Rows waiting for a relay, by queue', labelNames: ['queue'] as const, registers: [metricsRegistry],
    async collect() {
      for (const r of await once().catch(() => [])) this.set({ queue: r.queue }, r.pending);
    },
  });
  new Gauge({
    name: 'sv_outbox_lag_seconds', help: 'Age of the oldest row waiting for a relay, by queue', labelNames: ['queue'] as const, registers: [metricsRegistry],
    async collect() {
      for (const r of await once().catch(() => [])) this.set({ queue: r.queue }, r.oldestSeconds);
    },
  });
}

/** The Prometheus text of this process, with `extra` text (the Temporal SDK's own metrics) after it. */
export async function metricsText(extra = ''): Promise<string> {
  const own = await metricsRegistry.metrics();
  return extra ? `${own}\n${extra}` : own;
}
