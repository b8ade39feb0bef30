export { maintenanceWorkflow } from './maintenance-workflow';
export { proofApprovalWorkflow } from './proof-approval-workflow';
export { proofDeletionWorkflow } from './proof-deletion-workflow';
export { proofRevocationWorkflow } from './proof-revocation-workflow';
