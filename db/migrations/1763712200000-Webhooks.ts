import { MigrationInterface, QueryRunner } from 'typeorm';

export class Webhooks1763712200000 implements MigrationInterface {
  name = 'Webhooks1763712200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_endpoints (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        url text NOT NULL,
        description text NOT NULL DEFAULT '',
        subscriptions text[] NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        secret text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        deleted_at timestamptz(3)
      )`);
    await q.query(`CREATE INDEX webhook_endpoints_org_idx ON webhook_endpoints (organization_id) WHERE deleted_at IS NULL`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        endpoint_id text NOT NULL REFERENCES webhook_endpoints(id),
        product_id text,
        event_id text NOT NULL,
        event_type text NOT NULL,
        payload text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempt_count integer NOT NULL DEFAULT 0,
        last_error text,
        replay_of_id text REFERENCES webhook_deliveries(id),
        workflow_started boolean NOT NULL DEFAULT false,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        completed_at timestamptz(3)
      )`);
    // One original delivery per (event, endpoint): a publisher sweep that runs twice sends nothing twice.
    await q.query(`CREATE UNIQUE INDEX webhook_deliveries_original_idx ON webhook_deliveries (event_id, endpoint_id) WHERE replay_of_id IS NULL`);
    await q.query(`CREATE INDEX webhook_deliveries_org_created_idx ON webhook_deliveries (organization_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX webhook_deliveries_unstarted_idx ON webhook_deliveries (created_at) WHERE NOT workflow_started`);
    await q.query(`
      CREATE TABLE webhook_attempts (
        delivery_id text NOT NULL REFERENCES webhook_deliveries(id),
        attempt integer NOT NULL,
        started_at timestamptz(3) NOT NULL,
        duration_ms integer NOT NULL,
        status_code integer,
        error text,
        response_excerpt text,
        PRIMARY KEY (delivery_id, attempt)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE webhook_attempts');
    await q.query('DROP TABLE webhook_deliveries');
    await q.query('DROP TABLE webhook_endpoints');
  }
}
