import { ActivityFailure, ActivityOptions, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';

/** How a workflow calls the AI provider: attempts in all, first backoff, one call's timeout (SV_AI_*). */
export interface AiCallSettings {
  maxAttempts: number;
  retryInitialMs: number;
  timeoutMs: number;
}

// Failure types a retry cannot cure (the activities also mark them non-retryable).
const NON_RETRYABLE = ['not_configured', 'refused'];

/**
 * Options of a provider activity: bounded retries with doubling backoff. The client's own timeout fires
 * first; `startToCloseTimeout` adds `slackMs` on top only to catch a worker that went silent.
 */
export function aiCallOptions(ai: AiCallSettings, slackMs = 5_000): ActivityOptions {
  return {
    startToCloseTimeout: ai.timeoutMs + slackMs,
    retry: { maximumAttempts: ai.maxAttempts, initialInterval: ai.retryInitialMs, backoffCoefficient: 2, nonRetryableErrorTypes: NON_RETRYABLE },
  };
}

/**
 * Why a provider activity failed for good (docs/ai.md#connecting-a-provider): its failure type (`refused`, `malformed_output`, …),
 * `timeout`, else `provider_error`; its message; and the attempts it reported (else all of them).
 */
export function aiFailureOf(err: unknown, maxAttempts: number): { reason: string; message: string; attempts: number } {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  const reason = cause instanceof ApplicationFailure && cause.type ? cause.type : cause instanceof TimeoutFailure ? 'timeout' : 'provider_error';
  const reported = cause instanceof ApplicationFailure ? Number(cause.details?.[0]) : NaN;
  return {
    reason,
    message: cause?.message ?? 'the AI provider failed',
    attempts: Number.isFinite(reported) && reported > 0 ? reported : maxAttempts,
  };
}
