import { DataSource } from 'typeorm';
import { PurgeCounts, purgeExpiredRecords } from '../../db/platform/maintenance';

export interface DatabaseActivityDeps {
  dataSource: DataSource;
}

/** Activities that touch only PostgreSQL. */
export function createDatabaseActivities({ dataSource }: DatabaseActivityDeps) {
  return {
    async purgeExpiredRecords(): Promise<PurgeCounts> {
      return purgeExpiredRecords(dataSource);
    },
  };
}
