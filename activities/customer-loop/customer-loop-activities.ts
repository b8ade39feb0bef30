import { DataSource } from 'typeorm';
import {
  AnalysisJob, AnalysisResult, beginSignalAnalysis, completeSignalAnalysis, failSignalAnalysis,
} from '../../db/customer-loop/signal-analysis';
import { escalateThreadSla } from '../../db/customer-loop/threads';

export interface CustomerLoopActivityDeps {
  dataSource: DataSource;
}

/** Customer-loop activities that touch only PostgreSQL; each is safe to retry. */
export function createCustomerLoopActivities({ dataSource }: CustomerLoopActivityDeps) {
  return {
    async escalateThreadSla(threadId: string, dueAt: string): Promise<boolean> {
      return escalateThreadSla(dataSource, threadId, new Date(dueAt));
    },
    async beginSignalAnalysis(signalId: string): Promise<AnalysisJob | null> {
      return beginSignalAnalysis(dataSource, signalId);
    },
    async completeSignalAnalysis(signalId: string, result: AnalysisResult): Promise<void> {
      await completeSignalAnalysis(dataSource, signalId, result);
    },
    async failSignalAnalysis(signalId: string, reason: string): Promise<void> {
      await failSignalAnalysis(dataSource, signalId, reason);
    },
  };
}
