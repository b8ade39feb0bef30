import { FastifyInstance } from 'fastify';
import { httpRequestDuration, httpRequests, intakeTotal, metricsRegistry, metricsText } from '../../runtime/metrics';
import { supervisedMetrics } from '../../runtime/role-supervisor';
import { ServiceError } from '../../runtime/service-error';

/** The intake routes by operationId: what sv_intake_total counts. */
const INTAKE: Record<string, string> = {
  createSignal: 'signal', submitProof: 'submission', submitDraft: 'submission', submitNojsForm: 'submission',
};

declare module 'fastify' {
  interface FastifyRequest {
    /** The error code a refusal answered (plugins/errors.ts), for the metrics. */
    errorCode?: string;
  }
}

/**
 * Requests by route pattern (never the raw URL: ids and secret tokens stay out of label values) and
 * status, with latency; intake accepted and refused; `GET /metrics` in the Prometheus text format, under
 * `npm start` summed over every API process sharing the port.
 */
export function registerMetrics(app: FastifyInstance): void {
  const summed = supervisedMetrics(metricsRegistry);
  const read = async () => {
    if (!summed) return metricsText();
    try {
      return await summed();
    } catch (err) {
      throw new ServiceError('SERVICE_UNAVAILABLE', `metrics could not be collected from every API process: ${(err as Error).message}`);
    }
  };
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route, status: String(reply.statusCode) };
    httpRequests.inc(labels);
    httpRequestDuration.observe(labels, reply.elapsedTime / 1000);
    const kind = INTAKE[request.routeOptions.config?.operationId ?? ''];
    if (kind) {
      const refused = reply.statusCode >= 400;
      intakeTotal.inc({ kind, outcome: refused ? 'refused' : 'accepted', code: refused ? request.errorCode ?? String(reply.statusCode) : '' });
    }
  });
  app.get('/metrics', { config: { hidden: true } }, async (_request, reply) =>
    reply.type('text/plain; version=0.0.4; charset=utf-8').header('cache-control', 'no-store').send(await read()));
}
