import { ActivityFailure, ApplicationFailure, TimeoutFailure, proxyActivities } from '@temporalio/workflow';
import type { createTranscriptionActivities } from '../../activities/ai/transcription-activities';

export const transcriptionWorkflowId = (sessionId: string) => `ai/transcription/${sessionId}`;

export interface TranscriptionInput {
  sessionId: string;
  ai: { maxAttempts: number; retryInitialMs: number; timeoutMs: number };
}

const NON_RETRYABLE = ['not_configured', 'refused'];

/**
 * Automatic captions of one recording (COLLECTION.md §7): the provider's audio transcription with a
 * timeout and bounded retries, then the track's next version. When the provider keeps failing, the
 * track is `failed`; no text is made up in its place.
 */
export async function transcriptionWorkflow(input: TranscriptionInput): Promise<'ready' | 'failed'> {
  const { transcribeRecording } = proxyActivities<ReturnType<typeof createTranscriptionActivities>>({
    // The client's own timeout fires first; this one only catches a worker that went silent. Reading the
    // recording from the store comes on top of the provider's time.
    startToCloseTimeout: input.ai.timeoutMs + 60_000,
    retry: {
      maximumAttempts: input.ai.maxAttempts,
      initialInterval: input.ai.retryInitialMs,
      backoffCoefficient: 2,
      nonRetryableErrorTypes: NON_RETRYABLE,
    },
  });
  const db = proxyActivities<ReturnType<typeof createTranscriptionActivities>>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  let vtt: string;
  try {
    vtt = await transcribeRecording(input.sessionId);
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    const reason = cause instanceof ApplicationFailure && cause.type ? cause.type : cause instanceof TimeoutFailure ? 'timeout' : 'provider_error';
    await db.failCaptionTrack(input.sessionId, reason);
    return 'failed';
  }
  await db.recordCaptionTrack(input.sessionId, vtt);
  return 'ready';
}
