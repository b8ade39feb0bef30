import { MigrationInterface, QueryRunner } from 'typeorm';

// Every table a render's eligibility decision reads; each change bumps its organization's version.
const BY_ORGANIZATION = ['products', 'proof_items', 'proof_placements', 'proof_assets', 'proof_revocations'];
const BY_ITEM = ['proof_versions', 'consent_grants', 'proof_receipts', 'proof_placement_items'];

export class Performance1763712900000 implements MigrationInterface {
  name = 'Performance1763712900000';

  async up(q: QueryRunner): Promise<void> {
    // A cheap validator of "nothing a render decides from changed": bumped by triggers in the same
    // transaction as the change, so no code path can forget it and a render can never see it stale.
    await q.query(`
      CREATE TABLE proof_render_versions (
        organization_id text PRIMARY KEY,
        version bigint NOT NULL
      )`);
    await q.query(`
      CREATE FUNCTION bump_proof_render_version() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        org text;
        rec record;
      BEGIN
        IF TG_OP = 'DELETE' THEN rec := OLD; ELSE rec := NEW; END IF;
        IF TG_ARGV[0] = 'organization' THEN
          org := rec.organization_id;
        ELSE
          SELECT organization_id INTO org FROM proof_items WHERE id = rec.proof_item_id;
        END IF;
        IF org IS NOT NULL THEN
          INSERT INTO proof_render_versions AS v (organization_id, version) VALUES (org, 1)
          ON CONFLICT (organization_id) DO UPDATE SET version = v.version + 1;
        END IF;
        RETURN NULL;
      END $$`);
    for (const table of BY_ORGANIZATION) {
      await q.query(`CREATE TRIGGER ${table}_render_version AFTER INSERT OR UPDATE OR DELETE ON ${table}
        FOR EACH ROW EXECUTE FUNCTION bump_proof_render_version('organization')`);
    }
    for (const table of BY_ITEM) {
      await q.query(`CREATE TRIGGER ${table}_render_version AFTER INSERT OR UPDATE OR DELETE ON ${table}
        FOR EACH ROW EXECUTE FUNCTION bump_proof_render_version('item')`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [...BY_ORGANIZATION, ...BY_ITEM]) await q.query(`DROP TRIGGER ${table}_render_version ON ${table}`);
    await q.query('DROP FUNCTION bump_proof_render_version()');
    await q.query('DROP TABLE proof_render_versions');
  }
}
