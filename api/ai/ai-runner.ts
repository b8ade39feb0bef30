import { FastifyRequest } from 'fastify';
import {
  OperationInput, aiUnavailable, failOperation, findOperation, idempotentOperationId, startOperation,
} from '../../db/ai/ai-operations';
import { ServiceError } from '../../runtime/service-error';
import { tenantStartOptions } from '../../runtime/workflow-memo';
import { aiOperationWorkflow } from '../../workflows/ai/ai-operation-workflow';
import type { AppDeps } from '../app-deps';
import { keyPrincipal } from '../plugins/auth';
import { productTenant } from '../plugins/product-tenant';
import { AiOperationPath, aiOperationWorkflowId } from '../../workflows/workflow-ids';

const PATHS: Record<OperationInput['operation'], AiOperationPath> = { summarize: 'summarize', ask_draft: 'ask-draft', case_study: 'case-study' };

export const canReadPrivate = (request: FastifyRequest) => keyPrincipal(request).scopes.includes('service:proof:read_private');

/** docs/ai.md#connecting-a-provider: without a provider every AI route answers at once, before any record, budget or workflow. */
export function assertAiConfigured(deps: AppDeps): void {
  if (!deps.config.aiBaseUrl || !deps.config.aiModel) throw aiUnavailable(null, 'not_configured', 0);
}

/**
 * Waits for a workflow's result at most `ms`: true when it ended (either way), false when the deadline
 * passed first. The run goes on; its record tells the outcome later.
 */
export async function endedWithin(result: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([result.then(() => true, () => true), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** The run outlived the route's wait: 503 with the operation's id; the same request with the same Idempotency-Key attaches to it. */
const stillRunning = (operationId: string) => aiUnavailable(operationId, 'still_running', 0);

/**
 * Runs one proof AI operation and waits for it (docs/ai.md#connecting-a-provider, docs/ai.md#walk-through): reserve a budget unit with the record,
 * start `ai/<op>/<operationId>`, await it (at most SV_AI_WAIT_MS), then answer what the record says: the
 * data, a 503 after a provider failure or while it still runs, or a 422 for an answer validation discarded.
 * Under an Idempotency-Key the operation id is derived from the key, so a retry whose answer was lost
 * attaches to the same run or record: one provider call, one budget unit.
 */
export async function runAiOperation(
  deps: AppDeps, request: FastifyRequest, input: OperationInput, subject: { proofItemIds: string[]; versionIds: string[] },
): Promise<object> {
  assertAiConfigured(deps);
  const scope = productTenant(request);
  const { config, dataSource: ds } = deps;
  const derivedId = request.idempotency ? idempotentOperationId(scope, request.idempotency) : undefined;
  const path = PATHS[input.operation];
  const ai = { maxAttempts: config.aiMaxAttempts, retryInitialMs: config.aiRetryInitialMs, timeoutMs: config.aiTimeoutMs,
    evaluatedModels: config.aiEvaluatedModels };
  const { id: operationId, rerun } = await startOperation(
    ds, scope, input, subject, { type: 'service_key', id: keyPrincipal(request).id }, config.aiMonthlyAllowance,
    { path, taskQueue: config.taskQueue, ai }, derivedId);
  const workflowId = aiOperationWorkflowId(path, operationId);
  let op = await findOperation(ds, scope, operationId);
  if (op.status === 'running') {
    // One deadline for the whole request, a re-run's wait for its old run included.
    const deadline = Date.now() + config.aiWaitMs;
    const left = () => Math.max(0, deadline - Date.now());
    let handle;
    try {
      // A failed run that is run again: what is left of the old run ends first, so the start below makes a new one.
      if (rerun) await endedWithin(deps.temporal.workflow.getHandle(workflowId).result(), left());
      // The command relay may have started this run already, and a retry joins the run in progress (or
      // starts the one a crash lost): either way one run.
      handle = await deps.temporal.workflow.start(aiOperationWorkflow, {
        workflowId,
        taskQueue: config.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ operationId, ai }],
        ...tenantStartOptions(scope.organizationId, scope.productId),
      });
    } catch (err) {
      request.log.error({ err }, 'could not start the AI operation workflow');
      await failOperation(ds, operationId, { code: 'AI_UNAVAILABLE', reason: 'provider_error', attempts: 0 });
      throw aiUnavailable(operationId, 'provider_error', 0);
    }
    // The record tells the outcome; a failed run has already written it there.
    if (!(await endedWithin(handle.result(), left()))) throw stillRunning(operationId);
    op = await findOperation(ds, scope, operationId);
  }
  if (op.status === 'succeeded' && op.result) return op.result;
  if (op.status === 'discarded' && op.failure) {
    const message = op.failure.code === 'ASK_POLICY_FAILED'
      ? 'the draft failed the ask policy and was discarded'
      : 'no statement survived citation validation';
    throw new ServiceError(op.failure.code, message, { operationId, ...op.failure.details });
  }
  if (op.status === 'running') throw stillRunning(operationId);
  throw aiUnavailable(operationId, op.failure?.reason ?? 'provider_error', op.failure?.attempts ?? 0);
}
