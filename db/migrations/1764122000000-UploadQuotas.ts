import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Quotas on anonymous upload storage and the 24-hour erasure of unsubmitted drafts' media. An upload
 * records its draft's flow and the (hashed) client address that opened it, so a flow's and an address's
 * bytes of the UTC day are one indexed sum; the sweep reads the open and complete uploads by age.
 */
export class UploadQuotas1764122000000 implements MigrationInterface {
  name = 'UploadQuotas1764122000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE collection_uploads ADD COLUMN flow_id text, ADD COLUMN client_address text`);
    await q.query(`UPDATE collection_uploads u SET flow_id = d.flow_id FROM collection_drafts d WHERE d.id = u.draft_id`);
    await q.query(`CREATE INDEX collection_uploads_flow_day_idx ON collection_uploads (flow_id, created_at) WHERE flow_id IS NOT NULL`);
    await q.query(`CREATE INDEX collection_uploads_address_day_idx ON collection_uploads (client_address, created_at) WHERE client_address IS NOT NULL`);
    await q.query(`CREATE INDEX collection_uploads_live_idx ON collection_uploads (updated_at) WHERE draft_id IS NOT NULL AND status IN ('open', 'complete')`);
    await q.query(`ALTER TABLE collection_interview_uploads ADD COLUMN client_address text`);
    await q.query(`CREATE INDEX collection_interview_uploads_address_day_idx ON collection_interview_uploads (client_address, created_at) WHERE client_address IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX collection_interview_uploads_address_day_idx`);
    await q.query(`ALTER TABLE collection_interview_uploads DROP COLUMN client_address`);
    await q.query(`DROP INDEX collection_uploads_live_idx`);
    await q.query(`DROP INDEX collection_uploads_address_day_idx`);
    await q.query(`DROP INDEX collection_uploads_flow_day_idx`);
    await q.query(`ALTER TABLE collection_uploads DROP COLUMN client_address, DROP COLUMN flow_id`);
  }
}
