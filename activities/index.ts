import { DataSource } from 'typeorm';
import { Config } from '../runtime/config';
import { createDatabaseActivities } from './database-activities';
import { createWebhookActivities } from './webhook-activities';
import { createProofActivities } from './proof-activities';

export interface ActivityDeps {
  dataSource: DataSource;
  config: Config;
}

/** Every activity the worker registers, wired to its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createDatabaseActivities(deps),
    ...createWebhookActivities(deps),
    ...createProofActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
