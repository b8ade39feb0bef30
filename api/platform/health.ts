import { FastifyInstance } from 'fastify';
import { ServiceError } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { dataOf, errorOf } from '../plugins/responses';
import { healthSchema } from './schemas';

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

export async function healthRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get('/healthz', {
    schema: { response: { 200: dataOf(healthSchema), 503: errorOf('SERVICE_UNAVAILABLE: details name the check that failed') } },
    config: { tag: 'platform', operationId: 'getHealth', summary: 'PostgreSQL and Temporal both answer (200), or which one does not (503)' } }, async () => {
    const { connection } = deps.temporal;
    const [database, temporal] = await Promise.all([
      answers(() => deps.dataSource.query('SELECT 1')),
      answers(() => connection.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, () => connection.workflowService.getSystemInfo({}))),
    ]);
    const checks = { database, temporal };
    const failed = Object.entries(checks).filter(([, state]) => state === 'failed').map(([name]) => name);
    if (failed.length > 0) {
      throw new ServiceError('SERVICE_UNAVAILABLE', `${failed.join(' and ')} not answering`, checks);
    }
    return { data: { status: 'ok', checks } };
  });
}
