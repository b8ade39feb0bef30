import { proxyActivities } from '@temporalio/workflow';
import type { createTranscriptionActivities } from '../../activities/ai/transcription-activities';
import { AiCallSettings, aiCallOptions, aiFailureOf } from './ai-call';

export interface TranscriptionInput {
  sessionId: string;
  ai: AiCallSettings;
}

/**
 * Automatic captions of one recording (docs/collection.md#uploads-and-the-media-store): the provider's audio transcription with a
 * timeout and bounded retries, then the track's next version. When the provider keeps failing, the
 * track is `failed`; no text is made up in its place.
 */
export async function transcriptionWorkflow(input: TranscriptionInput): Promise<'ready' | 'failed'> {
  // Reading the recording from the store comes on top of the provider's time.
  const { transcribeRecording } = proxyActivities<ReturnType<typeof createTranscriptionActivities>>(aiCallOptions(input.ai, 60_000));
  const db = proxyActivities<ReturnType<typeof createTranscriptionActivities>>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  let vtt: string;
  try {
    vtt = await transcribeRecording(input.sessionId);
  } catch (err) {
    const { reason } = aiFailureOf(err, input.ai.maxAttempts);
    await db.failCaptionTrack(input.sessionId, reason);
    return 'failed';
  }
  await db.recordCaptionTrack(input.sessionId, vtt);
  return 'ready';
}
