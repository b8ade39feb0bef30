import { DataSource } from 'typeorm';
import { Config } from '../runtime/config';
import { createAiActivities } from './ai/ai-activities';
import { createTranscriptionActivities } from './ai/transcription-activities';
import { createCollectionActivities } from './collection/collection-activities';
import { createDomainActivities } from './collection/domain-activities';
import { createCustomerLoopActivities } from './customer-loop/customer-loop-activities';
import { createDatabaseActivities } from './platform/database-activities';
import { createSignInActivities } from './platform/sign-in-activities';
import { createWebhookActivities } from './webhooks/webhook-activities';
import { createProofActivities } from './proof/proof-activities';
import { createProofRequestActivities } from './collection/proof-request-activities';
import { createIntegrationActivities } from './integrations/integration-activities';
import { createRoomActivities } from './rooms/room-activities';
import { createRoomMaintenanceActivities } from './rooms/room-maintenance-activities';

export interface ActivityDeps {
  dataSource: DataSource;
  config: Config;
  /** Aborted when the worker's shutdown grace is over: calls to third parties still running are abandoned. */
  stopping?: AbortSignal;
}

/** Every activity the worker registers, wired to its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createDatabaseActivities(deps),
    ...createSignInActivities(deps),
    ...createWebhookActivities(deps),
    ...createProofActivities(deps),
    ...createCustomerLoopActivities(deps),
    ...createAiActivities(deps),
    ...createTranscriptionActivities(deps),
    ...createProofRequestActivities(deps),
    ...createCollectionActivities(deps),
    ...createDomainActivities(deps),
    ...createIntegrationActivities(deps),
    ...createRoomActivities(deps),
    ...createRoomMaintenanceActivities(deps),
  };
}
