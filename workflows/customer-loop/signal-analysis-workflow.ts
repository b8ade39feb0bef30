import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { createAiActivities } from '../../activities/ai/ai-activities';
import type { createCustomerLoopActivities } from '../../activities/customer-loop/customer-loop-activities';
import { AiCallSettings, aiCallOptions, aiFailureOf } from '../ai/ai-call';
import { DATABASE_RETRY, recordedStep } from '../platform/database-retry';

const db = proxyActivities<ReturnType<typeof createCustomerLoopActivities>>({
  startToCloseTimeout: '1 minute',
  retry: DATABASE_RETRY,
});

export interface SignalAnalysisInput {
  signalId: string;
  ai: AiCallSettings;
}

/**
 * Analyses one signal through the AI provider with bounded retries: sentiment, urgency, summary and
 * candidate feature links. When the provider keeps failing, the signal is marked failed and the
 * workflow fails with AI_UNAVAILABLE; no text is ever made up in its place.
 */
export async function signalAnalysisWorkflow(input: SignalAnalysisInput): Promise<'done' | 'skipped'> {
  const { analyzeSignal } = proxyActivities<ReturnType<typeof createAiActivities>>(aiCallOptions(input.ai));
  const job = await recordedStep('beginSignalAnalysis', () => db.beginSignalAnalysis(input.signalId));
  if (!job) return 'skipped';
  let result;
  try {
    result = await analyzeSignal(job);
  } catch (err) {
    const reason = aiFailureOf(err, input.ai.maxAttempts).message;
    await recordedStep('failSignalAnalysis', () => db.failSignalAnalysis(input.signalId, reason));
    throw ApplicationFailure.nonRetryable(reason, 'AI_UNAVAILABLE');
  }
  await recordedStep('completeSignalAnalysis', () => db.completeSignalAnalysis(input.signalId, result));
  return 'done';
}
