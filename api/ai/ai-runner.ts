import { FastifyRequest } from 'fastify';
import { OperationInput, aiUnavailable, failOperation, findOperation, startOperation } from '../../db/ai/ai-operations';
import { ServiceError } from '../../runtime/service-error';
import { tenantStartOptions } from '../../runtime/workflow-memo';
import { AiOperationPath, aiOperationWorkflow, aiOperationWorkflowId } from '../../workflows/ai/ai-operation-workflow';
import type { AppDeps } from '../app';
import { keyPrincipal } from '../plugins/auth';
import { productTenant } from '../plugins/product-tenant';

const PATHS: Record<OperationInput['operation'], AiOperationPath> = { summarize: 'summarize', ask_draft: 'ask-draft', case_study: 'case-study' };

export const canReadPrivate = (request: FastifyRequest) => keyPrincipal(request).scopes.includes('service:proof:read_private');

/** AI.md §1: without a provider every AI route answers at once, before any record, budget or workflow. */
export function assertAiConfigured(deps: AppDeps): void {
  if (!deps.config.aiBaseUrl || !deps.config.aiModel) throw aiUnavailable(null, 'not_configured', 0);
}

/**
 * Runs one proof AI operation and waits for it (AI.md §1, §2): reserve a budget unit with the record,
 * start `ai/<op>/<operationId>`, await it, then answer what the record says: the data, a 503 after a
 * provider failure, or a 422 for an answer validation discarded.
 */
export async function runAiOperation(
  deps: AppDeps, request: FastifyRequest, input: OperationInput, subject: { proofItemIds: string[]; versionIds: string[] },
): Promise<object> {
  assertAiConfigured(deps);
  const scope = productTenant(request);
  const { config, dataSource: ds } = deps;
  const operationId = await startOperation(ds, scope, input, subject, { type: 'service_key', id: keyPrincipal(request).id }, config.aiMonthlyAllowance);
  let handle;
  try {
    handle = await deps.temporal.workflow.start(aiOperationWorkflow, {
      workflowId: aiOperationWorkflowId(PATHS[input.operation], operationId),
      taskQueue: config.taskQueue,
      args: [{
        operationId,
        ai: { maxAttempts: config.aiMaxAttempts, retryInitialMs: config.aiRetryInitialMs, timeoutMs: config.aiTimeoutMs, evaluatedModels: config.aiEvaluatedModels },
      }],
      ...tenantStartOptions(scope.organizationId, scope.productId),
    });
  } catch (err) {
    request.log.error({ err }, 'could not start the AI operation workflow');
    await failOperation(ds, operationId, { code: 'AI_UNAVAILABLE', reason: 'provider_error', attempts: 0 });
    throw aiUnavailable(operationId, 'provider_error', 0);
  }
  // The record tells the outcome; a failed run has already written it there.
  await handle.result().catch(() => undefined);
  const op = await findOperation(ds, scope, operationId);
  if (op.status === 'succeeded' && op.result) return op.result;
  if (op.status === 'discarded' && op.failure) {
    const message = op.failure.code === 'ASK_POLICY_FAILED'
      ? 'the draft failed the ask policy and was discarded'
      : 'no statement survived citation validation';
    throw new ServiceError(op.failure.code, 422, message, { operationId, ...op.failure.details });
  }
  throw aiUnavailable(operationId, op.failure?.reason ?? 'provider_error', op.failure?.attempts ?? 0);
}
