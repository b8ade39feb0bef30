import { FastifyInstance } from 'fastify';
import { ServiceError } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { dataOf, errorOf } from '../plugins/responses';
import { healthSchema, livenessSchema } from './schemas';

const CHECK_TIMEOUT_MS = 3_000;
// Shorter than CHECK_TIMEOUT_MS, so the gRPC call (and its retries) has ended before we answer.
const TEMPORAL_DEADLINE_MS = 2_000;

async function answers(check: () => Promise<unknown>): Promise<'ok' | 'failed'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch {
    return 'failed';
  } finally {
    clearTimeout(timer);
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Set when the process has been asked to stop: /readyz answers 503 so a proxy stops sending it requests. */
    draining: boolean;
  }
}

export async function healthRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get('/healthz', {
    schema: { response: { 200: dataOf(livenessSchema) } },
    config: { tag: 'platform', operationId: 'getHealth', summary: 'Liveness: the process answers (its dependencies are /readyz\'s question)' },
  }, async () => ({ data: { status: 'ok' as const } }));

  app.get('/readyz', {
    schema: { response: { 200: dataOf(healthSchema), 503: errorOf('SERVICE_UNAVAILABLE: details name the check that failed, or draining when the process is ' +
      'stopping') } },
    config: { tag: 'platform', operationId: 'getReadiness', summary: 'PostgreSQL and Temporal both answer and the process is not stopping (200), or which ' +
      'does not (503)' } }, async () => {
    const { connection } = deps.temporal;
    const [database, temporal] = await Promise.all([
      answers(() => deps.dataSource.query('SELECT 1')),
      answers(() => connection.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () => connection.workflowService.getSystemInfo({}))),
    ]);
    const checks = { database, temporal };
    const failed = Object.entries(checks).filter(([, state]) => state === 'failed').map(([name]) => name);
    if (app.draining) throw new ServiceError('SERVICE_UNAVAILABLE', 'draining: this process is stopping', { ...checks, draining: true },
      { 'retry-after': '1' });
    if (failed.length > 0) {
      throw new ServiceError('SERVICE_UNAVAILABLE', `${failed.join(' and ')} not answering`, checks);
    }
    return { data: { status: 'ok', checks } };
  });
}
