export { maintenanceWorkflow } from './platform/maintenance-workflow';
export { webhookDeliveryWorkflow } from './webhooks/webhook-delivery-workflow';
export { proofApprovalWorkflow } from './proof/proof-approval-workflow';
export { proofDeletionWorkflow } from './proof/proof-deletion-workflow';
export { proofRevocationWorkflow } from './proof/proof-revocation-workflow';
export { threadSlaWorkflow } from './customer-loop/thread-sla-workflow';
export { signalAnalysisWorkflow } from './customer-loop/signal-analysis-workflow';
export { aiOperationWorkflow } from './ai/ai-operation-workflow';
