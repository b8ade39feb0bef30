import { DataSource } from 'typeorm';
import { PurgeCounts, purgeExpiredRecords } from '../../db/platform/maintenance';
import { WorkflowFailure, recordWorkflowFailure } from '../../db/platform/workflow-failures';

export interface DatabaseActivityDeps {
  dataSource: DataSource;
}

/** Activities that touch only PostgreSQL. */
export function createDatabaseActivities({ dataSource }: DatabaseActivityDeps) {
  return {
    async purgeExpiredRecords(): Promise<PurgeCounts> {
      return purgeExpiredRecords(dataSource);
    },
    async recordWorkflowFailure(failure: WorkflowFailure): Promise<void> {
      await recordWorkflowFailure(dataSource, failure);
    },
  };
}
