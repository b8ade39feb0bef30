import { DataSource } from 'typeorm';
import { escalateThreadSla } from '../db/threads';

export interface CustomerLoopActivityDeps {
  dataSource: DataSource;
}

/** Customer-loop activities that touch only PostgreSQL; each is safe to retry. */
export function createCustomerLoopActivities({ dataSource }: CustomerLoopActivityDeps) {
  return {
    async escalateThreadSla(threadId: string, dueAt: string): Promise<boolean> {
      return escalateThreadSla(dataSource, threadId, new Date(dueAt));
    },
  };
}
