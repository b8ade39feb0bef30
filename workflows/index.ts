export { maintenanceWorkflow } from './maintenance-workflow';
export { webhookDeliveryWorkflow } from './webhook-delivery-workflow';
