export { maintenanceWorkflow } from './maintenance-workflow';
