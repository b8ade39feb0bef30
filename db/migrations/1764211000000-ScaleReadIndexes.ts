import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The paged reads PagedReadIndexes left growing with the workspace (test/platform/paged-reads-at-scale.test.ts):
 * - one end user's signals and threads, newest first: the (product, end user) indexes do not keep the page order,
 *   so a heavy end user's page walked the newest-first index and threw away everyone else's rows; they now end
 *   with the page order;
 * - the sources search: a word few sources hold was looked for by reading the product's sources newest first
 *   until 50 matched, i.e. all of them; trigram indexes find those few at once (a common word still reads newest
 *   first and stops at the page). A small pending list (256 kB, as the signals' search indexes have) bounds what
 *   every search reads of entries not yet merged.
 */
export class ScaleReadIndexes1764211000000 implements MigrationInterface {
  name = 'ScaleReadIndexes1764211000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX signals_product_user_created_idx ON signals (product_id, end_user_id, created_at DESC, id DESC)');
    await q.query('DROP INDEX signals_product_user_idx');
    await q.query('CREATE INDEX threads_product_user_created_idx ON threads (product_id, end_user_id, created_at DESC, id DESC)');
    await q.query('DROP INDEX threads_product_user_idx');
    await q.query(`CREATE INDEX proof_sources_text_trgm_idx ON proof_sources USING gin ((coalesce(captured_text, '')) gin_trgm_ops) WITH (gin_pending_list_limit = 256)`);
    await q.query(`CREATE INDEX proof_sources_title_trgm_idx ON proof_sources USING gin ((coalesce(title, '')) gin_trgm_ops) WITH (gin_pending_list_limit = 256)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX proof_sources_title_trgm_idx');
    await q.query('DROP INDEX proof_sources_text_trgm_idx');
    await q.query('CREATE INDEX threads_product_user_idx ON threads (product_id, end_user_id)');
    await q.query('DROP INDEX threads_product_user_created_idx');
    await q.query('CREATE INDEX signals_product_user_idx ON signals (product_id, end_user_id)');
    await q.query('DROP INDEX signals_product_user_created_idx');
  }
}
