export { maintenanceWorkflow } from './maintenance-workflow';
export { threadSlaWorkflow } from './thread-sla-workflow';
export { signalAnalysisWorkflow } from './signal-analysis-workflow';
