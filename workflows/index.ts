export { maintenanceWorkflow } from './maintenance-workflow';
export { threadSlaWorkflow } from './thread-sla-workflow';
