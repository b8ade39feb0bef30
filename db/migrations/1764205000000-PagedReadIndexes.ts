import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every filtered page a user reads gets an index that starts with its tenant and its filter and ends with
 * the page order, so a page costs the same at 1,000 rows as at 1,000,000: without them PostgreSQL walks the
 * newest-first index and throws away every row of the common values to find 50 of a rare one
 * (test/platform/paged-reads-at-scale.test.ts explains each read over 100,000 rows).
 */
export class PagedReadIndexes1764205000000 implements MigrationInterface {
  name = 'PagedReadIndexes1764205000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX signals_product_category_created_idx ON signals (product_id, category, created_at DESC, id DESC)');
    await q.query('CREATE INDEX threads_product_state_created_idx ON threads (product_id, state, created_at DESC, id DESC)');
    await q.query('CREATE INDEX threads_product_owner_created_idx ON threads (product_id, owner_id, created_at DESC, id DESC)');
    // `owner=unassigned` is `owner_id IS NULL`, which the planner does not treat as an equality: the index above would
    // find those rows but not in page order, so they get a partial index of their own.
    await q.query('CREATE INDEX threads_product_unassigned_created_idx ON threads (product_id, created_at DESC, id DESC) WHERE owner_id IS NULL');
    await q.query('CREATE INDEX proof_items_product_status_created_idx ON proof_items (product_id, status, created_at DESC, id DESC)');
    await q.query('CREATE INDEX proof_events_product_type_created_idx ON proof_events (product_id, event_type, created_at, id)');
    await q.query('CREATE INDEX webhook_deliveries_org_status_created_idx ON webhook_deliveries (organization_id, status, created_at DESC, id DESC)');
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of [
      'signals_product_category_created_idx', 'threads_product_state_created_idx', 'threads_product_owner_created_idx',
      'threads_product_unassigned_created_idx',
      'proof_items_product_status_created_idx', 'proof_events_product_type_created_idx', 'webhook_deliveries_org_status_created_idx',
    ]) await q.query(`DROP INDEX ${index}`);
  }
}
