import { ActivityFailure, condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createRoomActivities } from '../../activities/rooms/room-activities';
import { AiCallSettings, aiCallOptions, aiFailureOf } from '../ai/ai-call';
import { DATABASE_RETRY } from '../platform/database-retry';

/** Something the run waits on changed in the database (a decision, a cancel): look again. */
export const wakeSignal = defineSignal('wake');

export interface AgentRunInput {
  runId: string;
  approvalTtlMs: number;
  ai: AiCallSettings;
}

const { beginAgentRun, failAgentRun, proposeAgentEffect, executeAgentEffect } = proxyActivities<ReturnType<typeof createRoomActivities>>({
  startToCloseTimeout: '1 minute',
  retry: DATABASE_RETRY,
});

/**
 * One agent run (docs/rooms.md#agent-runs-and-approvals): queued → running, the model call (bounded retries), then the side
 * effect, after a person's approval when it needs one. The database holds the state; this only
 * sequences it: a cancel or decision commits first and then wakes the run, and the side-effect
 * step re-checks the run under its lock, so a cancelled run never acts later.
 */
export async function agentRunWorkflow(input: AgentRunInput): Promise<string> {
  let woken = false;
  setHandler(wakeSignal, () => {
    woken = true;
  });
  const { callAgentModel } = proxyActivities<ReturnType<typeof createRoomActivities>>(aiCallOptions(input.ai));
  if (!(await beginAgentRun(input.runId))) return 'cancelled';
  let answer;
  try {
    answer = await callAgentModel(input.runId);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const { reason, message } = aiFailureOf(err, input.ai.maxAttempts);
    await failAgentRun(input.runId, reason === 'malformed_output' ? 'AI_INVALID_OUTPUT' : 'AI_UNAVAILABLE', message);
    return 'failed';
  }
  const proposal = await proposeAgentEffect(input.runId, answer.output, answer.canvasVersion, input.approvalTtlMs);
  if (proposal === 'stopped') return 'stopped';
  let expired = false;
  if (proposal === 'await_approval') expired = !(await condition(() => woken, input.approvalTtlMs));
  return executeAgentEffect(input.runId, expired);
}
