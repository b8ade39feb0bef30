import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Captions of a customer's recording (every correction a new version) and asynchronous interviews
 * with their answers and one-request answer uploads. Caption text is ours to keep; bytes stay in the media store.
 */
export class CollectionCaptionsInterviews1763713100000 implements MigrationInterface {
  name = 'CollectionCaptionsInterviews1763713100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE collection_caption_tracks (
        upload_id text PRIMARY KEY REFERENCES collection_uploads(id) ON DELETE CASCADE,
        status text NOT NULL CHECK (status IN ('pending', 'ready', 'failed')),
        failure_reason text,
        current_version integer NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE collection_caption_versions (
        upload_id text NOT NULL REFERENCES collection_caption_tracks(upload_id) ON DELETE CASCADE,
        version integer NOT NULL,
        source text NOT NULL CHECK (source IN ('automatic', 'customer')),
        language text,
        vtt text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (upload_id, version)
      )`);
    await q.query(`
      CREATE TABLE collection_interviews (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        proof_item_id text REFERENCES proof_items(id),
        person_ref text,
        email text,
        questions jsonb NOT NULL,
        state text NOT NULL CHECK (state IN ('open', 'finished')),
        created_by text NOT NULL,
        expires_at timestamptz NOT NULL,
        finished_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX collection_interviews_product_idx ON collection_interviews (product_id, created_at)`);
    await q.query(`
      CREATE TABLE collection_interview_answers (
        interview_id text NOT NULL REFERENCES collection_interviews(id) ON DELETE CASCADE,
        question_id text NOT NULL,
        text text,
        media_id text,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (interview_id, question_id)
      )`);
    await q.query(`
      CREATE TABLE collection_interview_uploads (
        id text PRIMARY KEY,
        interview_id text NOT NULL REFERENCES collection_interviews(id) ON DELETE CASCADE,
        question_id text NOT NULL,
        size bigint NOT NULL,
        sha256 text NOT NULL,
        status text NOT NULL CHECK (status IN ('open', 'complete')),
        media_id text,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX collection_interview_uploads_interview_idx ON collection_interview_uploads (interview_id)`);
    await q.query(`ALTER TABLE collection_secrets ADD COLUMN interview_id text REFERENCES collection_interviews(id) ON DELETE CASCADE`);
    await q.query(`ALTER TABLE collection_secrets DROP CONSTRAINT collection_secrets_kind_check`);
    await q.query(`ALTER TABLE collection_secrets ADD CONSTRAINT collection_secrets_kind_check
      CHECK (kind IN ('draft_session', 'continuation', 'control', 'upload', 'interview'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM collection_secrets WHERE kind = 'interview' OR interview_id IS NOT NULL`);
    await q.query(`ALTER TABLE collection_secrets DROP CONSTRAINT collection_secrets_kind_check`);
    await q.query(`ALTER TABLE collection_secrets ADD CONSTRAINT collection_secrets_kind_check
      CHECK (kind IN ('draft_session', 'continuation', 'control', 'upload'))`);
    await q.query(`ALTER TABLE collection_secrets DROP COLUMN interview_id`);
    for (const table of [
      'collection_interview_uploads', 'collection_interview_answers', 'collection_interviews', 'collection_caption_versions', 'collection_caption_tracks',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
