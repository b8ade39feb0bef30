import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { createRoomActivities } from '../../activities/rooms/room-activities';
import { AiCallSettings, aiCallOptions, aiFailureOf } from '../ai/ai-call';
import { DATABASE_RETRY } from '../platform/database-retry';

export interface RoomCompileInput {
  documentId: string;
  ai: AiCallSettings;
}

const { finishRoomCompile, failRoomCompile } = proxyActivities<ReturnType<typeof createRoomActivities>>({
  startToCloseTimeout: '1 minute',
  retry: DATABASE_RETRY,
});

/**
 * A room's compile (docs/rooms.md#compile-and-promote): the model call with bounded retries, then the citation check and the
 * record. A provider that keeps failing, or answers no usable JSON, fails the record; nothing is made up.
 */
export async function roomCompileWorkflow(input: RoomCompileInput): Promise<string> {
  const { callCompileModel } = proxyActivities<ReturnType<typeof createRoomActivities>>(aiCallOptions(input.ai));
  let content: string;
  try {
    content = await callCompileModel(input.documentId);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    await failRoomCompile(input.documentId);
    throw ApplicationFailure.nonRetryable(aiFailureOf(err, input.ai.maxAttempts).message, 'AI_UNAVAILABLE');
  }
  return finishRoomCompile(input.documentId, content);
}
