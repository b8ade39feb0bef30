export { maintenanceWorkflow } from './maintenance-workflow';
export { webhookDeliveryWorkflow } from './webhook-delivery-workflow';
export { proofApprovalWorkflow } from './proof-approval-workflow';
export { proofDeletionWorkflow } from './proof-deletion-workflow';
export { proofRevocationWorkflow } from './proof-revocation-workflow';
export { threadSlaWorkflow } from './thread-sla-workflow';
export { signalAnalysisWorkflow } from './signal-analysis-workflow';
