import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The console's Stories view lists a workspace's proof items and generated assets across its products
 * (docs/platform.md#the-console): each read gets an index that starts with the organization and ends with the page order.
 */
export class ConsoleStoriesReads1764213000000 implements MigrationInterface {
  name = 'ConsoleStoriesReads1764213000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX proof_items_org_created_idx ON proof_items (organization_id, created_at DESC, id DESC)');
    await q.query('CREATE INDEX proof_assets_org_state_created_idx ON proof_assets (organization_id, approval_state, created_at DESC, id DESC)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX proof_assets_org_state_created_idx');
    await q.query('DROP INDEX proof_items_org_created_idx');
  }
}
