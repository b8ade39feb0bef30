import { MigrationInterface, QueryRunner } from 'typeorm';

const TENANT = `organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id)`;

export class Integrations1763712800000 implements MigrationInterface {
  name = 'Integrations1763712800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE proof_value_events (
        id text PRIMARY KEY,
        ${TENANT},
        event_id text NOT NULL,
        type text NOT NULL CHECK (type IN ('milestone', 'resolved_ticket', 'score', 'shipped_feature', 'purchase', 'plan_upgrade')),
        occurred_at timestamptz NOT NULL,
        person_ref text,
        end_user_id text,
        person_key text NOT NULL,
        properties jsonb NOT NULL,
        origin_type text NOT NULL CHECK (origin_type IN ('api', 'hook', 'payment')),
        origin_id text,
        strength integer NOT NULL,
        moment_id text,
        opportunity_id text,
        suppressed_reason text,
        created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp()
      )`);
    // Once per eventId and product: concurrent duplicates meet this constraint, so one insert wins.
    await q.query(`CREATE UNIQUE INDEX proof_value_events_event_idx ON proof_value_events (product_id, event_id)`);
    await q.query(`CREATE INDEX proof_value_events_person_idx ON proof_value_events (product_id, person_key, occurred_at)`);
    await q.query(`
      CREATE TABLE proof_moments (
        id text PRIMARY KEY,
        ${TENANT},
        value_event_id text NOT NULL UNIQUE REFERENCES proof_value_events(id),
        type text NOT NULL,
        strength integer NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    // The candidates table is shared with collection setup (its accept/dismiss route); value events add
    // the person key, the moment and value event they come from, and a bounded lifetime.
    await q.query(`ALTER TABLE proof_opportunities ADD COLUMN person_key text`);
    await q.query(`ALTER TABLE proof_opportunities ALTER COLUMN expires_at SET NOT NULL`);
    await q.query(`ALTER TABLE proof_opportunities ADD CONSTRAINT proof_opportunities_moment_fk FOREIGN KEY (moment_id) REFERENCES proof_moments(id)`);
    await q.query(`ALTER TABLE proof_opportunities ADD CONSTRAINT proof_opportunities_value_event_fk FOREIGN KEY (value_event_id) REFERENCES proof_value_events(id)`);
    await q.query(`CREATE UNIQUE INDEX proof_opportunities_moment_idx ON proof_opportunities (moment_id)`);
    await q.query(`CREATE INDEX proof_opportunities_product_idx ON proof_opportunities (product_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX proof_opportunities_person_idx ON proof_opportunities (product_id, person_key) WHERE state = 'proposed'`);
    // What the ask side records about a person: opt-out and the last request sent (suppression inputs).
    await q.query(`
      CREATE TABLE proof_contact_preferences (
        product_id text NOT NULL REFERENCES products(id),
        person_key text NOT NULL,
        opted_out_at timestamptz,
        last_request_sent_at timestamptz,
        PRIMARY KEY (product_id, person_key)
      )`);
    await q.query(`
      CREATE TABLE proof_hooks (
        id text PRIMARY KEY,
        ${TENANT},
        name text NOT NULL,
        source text NOT NULL CHECK (source IN ('zapier', 'make', 'n8n', 'zendesk', 'intercom', 'freshdesk', 'generic')),
        state text NOT NULL CHECK (state IN ('active', 'disabled')),
        token_digest text NOT NULL UNIQUE,
        token_prefix text NOT NULL,
        created_by text,
        last_used_at timestamptz,
        disabled_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX proof_hooks_org_idx ON proof_hooks (organization_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE proof_stripe_connections (
        id text PRIMARY KEY,
        ${TENANT},
        name text NOT NULL,
        state text NOT NULL CHECK (state IN ('active', 'disabled')),
        token_digest text NOT NULL UNIQUE,
        token_prefix text NOT NULL,
        signing_secret text,
        invoice_milestones integer[] NOT NULL,
        last_event_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX proof_stripe_connections_org_idx ON proof_stripe_connections (organization_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE proof_processor_events (
        connection_id text NOT NULL REFERENCES proof_stripe_connections(id),
        processor_event_id text NOT NULL,
        type text NOT NULL,
        value_event_id text REFERENCES proof_value_events(id),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (connection_id, processor_event_id)
      )`);
    await q.query(`
      CREATE TABLE proof_paid_invoices (
        connection_id text NOT NULL REFERENCES proof_stripe_connections(id),
        customer text NOT NULL,
        invoice_id text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (connection_id, customer, invoice_id)
      )`);
    await q.query(`
      CREATE TABLE proof_rewards (
        id text PRIMARY KEY,
        ${TENANT},
        proof_item_id text REFERENCES proof_items(id),
        person_ref text,
        end_user_id text,
        kind text NOT NULL CHECK (kind IN ('gift_card', 'account_credit', 'donation', 'feature_unlock')),
        description text NOT NULL,
        unlock_key text,
        state text NOT NULL CHECK (state IN ('pending', 'issued', 'unlock_pending', 'fulfilled', 'cancelled')),
        approved_at timestamptz,
        approved_by text,
        fulfilled_at timestamptz,
        cancelled_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        CHECK ((kind = 'feature_unlock') = (unlock_key IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX proof_rewards_org_idx ON proof_rewards (organization_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE proof_crm_deals (
        id text PRIMARY KEY,
        ${TENANT},
        format text NOT NULL CHECK (format IN ('generic', 'hubspot', 'salesforce')),
        external_id text NOT NULL,
        name text,
        stage text,
        status text NOT NULL CHECK (status IN ('open', 'won', 'lost')),
        amount numeric,
        currency text,
        close_date date,
        account_name text,
        account_domain text,
        contacts jsonb NOT NULL DEFAULT '[]',
        proof_item_ids text[] NOT NULL DEFAULT '{}',
        external_updated_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX proof_crm_deals_external_idx ON proof_crm_deals (product_id, format, external_id)`);
    await q.query(`CREATE INDEX proof_crm_deals_items_idx ON proof_crm_deals USING gin (proof_item_ids)`);
    await q.query(`
      CREATE TABLE proof_brand_mentions (
        id text PRIMARY KEY,
        ${TENANT},
        platform text NOT NULL,
        url text NOT NULL,
        author text,
        text text NOT NULL,
        rating numeric,
        published_at timestamptz,
        reuse text NOT NULL CHECK (reuse IN ('allowed_with_consent', 'blocked')),
        signal_id text,
        imported_item_id text REFERENCES proof_items(id),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX proof_brand_mentions_url_idx ON proof_brand_mentions (product_id, url)`);
    await q.query(`CREATE INDEX proof_brand_mentions_org_idx ON proof_brand_mentions (organization_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE proof_sources (
        id text PRIMARY KEY,
        ${TENANT},
        system text NOT NULL,
        external_id text NOT NULL,
        url text,
        kind text NOT NULL,
        captured_at timestamptz NOT NULL,
        captured_text text,
        title text,
        attribution jsonb,
        links jsonb NOT NULL,
        provenance jsonb NOT NULL,
        reuse text NOT NULL CHECK (reuse IN ('allowed_with_consent', 'internal_only', 'blocked')),
        reasons text[] NOT NULL DEFAULT '{}',
        proof_item_id text,
        created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE UNIQUE INDEX proof_sources_origin_idx ON proof_sources (product_id, system, external_id)`);
    await q.query(`CREATE INDEX proof_sources_product_idx ON proof_sources (product_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE proof_health_findings (
        id text PRIMARY KEY,
        ${TENANT},
        check_name text NOT NULL CHECK (check_name IN ('consent_expiring', 'placement_excluded_items', 'stream_failed')),
        subject_id text NOT NULL,
        day date NOT NULL,
        proof_item_id text,
        placement_id text,
        properties jsonb NOT NULL,
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        resolved_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    // At most one warning per check, subject and UTC day.
    await q.query(`CREATE UNIQUE INDEX proof_health_findings_once_idx ON proof_health_findings (product_id, check_name, subject_id, day)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'proof_health_findings', 'proof_sources', 'proof_brand_mentions', 'proof_crm_deals', 'proof_rewards',
      'proof_paid_invoices', 'proof_processor_events', 'proof_stripe_connections', 'proof_hooks',
      'proof_contact_preferences',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
    await q.query(`DROP INDEX proof_opportunities_product_idx`);
    await q.query(`DROP INDEX proof_opportunities_person_idx`);
    await q.query(`DROP INDEX proof_opportunities_moment_idx`);
    await q.query(`ALTER TABLE proof_opportunities DROP CONSTRAINT proof_opportunities_moment_fk`);
    await q.query(`ALTER TABLE proof_opportunities DROP CONSTRAINT proof_opportunities_value_event_fk`);
    await q.query(`ALTER TABLE proof_opportunities ALTER COLUMN expires_at DROP NOT NULL`);
    await q.query(`ALTER TABLE proof_opportunities DROP COLUMN person_key`);
    await q.query(`DROP TABLE proof_moments`);
    await q.query(`DROP TABLE proof_value_events`);
  }
}
