import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The console lists a workspace's placements and Rooms approvals across its products (docs/platform.md#the-console):
 * each read gets an index that starts with the organization (and the approvals' status filter) and ends with the page order.
 */
export class ConsoleWorkspaceReads1764207100000 implements MigrationInterface {
  name = 'ConsoleWorkspaceReads1764207100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX proof_placements_org_created_idx ON proof_placements (organization_id, created_at DESC, id DESC)');
    await q.query('CREATE INDEX room_approvals_org_status_created_idx ON room_approvals (organization_id, status, created_at DESC, id DESC)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX room_approvals_org_status_created_idx');
    await q.query('DROP INDEX proof_placements_org_created_idx');
  }
}
