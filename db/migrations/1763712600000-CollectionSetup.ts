import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Collection setup: consent templates, questions and flows with their immutable versions, custom
 * domains, welcome videos, personal requests and their deliveries, ask candidates (opportunities),
 * routing records and corrections. Versions are never updated once written.
 */
export class CollectionSetup1763712600000 implements MigrationInterface {
  name = 'CollectionSetup1763712600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE consent_templates (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        name text NOT NULL,
        latest_version integer NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (product_id, name)
      )`);
    await q.query(`
      CREATE TABLE consent_template_versions (
        id text PRIMARY KEY,
        template_id text NOT NULL REFERENCES consent_templates(id),
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        version integer NOT NULL CHECK (version >= 1),
        name text NOT NULL,
        wording text NOT NULL,
        wording_hash text NOT NULL,
        terms jsonb NOT NULL,
        published_by text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        UNIQUE (template_id, version)
      )`);
    await q.query(`CREATE INDEX consent_template_versions_org_idx ON consent_template_versions (organization_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE collection_questions (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        state text NOT NULL CHECK (state IN ('active', 'archived')),
        latest_version integer NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX collection_questions_org_idx ON collection_questions (organization_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE collection_question_versions (
        id text PRIMARY KEY,
        question_id text NOT NULL REFERENCES collection_questions(id),
        version integer NOT NULL CHECK (version >= 1),
        text text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('short_text', 'long_text', 'choice', 'yes_no')),
        help_text text,
        options jsonb,
        created_by text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        UNIQUE (question_id, version)
      )`);
    await q.query(`
      CREATE TABLE collection_flows (
        id text PRIMARY KEY,
        public_id text NOT NULL UNIQUE,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        name text NOT NULL,
        state text NOT NULL CHECK (state IN ('draft', 'live', 'paused', 'archived')),
        draft_definition jsonb NOT NULL,
        draft_revision integer NOT NULL,
        live_version_id text,
        incentive jsonb NOT NULL DEFAULT '{"offered": false}',
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX collection_flows_org_idx ON collection_flows (organization_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE collection_flow_versions (
        id text PRIMARY KEY,
        flow_id text NOT NULL REFERENCES collection_flows(id),
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        version_number integer NOT NULL CHECK (version_number >= 1),
        definition jsonb NOT NULL,
        incentive jsonb NOT NULL,
        content_hash text NOT NULL,
        published_by text,
        published_at timestamptz(3) NOT NULL DEFAULT now(),
        UNIQUE (flow_id, version_number)
      )`);
    await q.query(`ALTER TABLE collection_flows ADD CONSTRAINT collection_flows_live_version_fk FOREIGN KEY (live_version_id) REFERENCES collection_flow_versions(id)`);
    await q.query(`
      CREATE TABLE collection_domains (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        flow_id text NOT NULL REFERENCES collection_flows(id),
        hostname text NOT NULL UNIQUE,
        status text NOT NULL CHECK (status IN ('pending_verification', 'verified', 'failed')),
        verification_token text NOT NULL,
        last_checked_at timestamptz,
        verified_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE collection_welcome_videos (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        flow_id text NOT NULL REFERENCES collection_flows(id),
        upload_session_id text,
        media_id text,
        state text NOT NULL CHECK (state IN ('uploading', 'assembling', 'screening', 'passed', 'held', 'cleared', 'blocked', 'removed')),
        size bigint NOT NULL,
        sha256 text NOT NULL,
        reviewed_by text,
        reviewed_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE proof_requests (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        flow_id text NOT NULL REFERENCES collection_flows(id),
        flow_version_id text NOT NULL REFERENCES collection_flow_versions(id),
        channel text NOT NULL CHECK (channel IN ('link', 'email', 'in_app', 'room', 'support', 'survey', 'api')),
        recipient jsonb NOT NULL,
        recipient_id text,
        message text,
        expires_in_days integer NOT NULL,
        status text NOT NULL CHECK (status IN ('draft', 'sent', 'reminded', 'responded', 'cancelled', 'opted_out', 'expired')),
        link_token_hash text UNIQUE,
        remind_after_days integer,
        sent_at timestamptz,
        reminded_at timestamptz,
        expires_at timestamptz,
        responded_at timestamptz,
        closed_at timestamptz,
        opportunity_id text,
        bulk_id text,
        created_by jsonb NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX proof_requests_org_idx ON proof_requests (organization_id, created_at DESC, id DESC)`);
    // Links the service mints for its own messages (the e-mail and its reminder), besides the one
    // returned when the request was made (link_token_hash): every one opens the same request.
    await q.query(`
      CREATE TABLE proof_request_tokens (
        digest text PRIMARY KEY,
        request_id text NOT NULL REFERENCES proof_requests(id),
        source text NOT NULL CHECK (source IN ('initial', 'reminder')),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    // One row per message the service delivers for a request: the reminder can be delivered once only.
    await q.query(`
      CREATE TABLE proof_request_deliveries (
        request_id text NOT NULL REFERENCES proof_requests(id),
        kind text NOT NULL CHECK (kind IN ('initial', 'reminder')),
        channel text NOT NULL,
        delivered_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (request_id, kind)
      )`);
    await q.query(`
      CREATE TABLE proof_opportunities (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        trigger text NOT NULL,
        person_ref text,
        end_user_id text,
        moment_id text,
        value_event_id text,
        strength integer,
        state text NOT NULL CHECK (state IN ('proposed', 'accepted', 'dismissed', 'expired')),
        request_id text REFERENCES proof_requests(id),
        decided_by text,
        decided_at timestamptz,
        expires_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX proof_opportunities_org_idx ON proof_opportunities (organization_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE proof_routings (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        proof_item_id text NOT NULL REFERENCES proof_items(id),
        flow_id text REFERENCES collection_flows(id),
        flow_version_id text REFERENCES collection_flow_versions(id),
        request_id text REFERENCES proof_requests(id),
        scale text NOT NULL CHECK (scale IN ('nps', 'five_star')),
        score integer NOT NULL,
        band text NOT NULL,
        follow_up text NOT NULL,
        state text NOT NULL CHECK (state IN ('new', 'in_progress', 'done')),
        room_id text,
        note text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX proof_routings_org_idx ON proof_routings (organization_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE proof_corrections (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        product_id text NOT NULL REFERENCES products(id),
        proof_item_id text NOT NULL REFERENCES proof_items(id),
        version_id text REFERENCES proof_versions(id),
        message text NOT NULL,
        status text NOT NULL CHECK (status IN ('open', 'closed')),
        note text,
        closed_by text,
        closed_at timestamptz,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX proof_corrections_org_idx ON proof_corrections (organization_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX proof_corrections_item_idx ON proof_corrections (proof_item_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE collection_flows DROP CONSTRAINT collection_flows_live_version_fk`);
    for (const table of [
      'proof_corrections', 'proof_routings', 'proof_opportunities', 'proof_request_deliveries', 'proof_request_tokens', 'proof_requests',
      'collection_welcome_videos', 'collection_domains', 'collection_flow_versions', 'collection_flows',
      'collection_question_versions', 'collection_questions', 'consent_template_versions', 'consent_templates',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
