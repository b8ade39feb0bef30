import { DataSource } from 'typeorm';
import { Config } from '../../runtime/config';
import { mediaStoreOf } from '../../runtime/media-store';
import { DraftSweepCounts, sweepExpiredDrafts, sweepUnsubmittedMedia } from '../../db/collection/draft-expiry';
import { AssemblyResult, assembleUpload, eraseUploadBytes, expireUpload } from '../../db/collection/uploads';

export interface CollectionActivityDeps {
  dataSource: DataSource;
  config: Config;
}

/** Upload workflow steps and the draft sweep; each is idempotent (a retried assembly writes the same media id). */
export function createCollectionActivities({ dataSource, config }: CollectionActivityDeps) {
  const store = mediaStoreOf(config);
  return {
    async assembleUpload(sessionId: string): Promise<AssemblyResult> {
      return assembleUpload(dataSource, store, sessionId);
    },
    async expireUpload(sessionId: string): Promise<boolean> {
      return expireUpload(dataSource, store, sessionId);
    },
    async eraseUpload(sessionId: string): Promise<void> {
      await eraseUploadBytes(dataSource, store, [sessionId]);
    },
    /**
     * The maintenance round's draft sweep: idle drafts are erased, bytes included; before that, what an
     * unsubmitted draft uploaded is erased once it sat for PROOF_UNSUBMITTED_MEDIA_TTL_MS.
     */
    async sweepExpiredDrafts(): Promise<DraftSweepCounts & { unsubmittedUploads: number }> {
      const unsubmittedUploads = await sweepUnsubmittedMedia(dataSource, store, config.unsubmittedMediaTtlMs);
      return { ...await sweepExpiredDrafts(dataSource, store), unsubmittedUploads };
    },
  };
}
