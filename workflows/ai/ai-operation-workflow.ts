import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { createAiActivities } from '../../activities/ai/ai-activities';
import { AiCallSettings, aiCallOptions, aiFailureOf } from './ai-call';

export interface AiOperationInput {
  operationId: string;
  ai: AiCallSettings & { evaluatedModels: string[] };
}

export interface AiOperationOutcome {
  status: string;
}

/**
 * One proof AI operation (docs/ai.md#operation-records): the provider activity with a timeout and bounded retries, then
 * validation and the record. When the provider keeps failing, the record fails (its budget unit
 * returns) and the workflow fails with AI_UNAVAILABLE; no text is made up in its place.
 */
export async function aiOperationWorkflow(input: AiOperationInput): Promise<AiOperationOutcome> {
  const { callAiProvider } = proxyActivities<ReturnType<typeof createAiActivities>>(aiCallOptions(input.ai));
  const db = proxyActivities<ReturnType<typeof createAiActivities>>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  let answer;
  try {
    answer = await callAiProvider(input.operationId, input.ai.timeoutMs);
  } catch (err) {
    const { reason, message, attempts } = aiFailureOf(err, input.ai.maxAttempts);
    await db.failAiOperation(input.operationId, reason, attempts);
    throw ApplicationFailure.nonRetryable(message, 'AI_UNAVAILABLE', { reason, attempts });
  }
  const status = await db.completeAiOperation(input.operationId, answer.answer, answer.resolved, input.ai.evaluatedModels);
  return { status };
}
