import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A control link reaches either the story of its own submission (`story`, bound to that item) or all of
 * one person's stories in one product (`person`). Every control secret issued before was person-wide,
 * so it keeps that scope: old links work as they were issued. An inbox item may carry a person link
 * for its end user to redeem (the secret itself is minted then, and stored only as its hash).
 */
export class ControlLinkScopes1764111000000 implements MigrationInterface {
  name = 'ControlLinkScopes1764111000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE collection_secrets ADD COLUMN scope text CHECK (scope IN ('story', 'person'))`);
    await q.query(`ALTER TABLE collection_secrets ADD COLUMN proof_item_id text REFERENCES proof_items(id) ON DELETE CASCADE`);
    await q.query(`UPDATE collection_secrets SET scope = 'person' WHERE kind = 'control'`);
    await q.query(`ALTER TABLE collection_secrets ADD CONSTRAINT collection_secrets_control_scope_check
      CHECK ((kind = 'control') = (scope IS NOT NULL) AND (scope IS DISTINCT FROM 'story' OR proof_item_id IS NOT NULL))`);
    await q.query(`ALTER TABLE inbox_items ADD COLUMN control_person_ref text, ADD COLUMN control_expires_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE inbox_items DROP COLUMN control_person_ref, DROP COLUMN control_expires_at`);
    await q.query(`ALTER TABLE collection_secrets DROP CONSTRAINT collection_secrets_control_scope_check`);
    await q.query(`ALTER TABLE collection_secrets DROP COLUMN proof_item_id, DROP COLUMN scope`);
  }
}
