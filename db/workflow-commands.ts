import { DataSource, EntityManager } from 'typeorm';
import {
  agentRunWorkflowId, AiOperationPath, aiOperationWorkflowId, approvalLinkWorkflowId, approvalWorkflowId, deletionWorkflowId,
  domainVerificationWorkflowId, proofHealthWorkflowId, proofRequestWorkflowId, revocationWorkflowId, roomCompileWorkflowId,
  roomJobWorkflowId, roomPromiseWorkflowId, signInLinkWorkflowId, streamCopyWorkflowId, threadSlaWorkflowId, transcriptionWorkflowId,
  uploadWorkflowId,
} from '../workflows/workflow-ids';

type Tenant = { organizationId: string; productId: string | null };
type ApprovalRef = { requestId: string; proofItemId: string; versionId: string };

/** What a committed change asks of Temporal; the worker's command relay carries it out. */
export type WorkflowCommandBody =
  | { type: 'proof.approval.start'; tenant: Tenant; ref: ApprovalRef; isNew: boolean; reminderIntervalMs: number }
  | { type: 'proof.approval.outcome'; ref: ApprovalRef; outcome: 'approved' | 'rejected' | 'superseded' | 'cancelled' }
  | { type: 'proof.revocation.start'; tenant: Tenant; revocationId: string; slaDeadlineAt: string }
  | { type: 'proof.revocation.completed'; revocationId: string }
  | { type: 'proof.deletion.deleted'; tenant: Tenant; proofItemId: string; deletedAt: string; recoveryClosesAt: string }
  | { type: 'proof.deletion.restored'; proofItemId: string }
  | { type: 'thread.sla.promise'; tenant: Tenant; threadId: string; dueAt: string | null }
  | { type: 'thread.sla.replied'; threadId: string }
  | { type: 'proof.request.start'; tenant: Tenant; requestId: string; delivered: boolean; remindAfterMs: number | null; expiresAt: string }
  | { type: 'proof.request.closed'; requestId: string; outcome: 'responded' | 'cancelled' | 'opted_out' }
  | {
    type: 'collection.approval_link.deliver'; tenant: Tenant; deliveryId: string; proofItemId: string; channel: 'email' | 'in_app';
    /** Why the person link goes out (rows written before this field: approval), and until when it works. */
    reason?: 'approval' | 'person_link'; expiresAt?: string;
  }
  | { type: 'collection.domain.check'; tenant: Tenant; domainId: string; intervalMs: number; deadline: string }
  | { type: 'collection.upload.start'; tenant: Tenant; sessionId: string; expiresAt: string; taskQueue: string }
  | { type: 'collection.upload.cancel'; sessionId: string }
  | { type: 'collection.transcription.start'; tenant: Tenant; sessionId: string; taskQueue: string;
    settings: { maxAttempts: number; retryInitialMs: number; timeoutMs: number }; }
  | { type: 'proof.stream.copy'; tenant: { organizationId: string; productId: string }; mediaAssetId: string; versionId: string }
  | { type: 'room.agent_run.start'; tenant: Tenant & { productId: string }; runId: string; approvalTtlMs: number }
  | { type: 'room.compile.start'; tenant: Tenant & { productId: string }; documentId: string;
    ai: { maxAttempts: number; retryInitialMs: number; timeoutMs: number }; }
  | { type: 'room.agent_run.wake'; runId: string }
  | { type: 'room.job.start'; tenant: Tenant & { productId: string }; jobId: string }
  | { type: 'room.promise.watch'; tenant: Tenant & { productId: string }; promiseId: string; dueAt: string }
  | { type: 'room.promise.settled'; promiseId: string }
  | {
    type: 'proof.ai_operation.start'; tenant: { organizationId: string; productId: string }; operationId: string;
    path: AiOperationPath; taskQueue: string;
    ai: { maxAttempts: number; retryInitialMs: number; timeoutMs: number; evaluatedModels: string[] };
  }
  | { type: 'proof.health.run'; tenant: { organizationId: string; productId: string }; intervalMs: number }
  | { type: 'platform.sign_in_link.deliver'; tenant: Tenant; linkId: string };

/** Commands to one workflow run in the order they were written; the key is that workflow's id. */
export function orderingKeyOf(c: WorkflowCommandBody): string {
  switch (c.type) {
    case 'proof.approval.start':
    case 'proof.approval.outcome':
      return approvalWorkflowId(c.ref.proofItemId, c.ref.versionId);
    case 'proof.revocation.start':
    case 'proof.revocation.completed':
      return revocationWorkflowId(c.revocationId);
    case 'proof.deletion.deleted':
    case 'proof.deletion.restored':
      return deletionWorkflowId(c.proofItemId);
    case 'thread.sla.promise':
    case 'thread.sla.replied':
      return threadSlaWorkflowId(c.threadId);
    case 'proof.request.start':
    case 'proof.request.closed':
      return proofRequestWorkflowId(c.requestId);
    case 'collection.approval_link.deliver':
      return approvalLinkWorkflowId(c.proofItemId, c.deliveryId);
    case 'collection.domain.check':
      return domainVerificationWorkflowId(c.domainId);
    case 'collection.upload.start':
    case 'collection.upload.cancel':
      return uploadWorkflowId(c.sessionId);
    case 'collection.transcription.start':
      return transcriptionWorkflowId(c.sessionId);
    case 'proof.stream.copy':
      return streamCopyWorkflowId(c.mediaAssetId);
    case 'room.compile.start':
      return roomCompileWorkflowId(c.documentId);
    case 'room.agent_run.start':
    case 'room.agent_run.wake':
      return agentRunWorkflowId(c.runId);
    case 'room.job.start':
      return roomJobWorkflowId(c.jobId);
    case 'room.promise.watch':
    case 'room.promise.settled':
      return roomPromiseWorkflowId(c.promiseId);
    case 'proof.ai_operation.start':
      return aiOperationWorkflowId(c.path, c.operationId);
    case 'proof.health.run':
      return proofHealthWorkflowId(c.tenant.productId);
    case 'platform.sign_in_link.deliver':
      return signInLinkWorkflowId(c.linkId);
  }
}

/** Writes the command in the caller's transaction: a change that rolls back asks for nothing. */
export async function enqueueWorkflowCommand(em: EntityManager, command: WorkflowCommandBody): Promise<void> {
  await em.query(
    `INSERT INTO workflow_commands (ordering_key, command) VALUES ($1, $2)`,
    [orderingKeyOf(command), JSON.stringify(command)],
  );
}

export interface ClaimedCommand {
  seq: string;
  attempts: number;
  command: WorkflowCommandBody;
}

// Long enough for a Temporal call; a worker that dies holding a claim loses it after this.
const LEASE = '1 minute';

/**
 * Claims up to `limit` commands in one short statement: only the oldest pending command of each
 * workflow, so two workers never reorder a workflow's signals. The claim is a lease, committed at once,
 * so no lock is held while Temporal is called.
 */
export async function claimWorkflowCommands(ds: DataSource, limit: number): Promise<ClaimedCommand[]> {
  const [rows]: [ClaimedCommand[], number] = await ds.query(
    `UPDATE workflow_commands c SET claimed_until = now() + interval '${LEASE}', attempts = c.attempts + 1
      WHERE c.seq IN (
        SELECT w.seq FROM workflow_commands w
         WHERE w.processed_at IS NULL AND (w.claimed_until IS NULL OR w.claimed_until <= now())
           AND NOT EXISTS (SELECT 1 FROM workflow_commands e
                            WHERE e.ordering_key = w.ordering_key AND e.processed_at IS NULL AND e.seq < w.seq)
         ORDER BY w.seq LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING c.seq::text AS seq, c.attempts, c.command`,
    [limit],
  );
  return rows;
}

export async function completeWorkflowCommand(ds: DataSource, seq: string): Promise<void> {
  await ds.query(`UPDATE workflow_commands SET processed_at = now(), claimed_until = NULL, last_error = NULL WHERE seq = $1`, [seq]);
}

/** A failed command waits (doubling, at most a minute) and is tried again: it is never dropped. */
export async function retryWorkflowCommandLater(ds: DataSource, seq: string, attempts: number, error: string): Promise<void> {
  const waitMs = Math.min(1000 * 2 ** Math.min(attempts - 1, 6), 60_000);
  await ds.query(
    `UPDATE workflow_commands SET claimed_until = now() + $2 * interval '1 millisecond', last_error = $3 WHERE seq = $1`,
    [seq, waitMs, error.slice(0, 1000)],
  );
}
