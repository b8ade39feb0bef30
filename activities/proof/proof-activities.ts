import { DataSource } from 'typeorm';
import { Config } from '../../runtime/config';
import { mediaStoreOf } from '../../runtime/media-store';
import { recordApprovalReminder } from '../../db/proof/proof-approvals';
import { closeRecoveryWindow } from '../../db/proof/proof-deletions';
import { escalateRevocation } from '../../db/proof/proof-revocations';

export interface ProofActivityDeps {
  dataSource: DataSource;
  config: Config;
}

/** Proof workflow steps; each is idempotent, so a retried activity never writes twice. */
export function createProofActivities({ dataSource, config }: ProofActivityDeps) {
  const store = mediaStoreOf(config);
  return {
    async remindApprover(requestId: string, n: number): Promise<string> {
      return recordApprovalReminder(dataSource, requestId, n);
    },
    async escalateRevocation(revocationId: string): Promise<boolean> {
      return escalateRevocation(dataSource, revocationId);
    },
    async closeRecoveryWindow(proofItemId: string, deletedAt: string): Promise<boolean> {
      return closeRecoveryWindow(dataSource, store, proofItemId, deletedAt);
    },
  };
}
