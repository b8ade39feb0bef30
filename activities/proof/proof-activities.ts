import { DataSource } from 'typeorm';
import { recordApprovalReminder } from '../../db/proof/proof-approvals';
import { closeRecoveryWindow } from '../../db/proof/proof-deletions';
import { escalateRevocation } from '../../db/proof/proof-revocations';

export interface ProofActivityDeps {
  dataSource: DataSource;
}

/** Proof workflow steps; each is idempotent, so a retried activity never writes twice. */
export function createProofActivities({ dataSource }: ProofActivityDeps) {
  return {
    async remindApprover(requestId: string, n: number): Promise<string> {
      return recordApprovalReminder(dataSource, requestId, n);
    },
    async escalateRevocation(revocationId: string): Promise<boolean> {
      return escalateRevocation(dataSource, revocationId);
    },
    async closeRecoveryWindow(proofItemId: string, deletedAt: string): Promise<boolean> {
      return closeRecoveryWindow(dataSource, proofItemId, deletedAt);
    },
  };
}
