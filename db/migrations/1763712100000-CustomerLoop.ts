import { MigrationInterface, QueryRunner } from 'typeorm';

export class CustomerLoop1763712100000 implements MigrationInterface {
  name = 'CustomerLoop1763712100000';

  // End users are named by the integrator (endUserId) and live inside one product, so their key is
  // (product_id, end_user_id) and every other table carries the product to keep tenants apart.
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE end_users (
        product_id text NOT NULL REFERENCES products(id),
        end_user_id text NOT NULL,
        organization_id text NOT NULL REFERENCES organizations(id),
        email text,
        name text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (product_id, end_user_id)
      )`);
    await q.query(`
      CREATE TABLE threads (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        end_user_id text NOT NULL,
        subject text NOT NULL,
        state text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'pending', 'resolved', 'closed')),
        owner_id text REFERENCES teammates(id),
        next_update_at timestamptz(3),
        sla_escalated_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX threads_product_created_idx ON threads (product_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX threads_product_user_idx ON threads (product_id, end_user_id)`);
    await q.query(`
      CREATE TABLE thread_messages (
        id text PRIMARY KEY,
        thread_id text NOT NULL REFERENCES threads(id),
        author_type text NOT NULL CHECK (author_type IN ('end_user', 'teammate')),
        author_id text NOT NULL,
        visibility text NOT NULL CHECK (visibility IN ('customer', 'internal')),
        body text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX thread_messages_thread_idx ON thread_messages (thread_id, created_at, id)`);
    // The thread is inserted after the signal in the intake transaction (the signal's unique key
    // decides replays first), so the reference is checked at commit.
    await q.query(`
      CREATE TABLE signals (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        thread_id text NOT NULL REFERENCES threads(id) DEFERRABLE INITIALLY DEFERRED,
        end_user_id text NOT NULL,
        category text NOT NULL CHECK (category IN ('support', 'bug', 'feature', 'ux', 'review')),
        title text NOT NULL,
        body text NOT NULL,
        context jsonb,
        idempotency_key text NOT NULL,
        urgency text NOT NULL DEFAULT 'unknown',
        sentiment text,
        summary text,
        candidate_feature_ids text[] NOT NULL DEFAULT '{}',
        analysis_state text NOT NULL CHECK (analysis_state IN ('pending', 'analyzing', 'done', 'failed', 'waiting')),
        analysis_error text,
        analysis_queued_at timestamptz,
        over_allowance boolean NOT NULL DEFAULT false,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        UNIQUE (product_id, idempotency_key)
      )`);
    await q.query(`CREATE INDEX signals_product_created_idx ON signals (product_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX signals_product_user_idx ON signals (product_id, end_user_id)`);
    await q.query(`CREATE INDEX signals_analysis_idx ON signals (created_at, id) WHERE analysis_queued_at IS NULL AND analysis_state IN ('pending', 'waiting')`);
    await q.query(`
      CREATE TABLE features (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        title text NOT NULL,
        problem text NOT NULL,
        state text NOT NULL CHECK (state IN ('discovery', 'planned', 'building', 'released', 'declined')),
        public_board boolean NOT NULL DEFAULT false,
        score double precision NOT NULL DEFAULT 0,
        score_breakdown jsonb NOT NULL DEFAULT '{}',
        vote_count integer NOT NULL DEFAULT 0,
        follower_count integer NOT NULL DEFAULT 0,
        signal_count integer NOT NULL DEFAULT 0,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX features_product_score_idx ON features (product_id, score DESC, id)`);
    await q.query(`
      CREATE TABLE feature_signal_links (
        feature_id text NOT NULL REFERENCES features(id),
        signal_id text NOT NULL REFERENCES signals(id),
        linked_by text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (feature_id, signal_id)
      )`);
    await q.query(`CREATE INDEX feature_signal_links_signal_idx ON feature_signal_links (signal_id)`);
    for (const table of ['feature_votes', 'feature_follows']) {
      await q.query(`
        CREATE TABLE ${table} (
          feature_id text NOT NULL REFERENCES features(id),
          product_id text NOT NULL REFERENCES products(id),
          end_user_id text NOT NULL,
          created_at timestamptz(3) NOT NULL DEFAULT now(),
          PRIMARY KEY (feature_id, end_user_id)
        )`);
      await q.query(`CREATE INDEX ${table}_user_idx ON ${table} (product_id, end_user_id)`);
    }
    await q.query(`
      CREATE TABLE releases (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        title text NOT NULL,
        feature_ids text[] NOT NULL,
        published_by text NOT NULL REFERENCES teammates(id),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE release_receipts (
        release_id text NOT NULL REFERENCES releases(id),
        product_id text NOT NULL REFERENCES products(id),
        end_user_id text NOT NULL,
        fixed boolean NOT NULL,
        comment text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (release_id, end_user_id)
      )`);
    await q.query(`
      CREATE TABLE inbox_items (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        end_user_id text NOT NULL,
        thread_id text REFERENCES threads(id),
        release_id text REFERENCES releases(id),
        subject text NOT NULL,
        preview text NOT NULL,
        read_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX inbox_items_user_idx ON inbox_items (product_id, end_user_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX inbox_items_unread_idx ON inbox_items (product_id, end_user_id) WHERE read_at IS NULL`);
    // One row per organization and period ('day:2026-11-21', 'month:2026-11', 'analysis:2026-11'):
    // intake and the analysis relay count against the allowance and ceiling without scanning signals.
    await q.query(`
      CREATE TABLE intake_counters (
        organization_id text NOT NULL REFERENCES organizations(id),
        period text NOT NULL,
        count integer NOT NULL,
        PRIMARY KEY (organization_id, period)
      )`);
    // Per-workspace overrides of the configured allowance and ceiling (null: the configured default).
    await q.query(`
      CREATE TABLE intake_limits (
        organization_id text PRIMARY KEY REFERENCES organizations(id),
        monthly_signal_allowance integer CHECK (monthly_signal_allowance >= 0),
        daily_safety_ceiling integer CHECK (daily_safety_ceiling >= 0)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'intake_limits', 'intake_counters', 'inbox_items', 'release_receipts', 'releases', 'feature_follows',
      'feature_votes', 'feature_signal_links', 'features', 'signals', 'thread_messages', 'threads', 'end_users',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
