import { MigrationInterface, QueryRunner } from 'typeorm';

export class Hardening1763712700000 implements MigrationInterface {
  name = 'Hardening1763712700000';

  async up(q: QueryRunner): Promise<void> {
    // Workflow starts and signals a committed change needs, written in the change's transaction.
    await q.query(`
      CREATE TABLE workflow_commands (
        seq bigserial PRIMARY KEY,
        ordering_key text NOT NULL,
        command jsonb NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        claimed_until timestamptz,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        processed_at timestamptz
      )`);
    await q.query(`CREATE INDEX workflow_commands_pending_idx ON workflow_commands (ordering_key, seq) WHERE processed_at IS NULL`);
    await q.query(`CREATE INDEX workflow_commands_processed_idx ON workflow_commands (processed_at) WHERE processed_at IS NOT NULL`);
    // Relays claim with a lease committed at once, and call Temporal outside any transaction.
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN dispatch_claimed_until timestamptz`);
    await q.query(`ALTER TABLE signals ADD COLUMN analysis_claimed_until timestamptz, ADD COLUMN analysis_counted_period text`);
    // Foreign keys the code filters by.
    await q.query(`CREATE INDEX proof_placement_items_item_idx ON proof_placement_items (proof_item_id)`);
    await q.query(`CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX outbox_events_processed_idx ON outbox_events (processed_at) WHERE processed_at IS NOT NULL`);
    await q.query(`CREATE INDEX teammate_sessions_expires_idx ON teammate_sessions (expires_at)`);
    // A workflow step that failed for good, kept for an operator instead of only in Temporal's history.
    await q.query(`
      CREATE TABLE workflow_failures (
        id bigserial PRIMARY KEY,
        workflow_id text NOT NULL,
        run_id text NOT NULL,
        workflow_type text NOT NULL,
        step text NOT NULL,
        error text NOT NULL,
        failed_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (run_id, step)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE workflow_failures`);
    await q.query(`DROP INDEX teammate_sessions_expires_idx`);
    await q.query(`DROP INDEX outbox_events_processed_idx`);
    await q.query(`DROP INDEX webhook_deliveries_endpoint_idx`);
    await q.query(`DROP INDEX proof_placement_items_item_idx`);
    await q.query(`ALTER TABLE signals DROP COLUMN analysis_claimed_until, DROP COLUMN analysis_counted_period`);
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN dispatch_claimed_until`);
    await q.query(`DROP TABLE workflow_commands`);
  }
}
