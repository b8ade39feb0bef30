import { ActivityFailure, ApplicationFailure, TimeoutFailure, proxyActivities } from '@temporalio/workflow';
import type { createAiActivities } from '../../activities/ai/ai-activities';

export type AiOperationPath = 'summarize' | 'ask-draft' | 'case-study';

export const aiOperationWorkflowId = (op: AiOperationPath, operationId: string) => `ai/${op}/${operationId}`;

export interface AiOperationInput {
  operationId: string;
  ai: { maxAttempts: number; retryInitialMs: number; timeoutMs: number; evaluatedModels: string[] };
}

export interface AiOperationOutcome {
  status: string;
}

const NON_RETRYABLE = ['not_configured', 'refused'];

/**
 * One proof AI operation (AI.md §1): the provider activity with a timeout and bounded retries, then
 * validation and the record. When the provider keeps failing, the record fails (its budget unit
 * returns) and the workflow fails with AI_UNAVAILABLE; no text is made up in its place.
 */
export async function aiOperationWorkflow(input: AiOperationInput): Promise<AiOperationOutcome> {
  const { callAiProvider } = proxyActivities<ReturnType<typeof createAiActivities>>({
    // The client's own timeout fires first; this one only catches a worker that went silent.
    startToCloseTimeout: input.ai.timeoutMs + 5_000,
    retry: {
      maximumAttempts: input.ai.maxAttempts,
      initialInterval: input.ai.retryInitialMs,
      backoffCoefficient: 2,
      nonRetryableErrorTypes: NON_RETRYABLE,
    },
  });
  const db = proxyActivities<ReturnType<typeof createAiActivities>>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  let answer;
  try {
    answer = await callAiProvider(input.operationId, input.ai.timeoutMs);
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    const reason = cause instanceof ApplicationFailure && cause.type ? cause.type : cause instanceof TimeoutFailure ? 'timeout' : 'provider_error';
    const reported = cause instanceof ApplicationFailure ? Number(cause.details?.[0]) : NaN;
    const attempts = Number.isFinite(reported) && reported > 0 ? reported : input.ai.maxAttempts;
    await db.failAiOperation(input.operationId, reason, attempts);
    throw ApplicationFailure.nonRetryable(cause?.message ?? 'the AI provider failed', 'AI_UNAVAILABLE', { reason, attempts });
  }
  const status = await db.completeAiOperation(input.operationId, answer.answer, answer.resolved, input.ai.evaluatedModels);
  return { status };
}
