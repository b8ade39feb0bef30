import { MigrationInterface, QueryRunner } from 'typeorm';

export class NojsSubmissionKeys1764155000000 implements MigrationInterface {
  name = 'NojsSubmissionKeys1764155000000';

  async up(q: QueryRunner): Promise<void> {
    // The no-JavaScript form's submissionKey, claimed by one INSERT … ON CONFLICT: two identical posts at
    // once made two stories while the repeat check was a SELECT before the insert. A claim older than
    // 24 hours may be taken again (docs/collection.md#endpoints-customers); the maintenance round deletes those.
    await q.query(`
      CREATE TABLE collection_nojs_submissions (
        flow_id text NOT NULL REFERENCES collection_flows(id) ON DELETE CASCADE,
        submission_key text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (flow_id, submission_key)
      )`);
    await q.query('CREATE INDEX collection_nojs_submissions_created_idx ON collection_nojs_submissions (created_at)');
    // Keys sent in the last 24 hours keep refusing their repeats across the upgrade.
    await q.query(`
      INSERT INTO collection_nojs_submissions (flow_id, submission_key, created_at)
      SELECT d.flow_id, d.fields->>'submissionKey', max(d.created_at) FROM collection_drafts d JOIN collection_flows f ON f.id = d.flow_id
       WHERE d.source = 'nojs' AND d.fields ? 'submissionKey' AND d.created_at > now() - interval '24 hours'
       GROUP BY d.flow_id, d.fields->>'submissionKey'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE collection_nojs_submissions');
  }
}
