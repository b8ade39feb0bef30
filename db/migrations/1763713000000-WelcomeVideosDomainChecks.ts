import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Welcome videos upload through the same `collection_uploads` sessions as customer media, without a
 * draft: `purpose = 'welcome_video'` marks them, and a check keeps every other upload on its draft.
 * Custom domains remember what their last DNS check found.
 */
export class WelcomeVideosDomainChecks1763713000000 implements MigrationInterface {
  name = 'WelcomeVideosDomainChecks1763713000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE collection_uploads ALTER COLUMN draft_id DROP NOT NULL`);
    await q.query(`ALTER TABLE collection_uploads DROP CONSTRAINT collection_uploads_purpose_check`);
    await q.query(`ALTER TABLE collection_uploads ADD CONSTRAINT collection_uploads_purpose_check
      CHECK (purpose IN ('response', 'photo', 'logo', 'welcome_video'))`);
    await q.query(`ALTER TABLE collection_uploads ADD CONSTRAINT collection_uploads_owner_check
      CHECK ((purpose = 'welcome_video') = (draft_id IS NULL))`);
    await q.query(`CREATE UNIQUE INDEX collection_welcome_videos_upload_idx ON collection_welcome_videos (upload_session_id)`);
    await q.query(`ALTER TABLE collection_domains ADD COLUMN last_error text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE collection_domains DROP COLUMN last_error`);
    await q.query(`DROP INDEX collection_welcome_videos_upload_idx`);
    await q.query(`DELETE FROM collection_uploads WHERE purpose = 'welcome_video'`);
    await q.query(`ALTER TABLE collection_uploads DROP CONSTRAINT collection_uploads_owner_check`);
    await q.query(`ALTER TABLE collection_uploads DROP CONSTRAINT collection_uploads_purpose_check`);
    await q.query(`ALTER TABLE collection_uploads ADD CONSTRAINT collection_uploads_purpose_check CHECK (purpose IN ('response', 'photo', 'logo'))`);
    await q.query(`ALTER TABLE collection_uploads ALTER COLUMN draft_id SET NOT NULL`);
  }
}
