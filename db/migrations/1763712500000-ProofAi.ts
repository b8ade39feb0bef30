import { MigrationInterface, QueryRunner } from 'typeorm';

export class ProofAi1763712500000 implements MigrationInterface {
  name = 'ProofAi1763712500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE proof_ai_operations (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        operation text NOT NULL CHECK (operation IN ('summarize', 'ask_draft', 'case_study')),
        status text NOT NULL CHECK (status IN ('running', 'succeeded', 'discarded', 'failed')),
        program jsonb NOT NULL,
        model jsonb,
        subject jsonb NOT NULL,
        input jsonb NOT NULL,
        result jsonb,
        failure jsonb,
        budget_period text,
        created_by jsonb NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      )`);
    await q.query(`CREATE INDEX proof_ai_operations_org_created_idx ON proof_ai_operations (organization_id, created_at)`);
    await q.query(`ALTER TABLE intake_limits ADD COLUMN ai_monthly_allowance integer`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE intake_limits DROP COLUMN ai_monthly_allowance`);
    await q.query(`DROP TABLE proof_ai_operations`);
  }
}
