// Every workflow id, in one place for the workflows, the command outbox, db/ and the worker. Pure code
// only: workflows bundle it. Never change a spelling: running workflows and saved histories carry these ids.

export const MAINTENANCE_WORKFLOW_ID = 'maintenance/purge-expired';
export const signInLinkWorkflowId = (linkId: string) => `sign-in-link/${linkId}`;

export type AiOperationPath = 'summarize' | 'ask-draft' | 'case-study';

export const aiOperationWorkflowId = (op: AiOperationPath, operationId: string) => `ai/${op}/${operationId}`;
export const transcriptionWorkflowId = (sessionId: string) => `ai/transcription/${sessionId}`;
export const signalAnalysisWorkflowId = (signalId: string) => `ai/signal-analysis/${signalId}`;

export const threadSlaWorkflowId = (threadId: string) => `thread-sla/${threadId}`;

export const approvalWorkflowId = (itemId: string, versionId: string) => `proof-approval/${itemId}/${versionId}`;
export const revocationWorkflowId = (revocationId: string) => `revocation/${revocationId}`;
export const deletionWorkflowId = (itemId: string) => `proof-deletion/${itemId}`;

export const approvalLinkWorkflowId = (itemId: string, deliveryId: string) => `approval-link/${itemId}/${deliveryId}`;
export const domainVerificationWorkflowId = (domainId: string) => `collection-domain/${domainId}`;
export const proofRequestWorkflowId = (requestId: string) => `proof-request/${requestId}`;
export const uploadWorkflowId = (sessionId: string) => `upload/${sessionId}`;

export const streamCopyWorkflowId = (mediaAssetId: string) => `stream-copy/${mediaAssetId}`;
export const proofHealthWorkflowId = (productId: string) => `proof-health/${productId}`;

export const webhookBatchWorkflowId = (batchId: string) => `webhook-batch/${batchId}`;
export const webhookDeliveryWorkflowId = (deliveryId: string) => `webhook-delivery/${deliveryId}`;

export const agentRunWorkflowId = (runId: string) => `agent-run/${runId}`;
export const roomCompileWorkflowId = (documentId: string) => `room-compile/${documentId}`;
export const roomJobWorkflowId = (jobId: string) => `room-job/${jobId}`;
export const roomPromiseWorkflowId = (promiseId: string) => `room-promise/${promiseId}`;
