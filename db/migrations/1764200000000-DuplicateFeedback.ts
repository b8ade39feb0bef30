import { MigrationInterface, QueryRunner } from 'typeorm';

const SIGNAL_VECTOR = `setweight(to_tsvector('english'::regconfig, title), 'A') || setweight(to_tsvector('english'::regconfig, left(body, 4000)), 'B')`;
const FEATURE_VECTOR = `setweight(to_tsvector('english'::regconfig, title), 'A') || setweight(to_tsvector('english'::regconfig, left(problem, 4000)), 'B')`;

export class DuplicateFeedback1764200000000 implements MigrationInterface {
  name = 'DuplicateFeedback1764200000000';

  async up(q: QueryRunner): Promise<void> {
    // pg_trgm ships with PostgreSQL's contrib (the embedded server and the Debian and Docker images have it),
    // but a managed server may refuse it: then similarity runs on full-text search alone (docs/customer-loop.md).
    await q.query(`
      DO $$ BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
      EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm unavailable (%): duplicate detection uses full-text search only', SQLERRM;
      END $$`);
    // Title weighs A, the body B; the body's first 4000 characters are enough to recognise a repeat.
    await q.query(`ALTER TABLE signals ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (${SIGNAL_VECTOR}) STORED`);
    await q.query(`ALTER TABLE features ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (${FEATURE_VECTOR}) STORED`);
    // Intake adds to a GIN index's pending list, which every search reads through until it is merged:
    // a small list keeps a search fast at the price of more frequent merges on intake.
    await q.query('CREATE INDEX signals_search_idx ON signals USING gin (search_vector) WITH (gin_pending_list_limit = 256)');
    await q.query('CREATE INDEX features_search_idx ON features USING gin (search_vector)');
    // The team's thread read finds the thread's signal to suggest its duplicate.
    await q.query('CREATE INDEX signals_thread_idx ON signals (thread_id)');
    const [{ trgm }]: Array<{ trgm: boolean }> = await q.query(`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS trgm`);
    if (trgm) {
      await q.query('CREATE INDEX signals_title_trgm_idx ON signals USING gin (title gin_trgm_ops) WITH (gin_pending_list_limit = 256)');
      await q.query('CREATE INDEX features_title_trgm_idx ON features USING gin (title gin_trgm_ops)');
    }

    await q.query(`
      ALTER TABLE features
        ADD COLUMN merged_into text REFERENCES features(id),
        ADD COLUMN merged_at timestamptz(3),
        ADD COLUMN merged_by text`);
    await q.query('CREATE INDEX features_merged_into_idx ON features (merged_into) WHERE merged_into IS NOT NULL');
    // What a merge moved, so that an unmerge puts back exactly that: each vote, follow and link of the merged
    // feature as it was, and whether the surviving feature gained it (it may already have had it).
    await q.query(`
      CREATE TABLE feature_merge_items (
        feature_id text NOT NULL REFERENCES features(id),
        kind text NOT NULL CHECK (kind IN ('vote', 'follow', 'link')),
        ref text NOT NULL,
        linked_by text,
        created_at timestamptz(3) NOT NULL,
        added_to_target boolean NOT NULL,
        PRIMARY KEY (feature_id, kind, ref)
      )`);
    await q.query(`
      CREATE TABLE feature_not_duplicates (
        product_id text NOT NULL REFERENCES products(id),
        feature_a text NOT NULL REFERENCES features(id),
        feature_b text NOT NULL REFERENCES features(id),
        created_by text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (feature_a, feature_b),
        CHECK (feature_a < feature_b)
      )`);
    await q.query('CREATE INDEX feature_not_duplicates_b_idx ON feature_not_duplicates (feature_b)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE feature_not_duplicates');
    await q.query('DROP TABLE feature_merge_items');
    await q.query('ALTER TABLE features DROP COLUMN merged_into, DROP COLUMN merged_at, DROP COLUMN merged_by');
    await q.query('DROP INDEX IF EXISTS signals_title_trgm_idx');
    await q.query('DROP INDEX IF EXISTS features_title_trgm_idx');
    await q.query('DROP INDEX signals_thread_idx');
    await q.query('ALTER TABLE signals DROP COLUMN search_vector');
    await q.query('ALTER TABLE features DROP COLUMN search_vector');
  }
}
